package alert

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/internal/natstest"
)

// stalledSink stands for a process stopped in the middle of its first Send
// (SIGSTOP): that Send returns only after stall, ignoring its deadline, as
// a send already on the wire completes when the process continues.
type stalledSink struct {
	stall time.Duration
	sends atomic.Int32
}

func (s *stalledSink) Send(context.Context, *Message, []byte) error {
	if s.sends.Add(1) == 1 {
		time.Sleep(s.stall)
	}
	return nil
}

// TestRedeliveryDuringTheFirstSendIsNotSentAgain: JetStream redelivers a
// message whose acknowledgement wait ran out while its first delivery was
// still being sent (a stall); the redelivery, handed to another worker,
// waits for that send and is not sent a second time (make faults saw one
// MQTT alert twice in five runs before the in-flight claim).
func TestRedeliveryDuringTheFirstSendIsNotSentAgain(t *testing.T) {
	c, err := Parse("f.yaml", []byte("sinks: [{name: h, mqtt: true, timeout: 1s}]\nrules:\n  - {name: r, sinks: [h]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Resolve("f.yaml", nil, nil); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithCancel(context.Background())
	ns := natstest.Start(t)
	if _, _, err := Open(ctx, ns.JetStream(), c, Options{Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	// The first send outlasts the acknowledgement wait (timeout + 5 s).
	sink := &stalledSink{stall: c.Sinks[0].TimeoutD + 7*time.Second}
	d := Deliverer{JS: ns.JetStream(), Sink: sink, Config: c.Sinks[0], Logger: quiet}
	var wg sync.WaitGroup
	wg.Go(func() { _ = d.Run(ctx, nopReporter{}) })
	defer func() { cancel(); wg.Wait() }()

	body, _ := json.Marshal(Message{ID: "al-stall", Seq: 1, State: "open"})
	msg := &nats.Msg{Subject: bus.AlertPrefix + ".h.al-stall", Data: body, Header: nats.Header{}}
	if _, err := ns.JetStream().Publish(ctx, msg); err != nil {
		t.Fatal(err)
	}
	raw, err := jetstream.New(ns.Conn)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := raw.Consumer(ctx, bus.StreamAlerts, "sink-h")
	if err != nil {
		t.Fatal(err)
	}
	redelivered := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		info, err := cons.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		redelivered = redelivered || info.NumRedelivered > 0 || sink.sends.Load() > 1
		if redelivered && info.NumAckPending == 0 && info.NumPending == 0 {
			break
		}
	}
	if !redelivered {
		t.Fatal("JetStream never redelivered the stalled message: the test did not test the race")
	}
	if n := sink.sends.Load(); n != 1 {
		t.Fatalf("the alert message was sent %d times, want once", n)
	}
}

type nopReporter struct{}

func (nopReporter) Up()            {}
func (nopReporter) Retrying(error) {}
