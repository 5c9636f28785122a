package cot

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cuasd/cuasd/internal/natstest"
	"github.com/cuasd/cuasd/output"
)

// TestMetrics: cuasd_cot_events_total{sink,result} counts what a sink
// sent, every result series exists from zero, and cuasd_cot_sink_up{sink}
// follows the connection.
func TestMetrics(t *testing.T) {
	l, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	if again := NewMetrics(reg); again.events != m.events {
		t.Fatal("a second NewMetrics on the same registry must reuse the collectors")
	}
	s, err := NewUDP(l.LocalAddr().String(), UDPOptions{}, Options{Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	name := s.Name()
	if up := testutil.ToFloat64(m.up.WithLabelValues(name)); up != 0 {
		t.Fatalf("cuasd_cot_sink_up before Run = %v", up)
	}
	nc, _ := runSink(t, s)
	if up := testutil.ToFloat64(m.up.WithLabelValues(name)); up != 1 {
		t.Fatalf("cuasd_cot_sink_up of a running UDP sink = %v", up)
	}
	publishTrack(t, nc, droneAlert()) // the drone and its operator point
	readDatagrams(t, l, 2)
	waitStatus(t, s, "counted 2 sent", func(st output.SinkStatus) bool { return st.Sent == 2 })
	for result, want := range map[string]float64{ResultSent: 2, ResultDropped: 0, ResultFailed: 0, ResultOversize: 0} {
		if got := testutil.ToFloat64(m.events.WithLabelValues(name, result)); got != want {
			t.Errorf("cuasd_cot_events_total{sink=%q,result=%q} = %v, want %v", name, result, got, want)
		}
	}
	if n := testutil.CollectAndCount(m.events, "cuasd_cot_events_total"); n != 4 {
		t.Errorf("%d series of cuasd_cot_events_total, want the 4 results of the one sink", n)
	}
}

// logCounter counts log records by level and message.
type logCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *logCounter) Enabled(context.Context, slog.Level) bool { return true }
func (c *logCounter) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[r.Level.String()+" "+r.Message]++
	return nil
}
func (c *logCounter) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *logCounter) WithGroup(string) slog.Handler      { return c }
func (c *logCounter) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// countingReporter counts Retrying calls.
type countingReporter struct {
	mu      sync.Mutex
	retries int
	err     error
}

func (r *countingReporter) Up() {}
func (r *countingReporter) Retrying(err error) {
	r.mu.Lock()
	r.retries, r.err = r.retries+1, err
	r.mu.Unlock()
}
func (r *countingReporter) state() (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.retries, r.err
}

// TestTLSFailureLoggedOncePerStateChange: a TAK Server whose certificate
// does not verify fails every attempt the same way; the sink retries, is
// reported down each time, and logs it once.
func TestTLSFailureLoggedOncePerStateChange(t *testing.T) {
	pki := newPKI(t)
	port := handshakeOnly(t, pki)
	logs := &logCounter{n: map[string]int{}}
	// The certificate names 127.0.0.1 and tak.test, not localhost.
	s, err := NewServer("ssl://localhost:"+port, pki.clientFiles(), Options{Log: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	srv := natstest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	rep := &countingReporter{}
	done := make(chan struct{})
	go func() { _ = s.Run(ctx, output.Conn(srv.Conn), rep); close(done) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(60 * time.Second) // a guard against a hang only
	for n, _ := rep.state(); n < 3; n, _ = rep.state() {
		if time.Now().After(deadline) {
			t.Fatalf("only %d attempts", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	n, err := rep.state()
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("reported %v, want the certificate error", err)
	}
	if w := logs.count("WARN CoT sink not connected; retrying with back-off"); w != 1 {
		t.Errorf("%d failed attempts logged %d warnings, want 1", n, w)
	}
	if c := logs.count("INFO CoT sink connected"); c != 0 {
		t.Errorf("logged %d connections that never happened", c)
	}
}

// TestOversizeIsDroppedAndCounted: an event that does not fit a safe
// datagram even with short remarks (here a 3,000-character callsign) is
// not sent, and counted as oversize; the next event goes out.
func TestOversizeIsDroppedAndCounted(t *testing.T) {
	l, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	m := NewMetrics(prometheus.NewRegistry())
	s, err := NewUDP(l.LocalAddr().String(), UDPOptions{}, Options{Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	nc, _ := runSink(t, s)
	huge := airliner()
	huge.Track.TrackID, huge.Track.Callsign = "adsb:HUGE01", strings.Repeat("W", 3000)
	publishTrack(t, nc, huge)
	publishTrack(t, nc, airliner())
	if d := readDatagrams(t, l, 1)[0]; uidOf(d) != "cuasd.site1.adsb-4CA1FA" {
		t.Fatalf("first datagram %.200s…", d)
	}
	if got := testutil.ToFloat64(m.events.WithLabelValues(s.Name(), ResultOversize)); got != 1 {
		t.Fatalf("oversize counted %v, want 1", got)
	}
}
