package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bluenviron/gomavlib/v3/pkg/dialect"
	"github.com/bluenviron/gomavlib/v3/pkg/dialects/ardupilotmega"
	gmframe "github.com/bluenviron/gomavlib/v3/pkg/frame"

	"github.com/cuasd/cuasd/decode/remoteid"
	"github.com/cuasd/cuasd/ingest/pcap"
	"github.com/cuasd/cuasd/internal/testshared"
)

// startServeNATS starts cuasd with its embedded NATS listening on an
// ephemeral port and returns the API base and the NATS URL.
func startServeNATS(t *testing.T, extra ...string) (base, natsURL string, stop func()) {
	t.Helper()
	base, lines, stop := startServeLines(t, append([]string{"--nats-listen", "127.0.0.1:0", "--track-ttl", "10m"}, extra...)...)
	for _, l := range lines {
		if u, ok := strings.CutPrefix(l, "cuasd nats "); ok {
			natsURL = u
		}
	}
	if natsURL == "" {
		stop()
		t.Fatalf("no NATS URL printed: %q", lines)
	}
	return base, natsURL, stop
}

func replayFile(t *testing.T, natsURL, file, format string) {
	t.Helper()
	var out bytes.Buffer
	if err := run(t.Context(), []string{"replay", file, "--format", format, "--nats-url", natsURL, "--max"},
		func(string) string { return "" }, &out, io.Discard); err != nil {
		t.Fatalf("replay %s: %v", file, err)
	}
	t.Log(strings.TrimSpace(out.String()))
}

// gomavlibLastPositions reads a tlog entry by entry and decodes each frame
// with gomavlib (an independent implementation), returning the last
// GLOBAL_POSITION_INT and GPS_RAW_INT positions of system 1.
func gomavlibLastPositions(t *testing.T, data []byte) [][2]float64 {
	t.Helper()
	drw := &dialect.ReadWriter{Dialect: ardupilotmega.Dialect}
	if err := drw.Initialize(); err != nil {
		t.Fatal(err)
	}
	var gpi, gps [2]float64
	var haveGPI, haveGPS bool
	for off := 0; off+8 < len(data); {
		b := data[off+8:]
		var n int
		switch b[0] {
		case 0xFE:
			n = 6 + int(b[1]) + 2
		case 0xFD:
			n = 10 + int(b[1]) + 2
			if len(b) > 2 && b[2]&1 != 0 {
				n += 13
			}
		default:
			t.Fatalf("tlog entry at %d does not start with a MAVLink magic byte", off)
		}
		if n > len(b) {
			break
		}
		r := &gmframe.Reader{BufByteReader: bufio.NewReader(bytes.NewReader(b[:n])), DialectRW: drw}
		if fr, err := r.Read(); err == nil && fr.GetSystemID() == 1 {
			switch m := fr.GetMessage().(type) {
			case *ardupilotmega.MessageGlobalPositionInt:
				gpi, haveGPI = [2]float64{float64(m.Lat) / 1e7, float64(m.Lon) / 1e7}, true
			case *ardupilotmega.MessageGpsRawInt:
				gps, haveGPS = [2]float64{float64(m.Lat) / 1e7, float64(m.Lon) / 1e7}, true
			}
		}
		off += 8 + n
	}
	var out [][2]float64
	if haveGPI {
		out = append(out, gpi)
	}
	if haveGPS {
		out = append(out, gps)
	}
	return out
}

type apiTrack struct {
	ID        string   `json:"id"`
	Protocols []string `json:"protocols"`
	UASID     string   `json:"uas_id"`
	Lat       *float64 `json:"lat"`
	Lon       *float64 `json:"lon"`
	Sensors   []string `json:"sensors"`
}

func waitTracks(t *testing.T, base, query string, ok func([]apiTrack) bool) []apiTrack {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, body := get(t, base+"/v1/tracks"+query)
		var out struct {
			Tracks []apiTrack `json:"tracks"`
		}
		_ = json.Unmarshal(body, &out)
		if ok(out.Tracks) {
			return out.Tracks
		}
		if time.Now().After(deadline) {
			t.Fatalf("tracks%s never satisfied the test: %s", query, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestReplayTlogBecomesTrack replays a real ArduPilot tlog into a running
// cuasd over NATS and checks the vehicle's track ends where gomavlib says
// the log ends.
func TestReplayTlogBecomesTrack(t *testing.T) {
	file := testshared.Path(t, "data", "mavlink", "uavlogviewer_vtol.tlog")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := gomavlibLastPositions(t, data)
	if len(want) == 0 {
		t.Fatal("gomavlib found no position in the log")
	}
	base, natsURL, stop := startServeNATS(t)
	defer stop()
	replayFile(t, natsURL, file, "tlog")
	waitTracks(t, base, "?protocol=mavlink", func(ts []apiTrack) bool {
		for _, tr := range ts {
			if tr.ID != "mav:1-1@replay" || tr.Lat == nil {
				continue
			}
			for _, w := range want {
				if math.Abs(*tr.Lat-w[0]) < 1e-6 && math.Abs(*tr.Lon-w[1]) < 1e-6 {
					return true
				}
			}
		}
		return false
	})
}

// TestReplayPcapBecomesTrack replays a real Remote ID Wi-Fi beacon capture
// and checks the drone becomes one track under its UAS id at the position
// of its last Location message.
func TestReplayPcapBecomesTrack(t *testing.T) {
	file := testshared.Path(t, "data", "remoteid", "odid_wifi_bcn_sample.pcap")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// What the capture claims, frame by frame, read with the decoder the
	// pipeline uses (checked against the reference vectors in its own tests).
	rd, err := pcap.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var uasID string
	var last [2]float64
	for {
		p, err := rd.Next()
		if err != nil {
			break
		}
		var f remoteid.Frame
		if p.Medium != pcap.MediumWiFi || remoteid.DecodeCarrier(remoteid.CarrierAuto, p.Data, &f) != nil {
			continue
		}
		o := remoteid.FrameObservation(&f, p.Time.UnixNano(), "x")
		if o.UASID != "" {
			uasID = o.UASID
		}
		if o.HasPosition {
			last = [2]float64{o.Lat, o.Lon}
		}
	}
	if uasID == "" {
		t.Fatal("no UAS id in the capture")
	}
	base, natsURL, stop := startServeNATS(t)
	defer stop()
	replayFile(t, natsURL, file, "pcap")
	waitTracks(t, base, "?protocol=remoteid", func(ts []apiTrack) bool {
		return len(ts) == 1 && ts[0].UASID == uasID && ts[0].Lat != nil &&
			math.Abs(*ts[0].Lat-last[0]) < 1e-6 && math.Abs(*ts[0].Lon-last[1]) < 1e-6
	})
}
