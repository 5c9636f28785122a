package ingest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/internal/natstest"
	"github.com/cuasd/cuasd/lifecycle"
)

// startIntake runs an intake on s with the real Publisher as its sink.
func startIntake(t *testing.T, s *natstest.Server) {
	t.Helper()
	in := NewIntake(s.Conn, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- in.Run(ctx, NewPublisher(s.JetStream(), nil), lifecycle.Discard) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	// The queue subscription is made asynchronously: wait until a request
	// is answered.
	nc := s.Connect(t)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if m, err := nc.Request("cuas.in.bogus.x", []byte{1}, 200*time.Millisecond); err == nil && strings.HasPrefix(string(m.Data), "-ERR") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("intake did not answer")
		}
	}
}

// rawFrames reads every raw message of CUAS_RAW and returns its frames.
func rawFrames(t *testing.T, js jetstream.JetStream) (frames []string, messages int) {
	t.Helper()
	ctx := context.Background()
	st, err := js.Stream(ctx, bus.StreamRaw)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := st.Info(ctx)
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			continue
		}
		messages++
		_, err = bus.EachFrame(m.Header.Get(bus.HeaderFraming), m.Data, nil, func(_ int, f []byte) error {
			frames = append(frames, string(f))
			return nil
		})
		if err != nil {
			t.Fatalf("raw message %d: %v", seq, err)
		}
	}
	return frames, messages
}

// sendAcked publishes n frames "frame-<seq>" as requests with Cuas-Seq
// first..first+n-1, all in flight at once, and returns how many got each
// answer.
func sendAcked(t *testing.T, nc *nats.Conn, subject string, first, n int) map[string]int {
	t.Helper()
	answers := map[string]int{}
	for _, a := range sendAckedBySeq(t, nc, subject, first, n) {
		answers[a]++
	}
	return answers
}

