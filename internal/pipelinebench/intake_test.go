package pipelinebench

import (
	"context"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/internal/cputime"
	"github.com/cuasd/cuasd/lifecycle"
)

// TestIntakeThroughput measures the single-frame intake: a sensor on a TCP
// NATS connection publishes one frame per core NATS message on
// cuas.in.{protocol}.{sensor}, acknowledged (a window of requests in
// flight, each answered once its batch is stored) and fire-and-forget;
// the frames go through CUAS_RAW, the fusion feed and the store. It reports
// the sustained end-to-end rate and the CPU per frame (the sensor's client
// included, since it runs in this process).
func TestIntakeThroughput(t *testing.T) {
	if os.Getenv("CUAS_BENCH_PIPELINE") != "1" {
		t.Skip("set CUAS_BENCH_PIPELINE=1 (make bench-pipeline) to run the pipeline load benchmark")
	}
	t.Logf("machine: %s", machine())
	ticks := generate(2000, 200, 150000, 6)
	type frame struct {
		subject string
		data    []byte
	}
	var frames []frame
	for _, sec := range ticks {
		for _, tick := range sec {
			for proto, fs := range tick {
				for _, f := range fs {
					frames = append(frames, frame{bus.IntakeSubject(proto, "bench"), f})
				}
			}
		}
	}
	for _, mode := range []string{"acked", "fire_and_forget"} {
		r := newRig(t)
		ctx, cancel := context.WithCancel(context.Background())
		in := ingest.NewIntake(r.b.Conn, nopLog(), nil)
		done := make(chan struct{})
		go func() { defer close(done); _ = in.Run(ctx, r.pub, lifecycle.Discard) }()
		nc, err := nats.Connect(r.b.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // the intake's queue subscription
		start, cpu0 := time.Now(), cputime.Process()
		if mode == "acked" {
			sendWindowed(t, nc, func(i int) (string, []byte) { return frames[i].subject, frames[i].data }, len(frames), 20000)
		} else {
			for _, f := range frames {
				if err := nc.Publish(f.subject, f.data); err != nil {
					t.Fatal(err)
				}
			}
			_ = nc.Flush()
		}
		pubDur := time.Since(start)
		_, applied := r.waitDrained(float64(len(frames)), time.Minute)
		total, cpu := time.Since(start), cputime.Process()-cpu0
		t.Logf("INTAKE %s: %d frames, one core NATS message each, sent in %.2fs (%.0f/s); %.0f applied after %.2fs: sustained %.0f frames/s end to end, %.2f µs of CPU per frame (sensor client included)",
			mode, len(frames), pubDur.Seconds(), float64(len(frames))/pubDur.Seconds(), applied, total.Seconds(), applied/total.Seconds(), cpu.Seconds()*1e6/float64(len(frames)))
		nc.Close()
		cancel()
		<-done
		r.stop()
	}
}

// sendWindowed sends n requests with at most window unanswered, and fails
// the test on any answer but +OK.
func sendWindowed(t *testing.T, nc *nats.Conn, msg func(i int) (string, []byte), n, window int) {
	t.Helper()
	inbox := nats.NewInbox()
	slots := make(chan struct{}, window)
	var bad atomic.Int64
	var answered atomic.Int64
	all := make(chan struct{})
	sub, err := nc.Subscribe(inbox+".*", func(m *nats.Msg) {
		if string(m.Data) != "+OK" {
			bad.Add(1)
		}
		<-slots
		if answered.Add(1) == int64(n) {
			close(all)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	_ = sub.SetPendingLimits(-1, -1)
	for i := 0; i < n; i++ {
		slots <- struct{}{}
		subj, data := msg(i)
		m := &nats.Msg{Subject: subj, Reply: inbox + "." + strconv.Itoa(i), Data: data, Header: nats.Header{}}
		m.Header.Set(bus.HeaderSeq, strconv.Itoa(i+1))
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-all:
	case <-time.After(2 * time.Minute):
		t.Fatalf("%d of %d answered", answered.Load(), n)
	}
	if bad.Load() > 0 {
		t.Errorf("%d answers were not +OK", bad.Load())
	}
}
