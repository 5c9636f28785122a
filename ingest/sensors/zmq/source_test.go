package zmq_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuasd/cuasd/ingest/sensors"
	"github.com/cuasd/cuasd/ingest/sensors/sensorstest"
	"github.com/cuasd/cuasd/ingest/sensors/zmq"
	"github.com/cuasd/cuasd/internal/testshared"
	"github.com/cuasd/cuasd/lifecycle"
)

// badMessages are what real feeds also emit: each must be refused with its
// reason while the good messages around it go through.
var badMessages = []string{
	`not json at all`,
	`[{"Self-ID Message": {"text": "say "hi" unescaped"}}]`,
	`[{"Basic ID": {"id": "BAD91"}}, {"Location/Vector Message": {"latitude": 91, "longitude": 0.1}}]`,
	`[{"Basic ID": {"id": "BADSPEED"}}, {"Location/Vector Message": {"latitude": 51, "longitude": 0.1, "speed": "fast"}}]`,
	`[{"Location/Vector Message": {"latitude": 51, "longitude": 0.1}}]`,
	`{"id": "` + strings.Repeat("A", 70<<10) + `"}`,
	// Not bad: a two-part message (topic, document) between the bad ones.
	"dragonsync\t" + `{"id": "MULTI0001", "lat": 51.1, "lon": -0.1, "pilot_lat": 51.2, "pilot_lon": -0.2}`,
}

// publisher starts testdata/publisher.py (pyzmq on the real libzmq) on a
// free port, publishing files over and over; it returns the address.
func publisher(t *testing.T, files ...string) string {
	t.Helper()
	addr, _ := publisherOn(t, "", files...)
	return addr
}

// publisherOn is publisher on a given port ("" for a free one); stop ends
// it and waits.
func publisherOn(t *testing.T, port string, files ...string) (addr string, stop func()) {
	t.Helper()
	py := sensorstest.PythonZMQ(t)
	cmd := exec.Command(py, append([]string{"testdata/publisher.py"}, files...)...)
	cmd.Env = append(os.Environ(), "ZMQ_PORT="+port)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() { once.Do(func() { stdin.Close(); cmd.Wait() }) }
	t.Cleanup(stop)
	port, err = bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("publisher printed no port: %v", err)
	}
	return "127.0.0.1:" + strings.TrimSpace(port), stop
}

func sample(t *testing.T, name string) string { return testshared.Path(t, "data", "sensors", name) }

func TestRealPublisher(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(strings.Join(badMessages, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := publisher(t, sample(t, "wardragon_rid.jsonl"), bad, sample(t, "wardragon_dji.jsonl"),
		sample(t, "wardragon_status.json"), sample(t, "esp32.jsonl"))
	reg := sensors.NewRegistry(time.Hour)
	src, err := zmq.Parse("tcp://"+addr+"?sensor=kit-1", reg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	sink := sensorstest.NewSink()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, sink, lifecycle.NewStatus(nil).Reporter("zmq", lifecycle.Input)) }()

	want := map[string]string{"1581F5EXAMPLE001": "remoteid", "1668EXAMPLE00002": "remoteid",
		"ESP32EXAMPLE0004": "remoteid", "3NZEXAMPLEDJI003": "dji", "MULTI0001": "remoteid"}
	wantDrops := []string{"remoteid/rejected_invalid_json", "remoteid/rejected_range", "remoteid/rejected_type",
		"remoteid/rejected_no_identity", "remoteid/rejected_oversized"}
	all := func() bool {
		seen := map[string]bool{}
		for _, p := range sink.Frames() {
			for _, o := range p.Obs {
				seen[o.Key] = true
			}
		}
		drops := sink.Drops()
		for _, d := range wantDrops {
			if drops[d] == 0 {
				return false
			}
		}
		s, _ := reg.Get("kit-1")
		return len(seen) == len(want) && s.Position != nil
	}
	if !sink.Wait(ctx, all) {
		t.Fatalf("not everything arrived: drops %v, %d frames", sink.Drops(), len(sink.Frames()))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkFrames(t, sink.Frames(), want)
	s, _ := reg.Get("kit-1")
	if p := s.Position; p.Source != "reported" || p.Lat != 51.47001 || p.Lon != -0.45401 || s.GPSFix == nil || !*s.GPSFix {
		t.Errorf("status did not place the sensor: %+v %+v", s, p)
	}
	if s.Rejected["invalid_json"] == 0 || s.Messages == 0 {
		t.Errorf("registry counts %+v", s)
	}
}

// checkFrames compares the decoded observations with the samples' values.
func checkFrames(t *testing.T, frames []sensorstest.Published, want map[string]string) {
	t.Helper()
	type pos struct{ lat, lon, opLat, opLon float64 }
	wantPos := map[string]pos{
		"1581F5EXAMPLE001": {51.47021, -0.45311, 51.46950, -0.45502},
		"1668EXAMPLE00002": {51.47233, -0.44810, 51.47301, -0.44702},
		"3NZEXAMPLEDJI003": {51.46811, -0.46022, 51.46790, -0.46101},
		"ESP32EXAMPLE0004": {51.47120, -0.45011, 51.47100, -0.45050},
		"MULTI0001":        {51.1, -0.1, 51.2, -0.2},
	}
	for _, p := range frames {
		if p.Err != nil || len(p.Obs) != 1 || p.Sensor != "kit-1" || p.Adapter != "zmq" {
			t.Fatalf("frame %+v", p)
		}
		o := p.Obs[0]
		w := wantPos[o.Key]
		if want[o.Key] != p.Protocol {
			t.Errorf("%s on protocol %s, want %s", o.Key, p.Protocol, want[o.Key])
		}
		if math.Abs(o.Lat-w.lat) > 1e-6 || math.Abs(o.Lon-w.lon) > 1e-6 || !o.HasOperatorPosition ||
			math.Abs(o.OperatorLat-w.opLat) > 1e-6 || math.Abs(o.OperatorLon-w.opLon) > 1e-6 {
			t.Errorf("%s: position %v,%v operator %v,%v", o.Key, o.Lat, o.Lon, o.OperatorLat, o.OperatorLon)
		}
	}
}

// TestReconnects: the subscriber retries while no publisher is there,
// subscribes when one starts, and comes back after it restarts.
func TestReconnects(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strings.TrimPrefix(ln.Addr().String(), "127.0.0.1:")
	ln.Close()
	src, err := zmq.Parse("tcp://127.0.0.1:"+port, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	sink := sensorstest.NewSink()
	rep := sensorstest.NewReporter(lifecycle.NewStatus(nil).Reporter("zmq", lifecycle.Input), 16)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, sink, rep) }()
	if err := <-rep.Retried; err == nil {
		t.Fatal("no retry without a publisher")
	}
	rid := sample(t, "wardragon_rid.jsonl")
	for round := 1; round <= 2; round++ {
		_, stop := publisherOn(t, port, rid)
		n := len(sink.Frames())
		if !sink.Wait(ctx, func() bool { return len(sink.Frames()) > n }) {
			t.Fatalf("round %d: nothing received", round)
		}
		stop()
		for len(rep.Retried) > 0 { // retries reported before this round
			<-rep.Retried
		}
		select {
		case <-rep.Retried:
		case <-ctx.Done():
			t.Fatalf("round %d: the publisher's end was not noticed", round)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
