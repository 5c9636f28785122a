package webhook

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/output/alert"
)

// countingReceiver accepts everything and counts requests per alert state.
type countingReceiver struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *countingReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.n[r.Header.Get(HeaderID)+"/"+r.Header.Get(HeaderState)]++
	c.mu.Unlock()
}

func (c *countingReceiver) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// TestTwoInstancesDeliverEachAlertOnce runs two cuasd instances' alert
// outputs (rule engine and webhook sink, each on its own NATS connection)
// against one NATS: both engines see every threat, yet the receiver gets
// each alert once.
func TestTwoInstancesDeliverEachAlertOnce(t *testing.T) {
	rc := &countingReceiver{n: map[string]int{}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	ns, _ := start(t, config(t, srv.URL, ""))
	// The second instance: its own connection, same stream and consumer.
	nc := ns.Connect(t)
	js, err := bus.ConnectJetStream(nc, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(t, srv.URL, "")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	rules, store, err := alert.Open(ctx, js, cfg, alert.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hook, err := NewOutput(cfg.Sinks[0], alert.Deliverer{JS: js, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []output.Output{rules, hook} {
		up := &upReporter{up: make(chan struct{})}
		wg.Go(func() { _ = o.Run(ctx, output.Conn(nc), up) })
		<-up.up
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	const n = 20
	for i := range n {
		publishThreat(t, ns, fmt.Sprintf("remoteid:T%02d", i), int64(i))
	}
	cons, err := ns.JS.Consumer(ctx, bus.StreamAlerts, "sink-hook")
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		info, err := cons.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(rc.counts()) >= n && info.NumPending == 0 && info.NumAckPending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d alerts delivered; consumer %d pending, %d unacknowledged", len(rc.counts()), n, info.NumPending, info.NumAckPending)
		}
	}
	got := rc.counts()
	if len(got) != n {
		t.Errorf("%d distinct alerts, want %d", len(got), n)
	}
	for k, c := range got {
		if c != 1 {
			t.Errorf("%s delivered %d times", k, c)
		}
	}
	s, _ := ns.JS.Stream(ctx, bus.StreamAlerts)
	if info, _ := s.Info(ctx); info.State.Msgs != n {
		t.Errorf("stream holds %d messages, want %d (the second engine's copies de-duplicated)", info.State.Msgs, n)
	}
}