// sendAckedBySeq is sendAcked returning each sequence number's answer.
func sendAckedBySeq(t *testing.T, nc *nats.Conn, subject string, first, n int) map[int]string {
	t.Helper()
	inbox := nats.NewInbox()
	var mu sync.Mutex
	answers := map[int]string{}
	got := make(chan struct{}, n)
	sub, err := nc.Subscribe(inbox+".*", func(m *nats.Msg) {
		seq, _ := strconv.Atoi(m.Subject[len(inbox)+1:])
		mu.Lock()
		answers[seq] = string(m.Data)
		mu.Unlock()
		got <- struct{}{}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	for i := first; i < first+n; i++ {
		m := nats.NewMsg(subject)
		m.Reply = inbox + "." + strconv.Itoa(i)
		m.Data = []byte(fmt.Sprintf("frame-%d", i))
		m.Header.Set(bus.HeaderSeq, strconv.Itoa(i))
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		select {
		case <-got:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d answers after 10 s: %v", i, n, answers)
		}
	}
	return answers
}

// TestIntakeStoresEveryAcknowledgedFrameOnce: frames sent one per core
// NATS message are stored in CUAS_RAW in batches, every request is
// answered +OK only once its frame is stored, a retry with the same
// Cuas-Seq is answered without being stored again, fire-and-forget frames
// are stored too, and a malformed subject gets an error answer.
func TestIntakeStoresEveryAcknowledgedFrameOnce(t *testing.T) {
	s := natstest.StartWithStreams(t, bus.DefaultLimits())
	startIntake(t, s)
	nc := s.Connect(t)

	const n = 3000
	answers := sendAcked(t, nc, bus.IntakeSubject("adsb", "rx1"), 1, n)
	if answers["+OK"] != n {
		t.Fatalf("answers %v, want %d +OK", answers, n)
	}
	frames, messages := rawFrames(t, s.JS)
	if len(frames) != n {
		t.Fatalf("CUAS_RAW holds %d frames, want %d", len(frames), n)
	}
	if messages >= n/10 {
		t.Errorf("%d raw messages for %d frames: not batched", messages, n)
	}
	for i, f := range frames {
		if want := fmt.Sprintf("frame-%d", i+1); f != want {
			t.Fatalf("frame %d is %q, want %q (order within a sensor is kept)", i, f, want)
		}
	}

	if again := sendAcked(t, nc, bus.IntakeSubject("adsb", "rx1"), 5, 3); again["+OK duplicate"] != 3 {
		t.Errorf("retries answered %v, want 3 +OK duplicate", again)
	}
	for i := 0; i < 100; i++ {
		if err := nc.Publish(bus.IntakeSubject("adsb", "rx2"), []byte("fire")); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		frames, _ = rawFrames(t, s.JS)
		if len(frames) == n+100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("CUAS_RAW holds %d frames, want %d (3 retries must not be stored)", len(frames), n+100)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, subj := range []string{"cuas.in.adsb", "cuas.in.nope.rx", "cuas.in.adsb.a.b"} {
		m, err := nc.Request(subj, []byte{1}, 2*time.Second)
		if err != nil || !strings.HasPrefix(string(m.Data), "-ERR invalid") {
			t.Errorf("%s: %v %q", subj, err, msgData(m))
		}
	}
}

// TestIntakeAnswersErrorsWhenTheStreamIsFull: with CUAS_RAW full, every
// acknowledged frame is answered -ERR (none is left unanswered or answered
// +OK), and a retry of one is not mistaken for a duplicate.
func TestIntakeAnswersErrorsWhenTheStreamIsFull(t *testing.T) {
	l := bus.DefaultLimits()
	l.RawMaxBytes = 2048
	s := natstest.StartWithStreams(t, l)
	startIntake(t, s)
	nc := s.Connect(t)
	bySeq := sendAckedBySeq(t, nc, bus.IntakeSubject("adsb", "rx1"), 1, 500)
	answers, refused := map[string]int{}, 0
	for seq, a := range bySeq {
		answers[a]++
		if a == "-ERR backpressure" {
			refused = seq
		}
	}
	frames, _ := rawFrames(t, s.JS)
	if answers["+OK"] != len(frames) || answers["+OK"]+answers["-ERR backpressure"] != 500 {
		t.Fatalf("answers %v with %d frames stored", answers, len(frames))
	}
	if refused == 0 {
		t.Fatal("a 2 KiB stream took 500 frames")
	}
	again := sendAcked(t, nc, bus.IntakeSubject("adsb", "rx1"), refused, 1)
	if again["+OK duplicate"] != 0 {
		t.Errorf("frame %d was refused, and its retry is called a duplicate: %v", refused, again)
	}
}

func msgData(m *nats.Msg) string {
	if m == nil {
		return ""
	}
	return string(m.Data)
}

func TestSeqWindow(t *testing.T) {
	type step struct {
		seq  uint64
		seen bool
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"first time and retry", []step{{1, false}, {2, false}, {1, true}, {2, true}, {3, false}}},
		{"out of order within the window", []step{{10, false}, {5, false}, {7, false}, {5, true}, {10, true}}},
		{"far ahead slides the window", []step{{1, false}, {1 + windowBits + 5, false}, {1, true}, {7, false}, {7, true}, {windowBits + 7, false}, {7, true}, {1 + windowBits + 5, true}}},
		{"a restarted sensor starts afresh", []step{{1 << 40, false}, {1, false}, {2, false}, {1, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w seqWindow
			for i, s := range tc.steps {
				if got := w.seen(s.seq); got != s.seen {
					t.Fatalf("step %d: seen(%d) = %v, want %v", i, s.seq, got, s.seen)
				}
			}
		})
	}
	t.Run("forget", func(t *testing.T) {
		var w seqWindow
		w.seen(4)
		w.forget(4)
		if w.seen(4) {
			t.Fatal("a forgotten number is still seen")
		}
	})
}
