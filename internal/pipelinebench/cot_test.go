package pipelinebench

import (
	"context"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/gate/board"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/output/cot"
)

// cotOn is CUAS_BENCH_COT=1 (issue 18): one UDP Cursor-on-Target sink on
// the gate's track events (so it implies CUAS_BENCH_EVENTS=1), sending to
// a local socket that reads and counts the datagrams. The pipeline
// figures with and without it are the CoT output's cost (the counting
// reader, in this process, is included: a few µs per datagram). The sink
// takes the gate's typed events, as in cuasd serve;
// CUAS_BENCH_COT_NATS=1 makes it decode their JSON from NATS instead, as
// it does in a process of its own.
func cotOn() bool { return os.Getenv("CUAS_BENCH_COT") == "1" }

// cotBench is the CoT sink's receiving end.
type cotBench struct {
	mu          sync.Mutex
	received    int
	first, last time.Time
}

// startCoT starts the sink and its reader when cotOn; nil otherwise.
func startCoT(ctx context.Context, t *testing.T, b *bus.Bus, g *board.Gate, reg *prometheus.Registry) *cotBench {
	t.Helper()
	if !cotOn() {
		return nil
	}
	l, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	_ = l.SetReadBuffer(8 << 20) // bursts: every track's update comes with the 500 ms sweep
	context.AfterFunc(ctx, func() { l.Close() })
	s, err := cot.NewUDP(l.LocalAddr().String(), cot.UDPOptions{}, cot.Options{Metrics: cot.NewMetrics(reg), Log: nopLog()})
	if err != nil {
		t.Fatal(err)
	}
	ev := output.InProcess(b.Conn, g, nil, nil) // as cuasd serve runs it: the gate's typed events
	if os.Getenv("CUAS_BENCH_COT_NATS") == "1" {
		ev = output.Conn(b.Conn) // as in another process: JSON from NATS
	}
	go func() { _ = s.Run(ctx, ev, nopReporter{}) }()
	c := &cotBench{}
	go func() {
		buf := make([]byte, 65536)
		for {
			if _, _, err := l.ReadFromUDP(buf); err != nil {
				return
			}
			now := time.Now()
			c.mu.Lock()
			if c.received == 0 {
				c.first = now
			}
			c.received, c.last = c.received+1, now
			c.mu.Unlock()
		}
	}()
	return c
}

// log reports the events the sink sent and the reader received, and their
// rate between the first and the last datagram received.
func (c *cotBench) log(t *testing.T, r *rig, label string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	n, span := c.received, c.last.Sub(c.first)
	c.mu.Unlock()
	sent := r.counterWith("cuasd_cot_events_total", "result", "sent")
	rate := func(v float64) float64 {
		if span <= 0 {
			return 0
		}
		return v / span.Seconds()
	}
	t.Logf("%s: CoT UDP sink sent %.0f events (%.0f/s), dropped %.0f (queue full), oversize %.0f, failed %.0f; the reader received %d datagrams (%.0f/s) over %.1fs",
		label, sent, rate(sent), r.counterWith("cuasd_cot_events_total", "result", "dropped"),
		r.counterWith("cuasd_cot_events_total", "result", "oversize"), r.counterWith("cuasd_cot_events_total", "result", "failed"),
		n, rate(float64(n)), span.Seconds())
}
