package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/internal/testshared"
	"github.com/cuasd/cuasd/sim"
)

// TestMLATReceiversOnNATS (issue 31): five receivers hear a Mode S-only
// aircraft (DF4 replies) with GPS timestamps, as in TestMLATEndToEnd, but
// only two of them push Beast to --beast-listen (configured by name).
// Three publish on the embedded NATS with a sensor user's credentials
// (--nats-users) and Cuas-Sensor-Position — two Beast batches straight
// to cuas.raw.adsb.{sensor}, one a single frame with its GPS time to the
// intake (cuas.in.adsb.{sensor}): two are configured nowhere and take
// part with the position they state; one is configured in the sensors
// block and states a position 3 km off, which loses to the
// configuration. The
// aircraft is located at its reference position; /v1/sensors shows each
// receiver's position and its source; a receiver whose header is
// malformed is a counted dead letter and takes no part; /readyz calls no
// receiver unheard.
func TestMLATReceiversOnNATS(t *testing.T) {
	five, pos, rows := mlatReference(t, "set_2.csv")
	modeS := rows[0]
	names := []string{"beast-in-127-0-0-2", "beast-in-127-0-0-3", "nats-cfg", "nats-a", "nats-b"}
	var cfg strings.Builder
	cfg.WriteString("sensors:\n")
	for i, id := range five[:3] {
		p := pos[id]
		fmt.Fprintf(&cfg, "  - {name: %s, lat: %v, lon: %v, alt: %v, clock: gps}\n", names[i], p.Lat, p.Lon, p.Height)
	}
	dir := t.TempDir()
	file, users := filepath.Join(dir, "cuasd.yaml"), filepath.Join(dir, "users.yaml")
	if err := os.WriteFile(file, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(users, []byte("- user: rx\n  password: correct-horse-battery\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base, natsURL, stop := startServeNATS(t, "--config", file, "--nats-users", users, "--beast-listen", "127.0.0.1:0?clock=gps")
	defer stop()
	nc, err := nats.Connect(natsURL, nats.UserInfo("rx", "correct-horse-battery"), nats.CustomInboxPrefix(bus.InboxPrefix("rx")))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stated := map[string]string{ // what each NATS receiver says in Cuas-Sensor-Position
		"nats-cfg":  fmt.Sprintf("%v,%v,%v", pos[five[2]].Lat+3000.0/111_320, pos[five[2]].Lon, pos[five[2]].Height),
		"nats-a":    fmt.Sprintf("%v,%v,%v", pos[five[3]].Lat, pos[five[3]].Lon, pos[five[3]].Height),
		"nats-b":    fmt.Sprintf(" %v, %v, %v", pos[five[4]].Lat, pos[five[4]].Lon, pos[five[4]].Height),
		"nats-bad":  "47.3N,8.5E,520m",
		"nats-none": "",
	}
	publish := func(sensor string, rec []byte) {
		msg := &nats.Msg{Subject: bus.RawSubject("adsb", sensor), Data: rec, Header: nats.Header{}}
		msg.Header.Set(bus.HeaderFraming, bus.FramingBeast)
		msg.Header.Set(bus.HeaderClock, "gps")
		if p := stated[sensor]; p != "" {
			msg.Header.Set(bus.HeaderSensorPosition, p)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := js.PublishMsg(ctx, msg); err != nil {
			t.Fatalf("%s: publish to cuas.raw as a sensor user: %v", sensor, err)
		}
	}
	_, ready := get(t, base+"/readyz")
	addr := regexp.MustCompile(`beast-listen (127\.0\.0\.1:[0-9]+)`).FindStringSubmatch(string(ready))
	if addr == nil {
		t.Fatalf("no beast listener in /readyz: %s", ready)
	}
	conns := map[int]net.Conn{}
	for i, id := range five[:2] {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(i+2))}}
		c, err := d.Dial("tcp", addr[1])
		if err != nil {
			t.Skipf("cannot connect from 127.0.0.%d (a loopback alias per receiver): %v", i+2, err)
		}
		defer c.Close()
		conns[id] = c
	}
	now := time.Now().UnixNano() - 2e9
	df4 := sim.ModeSAltitudeReply(0x3C0001, modeS.Baro/0.3048)
	for i, id := range modeS.Sensors {
		rec := beastBody(df4[:], now+modeS.NS[i]-modeS.NS[0])
		k := indexOf(five, id)
		switch {
		case k < 2:
			if _, err := conns[id].Write(beastRecord(df4[:], now+modeS.NS[i]-modeS.NS[0])); err != nil {
				t.Fatal(err)
			}
		case names[k] == "nats-b":
			intakeFrame(t, nc, names[k], df4[:], now+modeS.NS[i]-modeS.NS[0], stated[names[k]])
		default:
			publish(names[k], rec)
		}
	}
	// Two receivers no configuration names: one with a malformed position,
	// one with none; neither may take part.
	publish("nats-bad", beastBody(df4[:], now))
	publish("nats-none", beastBody(df4[:], now))

	m := waitTrack(t, base, "adsb:3C0001", func(tr mlatTrack) bool { return tr.PositionSource == "mlat" })
	d := gate.Distance(gate.Point{Lat: *m.Lat, Lon: *m.Lon}, gate.Point{Lat: modeS.Lat, Lon: modeS.Lon})
	t.Logf("Mode S-only aircraft %.0f m from its reference position; mlat %+v", d, *m.MLAT)
	if d > 300 || m.MLAT == nil || m.MLAT.Sensors != 5 {
		t.Errorf("Mode S-only aircraft %.0f m from its reference position (mlat %+v), want within 300 m from all 5 receivers", d, m.MLAT)
	}
	checkNATSReceivers(t, base, names, five, pos, stated)
	checkDeadPosition(t, base)
}

// intakeFrame sends one frame to the single-frame intake (cuas.in) as a
// GPS-timed SDR would: its UTC reception time in Cuas-Sensor-Ns with
// Cuas-Clock gps, and its position; the intake acknowledges it once
// stored.
func intakeFrame(t *testing.T, nc *nats.Conn, sensor string, frame []byte, utcNs int64, position string) {
	t.Helper()
	msg := &nats.Msg{Subject: bus.IntakeSubject("adsb", sensor), Data: frame, Header: nats.Header{}}
	msg.Header.Set(bus.HeaderSensorTime, strconv.FormatInt(utcNs, 10))
	msg.Header.Set(bus.HeaderClock, "gps")
	msg.Header.Set(bus.HeaderSensorPosition, position)
	r, err := nc.RequestMsg(msg, 5*time.Second)
	if err != nil || string(r.Data) != "+OK" {
		t.Fatalf("%s: intake request: %v %v", sensor, r, err)
	}
}

func indexOf(ids []int, id int) int {
	for i, v := range ids {
		if v == id {
			return i
		}
	}
	return -1
}

// beastBody is a FramingBeast batch of one Mode S record with a GPS
// timestamp (the wire record of beastRecord without sync and escapes).
func beastBody(frame []byte, utcNs int64) []byte {
	typ := byte(bus.BeastModeSShort)
	if len(frame) == 14 {
		typ = bus.BeastModeSLong
	}
	return bus.AppendBeast(nil, typ, gpsTimestamp(utcNs), 0x80, frame)
}

// checkNATSReceivers: /v1/sensors lists the configured receivers with
// their configured positions (nats-cfg's 3 km-off claim lost), the
// receivers on NATS with the positions they stated, and neither the
// malformed nor the silent one.
func checkNATSReceivers(t *testing.T, base string, names []string, five []int, pos map[int]testshared.MLATSensor, stated map[string]string) {
	t.Helper()
	var out struct {
		Sensors []struct {
			ID       string `json:"id"`
			Kind     string `json:"kind"`
			Clock    string `json:"clock"`
			Down     bool   `json:"down"`
			Position *struct {
				Lat    float64 `json:"lat"`
				Lon    float64 `json:"lon"`
				AltM   float64 `json:"alt_m"`
				Source string  `json:"source"`
			} `json:"position"`
			MLAT *struct {
				Receptions    int `json:"receptions"`
				PositionMoves int `json:"position_moves"`
			} `json:"mlat"`
		} `json:"sensors"`
	}
	var body []byte
	got := map[string]string{}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		_, body = get(t, base+"/v1/sensors")
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatal(err)
		}
		got = map[string]string{}
		for _, s := range out.Sensors {
			if s.Position != nil && s.MLAT != nil && s.MLAT.Receptions > 0 && !s.Down && s.Kind == "modes" && s.Clock == "gps" {
				got[s.ID] = fmt.Sprintf("%v,%v,%v %s", s.Position.Lat, s.Position.Lon, s.Position.AltM, s.Position.Source)
			}
		}
		if len(got) == len(names) {
			break
		}
	}
	want := map[string]string{}
	for i, n := range names {
		p := pos[five[i]]
		src := "configured"
		if i >= 3 {
			src = "reported"
		}
		want[n] = fmt.Sprintf("%v,%v,%v %s", p.Lat, p.Lon, p.Height, src)
	}
	for n, w := range want {
		if got[n] != w {
			t.Errorf("/v1/sensors %s: %q, want %q (it stated %q)", n, got[n], w, stated[n])
		}
	}
	if len(got) != len(want) || strings.Contains(string(body), "nats-bad") || strings.Contains(string(body), "nats-none") {
		t.Errorf("/v1/sensors lists %v; want exactly %v: %s", got, want, body)
	}
	_, ready := get(t, base+"/readyz")
	if strings.Contains(string(ready), "(modes)") {
		t.Errorf("/readyz calls a receiver that is heard down: %s", ready)
	}
}

// checkDeadPosition: the malformed header is counted as a rejected
// message with reason sensor_position.
func checkDeadPosition(t *testing.T, base string) {
	t.Helper()
	_, metrics := get(t, strings.TrimSuffix(base, "/api/cuas")+"/metrics")
	for _, want := range []string{
		`cuasd_frames_rejected_total{protocol="adsb",reason="sensor_position"} 1`,
		`cuasd_mlat_sensors{source="reported"} 2`,
		`cuasd_mlat_sensors{source="configured"} 3`,
		`cuasd_mlat_sensor_moves_total 0`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
