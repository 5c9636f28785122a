package main

import (
	"bytes"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
)

// startIntakeClient starts cuasd serve with its NATS listener (and
// extra flags), connects an anonymous sensor to it and returns the API
// base, the connection and pyModeS' identification frame (EZY85MH, ICAO
// 406B90); the test's cleanup stops both.
func startIntakeClient(t *testing.T, extra ...string) (base string, nc *nats.Conn, frame []byte) {
	t.Helper()
	base, natsURL, stop := startServeNATS(t, extra...)
	t.Cleanup(stop)
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	frame, _ = hex.DecodeString("8D406B902015A678D4D220AA4BDA")
	return base, nc, frame
}

// TestSingleFrameIntake: an anonymous sensor on the embedded NATS sends one
// ADS-B frame per request to cuas.in.adsb.{sensor}; each is answered +OK
// once stored, and the aircraft appears in /v1/tracks with its callsign.
func TestSingleFrameIntake(t *testing.T) {
	base, nc, frame := startIntakeClient(t)
	for i := 1; i <= 3; i++ {
		m := nats.NewMsg(bus.IntakeSubject("adsb", "sdr-script"))
		m.Data = frame
		m.Header.Set(bus.HeaderSeq, strconv.Itoa(i))
		reply, err := nc.RequestMsg(m, 5*time.Second)
		if err != nil || string(reply.Data) != "+OK" {
			t.Fatalf("frame %d: %v %q", i, err, msgText(reply))
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, body := get(t, base+"/v1/tracks/adsb:406B90")
		if resp.StatusCode == 200 && bytes.Contains(body, []byte(`"callsign":"EZY85MH"`)) && bytes.Contains(body, []byte(`"sdr-script"`)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no track from the intake: %d %s", resp.StatusCode, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func msgText(m *nats.Msg) string {
	if m == nil {
		return ""
	}
	return string(m.Data)
}

// TestIntakeSensorLimitFlags: --intake-sensor-bytes bounds one sensor's
// frames through the intake (issue 32): a frame larger than a second's
// budget is answered -ERR rate_limited, a small one +OK.
func TestIntakeSensorLimitFlags(t *testing.T) {
	_, nc, frame := startIntakeClient(t, "--intake-sensor-bytes", "100")
	for data, want := range map[string]string{string(frame): "+OK", string(make([]byte, 200)): "-ERR rate_limited: sensor sdr-script is over 100 bytes a second"} {
		reply, err := nc.Request(bus.IntakeSubject("mavlink", "sdr-script"), []byte(data), 5*time.Second)
		if err != nil || !strings.HasPrefix(string(reply.Data), want) {
			t.Errorf("%d bytes: %v %q, want %q", len(data), err, msgText(reply), want)
		}
	}
}

// TestRawSensorLimitFlags: --raw-sensor-rate bounds what the decoders
// take of one sensor publishing straight to cuas.raw (issue 32): of 100
// frames stored in one message, one second's worth (10) is decoded and 90
// are counted in cuasd_frames_rate_limited_total; another sensor's frame
// in the same instant is decoded.
func TestRawSensorLimitFlags(t *testing.T) {
	base, nc, frame := startIntakeClient(t, "--raw-sensor-rate", "10")
	publish := func(sensor string, n int) {
		t.Helper()
		var body []byte
		for range n {
			body = bus.AppendLP(body, frame)
		}
		m := nats.NewMsg(bus.RawSubject("adsb", sensor))
		m.Data = body
		m.Header.Set(bus.HeaderFraming, bus.FramingLP)
		reply, err := nc.RequestMsg(m, 5*time.Second)
		if err != nil || !bytes.Contains(reply.Data, []byte(`"seq"`)) {
			t.Fatalf("publish to CUAS_RAW: %v %q", err, msgText(reply))
		}
	}
	publish("flood", 100)
	publish("calm", 1)
	root := strings.TrimSuffix(base, "/api/cuas")
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, metrics := get(t, root+"/metrics")
		_, track := get(t, base+"/v1/tracks/adsb:406B90")
		if bytes.Contains(metrics, []byte(`cuasd_frames_rate_limited_total{protocol="adsb"} 90`+"\n")) && bytes.Contains(track, []byte(`"calm"`)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("want 90 frames rate limited and the calm sensor on the track:\n%s\n%s", grepLines(metrics, "rate_limited"), track)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// grepLines returns the lines of b that contain s.
func grepLines(b []byte, s string) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
