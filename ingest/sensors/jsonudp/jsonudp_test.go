package jsonudp_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/ingest/sensors"
	"github.com/cuasd/cuasd/ingest/sensors/jsonudp"
	"github.com/cuasd/cuasd/ingest/sensors/sensorstest"
	"github.com/cuasd/cuasd/internal/testshared"
	"github.com/cuasd/cuasd/lifecycle"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(testshared.Path(t, "data", "sensors", name))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b)
}

// TestDatagrams sends the shared samples (one per datagram, and several
// lines in one datagram), a flat forwarder object and every kind of bad
// input; the good ones become Remote ID frames of the peer's sensor, the
// bad ones are counted by reason, and nothing stops the listener.
func TestDatagrams(t *testing.T) {
	reg := sensors.NewRegistry(time.Hour)
	l, err := jsonudp.Listen("127.0.0.1:0", reg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	sink := sensorstest.NewSink()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx, sink, lifecycle.NewStatus(nil).Reporter("udp", lifecycle.Input)) }()
	c, err := net.Dial("udp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	datagrams := [][]byte{
		[]byte(`{"index": 1, "MAC": "aa:bb"`), // truncated
		read(t, "esp32.jsonl"),
		[]byte(`{"id": "BAD", "lat": 91, "lon": 0}`),
		read(t, "wardragon_rid.jsonl"), // two messages, one per line
		[]byte(`{"id": "SLOW", "lat": 51, "lon": 0, "speed": "fast"}`),
		[]byte(`{"mac": "aa:bb:cc:00:00:09", "rssi": -81, "channel": 6, "id": "FWD0009", "lat": 51.5, "lon": -0.1, "alt": 40, "speed": 3, "heading": 270}`),
	}
	// Loopback UDP can still drop under load: resend until everything
	// has arrived (duplicates are harmless to what is checked).
	wantIDs := []string{"ESP32EXAMPLE0004", "1581F5EXAMPLE001", "1668EXAMPLE00002", "FWD0009"}
	all := func() bool {
		seen := map[string]bool{}
		for _, p := range sink.Frames() {
			for _, o := range p.Obs {
				seen[o.Key] = p.Sensor == "json-udp-127_0_0_1" && p.Protocol == "remoteid"
			}
		}
		for _, id := range wantIDs {
			if !seen[id] {
				return false
			}
		}
		d := sink.Drops()
		return d["remoteid/rejected_invalid_json"] > 0 && d["remoteid/rejected_range"] > 0 && d["remoteid/rejected_type"] > 0
	}
	for !all() && ctx.Err() == nil {
		for _, d := range datagrams {
			if _, err := c.Write(d); err != nil {
				t.Fatal(err)
			}
		}
		wctx, wcancel := context.WithTimeout(ctx, 500*time.Millisecond)
		sink.Wait(wctx, all)
		wcancel()
	}
	if !all() {
		t.Fatalf("drops %v frames %d", sink.Drops(), len(sink.Frames()))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s, ok := reg.Get("json-udp-127_0_0_1")
	if !ok || s.Messages == 0 || s.Rejected["range"] == 0 || s.LastRSSI == nil {
		t.Errorf("registry %+v", s)
	}
}

func TestListenErrors(t *testing.T) {
	for _, spec := range []string{"127.0.0.1:0?lat=51&lon=0", "127.0.0.1:0?colour=red", "127.0.0.1:0?sensor=x&lat=91&lon=0", "nohost"} {
		if l, err := jsonudp.Listen(spec, nil, slog.Default()); err == nil {
			l.Close()
			t.Errorf("%q accepted", spec)
		} else if !strings.Contains(err.Error(), "jsonudp") {
			t.Errorf("%q: %v", spec, err)
		}
	}
}
