package bus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/internal/natstest"
)

// lostConsumerNoticed is how soon ConsumeFrom must notice that the server
// holding its consumer is gone (docs/FAULTS.md): the client notices by
// two missed idle heartbeats, nothing else tells it.
const lostConsumerNoticed = 2 * time.Second

// ConsumeFrom's pull requests ask the server for idle heartbeats often
// enough that two missed ones fit in lostConsumerNoticed. The client's
// default for an ordered consumer, 5 s, let the fusion feed stand still
// for 10 s when the nats-server holding its consumer was restarted (make
// faults, (b)). Read on the wire, as a second client sees the requests.
func TestConsumeFromAsksForHeartbeats(t *testing.T) {
	s := natstest.Start(t)
	ctx := context.Background()
	if _, err := s.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
		t.Fatal(err)
	}
	sniff := s.Connect(t)
	pulls, err := sniff.SubscribeSync("$JS.API.CONSUMER.MSG.NEXT.T.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := sniff.Flush(); err != nil {
		t.Fatal(err)
	}
	stop, _, err := s.JetStream().ConsumeFrom(ctx, "T", "t.>", time.Now().Add(-time.Hour), func(bus.Msg) {})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	m, err := pulls.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("no pull request seen: %v", err)
	}
	var req struct {
		Heartbeat time.Duration `json:"idle_heartbeat"`
	}
	if err := json.Unmarshal(m.Data, &req); err != nil {
		t.Fatalf("pull request %q: %v", m.Data, err)
	}
	if req.Heartbeat <= 0 || 2*req.Heartbeat > lostConsumerNoticed {
		t.Errorf("the pull request %s asks for an idle heartbeat every %s: a consumer lost with its server is noticed after two missed, %s, more than %s",
			m.Data, req.Heartbeat, 2*req.Heartbeat, lostConsumerNoticed)
	}
}

// When the server of a cluster that holds ConsumeFrom's consumer stops
// (the client itself stays connected to another), the consumption goes
// on: the consumer is re-created on a server that is up and delivers
// what was stored since, in order, each message once, and ConsumeFrom
// does not report the consumption closed (which would make the fusion
// feed replay the last track TTL).
func TestConsumeFromOutlivesItsConsumersServer(t *testing.T) {
	nodes := natstest.StartCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := nodes[0].JS.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}, Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	publish(ctx, t, nodes[0].JS, 0, 5)
	// The client is on n1 alone; its consumer is put on any of the three.
	// Consume again until the consumer is on another server, so that
	// only heartbeats, not a reconnect, can tell the client it is lost.
	js := bus.NewJetStream(mustJS(t, nodes[0].Connect(t, nats.MaxReconnects(-1))))
	var got *received
	var host string
	var stop func()
	var closed <-chan struct{}
	for attempt := 0; host == "" || host == "n1"; attempt++ {
		if attempt == 30 {
			t.Fatal("the ordered consumer was put on n1 30 times")
		}
		if stop != nil {
			stop()
		}
		got = &received{}
		var err error
		stop, closed, err = js.ConsumeFrom(ctx, "T", "t.>", time.Now().Add(-time.Hour), got.add)
		if err != nil {
			t.Fatal(err)
		}
		got.waitFor(ctx, t, 5)
		host = consumerHost(ctx, t, nodes[0].JS)
	}
	defer stop()
	var gone *natstest.Server
	for _, n := range nodes {
		if n.Srv.Name() == host {
			gone = n
		}
	}
	gone.Stop()
	publish(ctx, t, nodes[0].JS, 5, 10)
	got.waitFor(ctx, t, 10)
	select {
	case <-closed:
		t.Fatal("the consumption was reported closed")
	default:
	}
	if seqs := got.snapshot(); fmt.Sprint(seqs) != "[1 2 3 4 5 6 7 8 9 10]" {
		t.Errorf("stream sequences delivered %v, want 1 to 10 once each in order", seqs)
	}
}

type received struct {
	mu   sync.Mutex
	seqs []uint64
}

func (r *received) add(m bus.Msg) {
	md, _ := m.Meta()
	r.mu.Lock()
	r.seqs = append(r.seqs, md.Sequence)
	r.mu.Unlock()
}

func (r *received) snapshot() []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]uint64(nil), r.seqs...)
}

// waitFor waits until n messages arrived (or ctx ends: the test fails).
func (r *received) waitFor(ctx context.Context, t *testing.T, n int) {
	t.Helper()
	for len(r.snapshot()) < n {
		select {
		case <-ctx.Done():
			t.Fatalf("%d of %d messages delivered: %v", len(r.snapshot()), n, r.snapshot())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// publish stores messages from to to-1 on t.N, retrying while the
// stream elects a leader.
func publish(ctx context.Context, t *testing.T, js jetstream.JetStream, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		for {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, err := js.Publish(pctx, fmt.Sprintf("t.%d", i), []byte("x"))
			cancel()
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("publish %d: %v", i, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// consumerHost names the server holding the newest consumer of T.
func consumerHost(ctx context.Context, t *testing.T, js jetstream.JetStream) string {
	t.Helper()
	for {
		host, err := natstest.ConsumerHost(ctx, js, "T")
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			return host
		}
		if ctx.Err() != nil {
			t.Fatal("the consumer has no leader")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func mustJS(t *testing.T, nc *nats.Conn) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}
