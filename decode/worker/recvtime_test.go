package worker

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/internal/natstest"
)

// TestFutureReceiveTimeIsDeadLetter: a receiver publishing straight to
// NATS with a receive time centuries ahead made a track last_seen then (issue
// 23, item 7). The message is now a dead letter with its reason; one with
// a sane time is decoded.
func TestFutureReceiveTimeIsDeadLetter(t *testing.T) {
	srv := natstest.StartWithStreams(t, bus.DefaultLimits())
	js := srv.JS
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := NewWorker(bus.NewJetStream(js), &ADSB{}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	frame := []byte{0x8D, 0x40, 0x6B, 0x90, 0x20, 0x15, 0xA6, 0x78, 0xD4, 0xD2, 0x20, 0xAA, 0x4B, 0xDA}
	for _, recv := range []int64{9_000_000_000_000_000_000, time.Now().UnixNano()} {
		msg := &nats.Msg{Subject: bus.RawSubject("adsb", "rx1"), Data: frame, Header: nats.Header{}}
		msg.Header.Set(bus.HeaderRecvTime, strconv.FormatInt(recv, 10))
		if _, err := js.PublishMsg(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	dead, err := js.Stream(ctx, bus.StreamDead)
	if err != nil {
		t.Fatal(err)
	}
	var got *jetstream.RawStreamMsg
	for deadline := time.Now().Add(20 * time.Second); got == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no dead letter for a receive time in 2255")
		}
		got, _ = dead.GetMsg(ctx, 1)
	}
	if r := got.Header.Get(bus.HeaderReason); !strings.HasPrefix(r, "recv_time: ") {
		t.Errorf("dead letter reason %q", r)
	}
	obs, err := js.Stream(ctx, bus.StreamObs)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		info, _ := obs.Info(ctx)
		if info != nil && info.State.Msgs == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("observations: %+v, want the sane frame's only", info.State)
		}
	}
	cancel()
	<-done
}
