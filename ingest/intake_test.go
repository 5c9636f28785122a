package ingest

import (
	"context"
	"errors"
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
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

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

// runLimitedIntake runs an intake with limits and linger on s, and returns its Publisher (metrics on a registry of its own)
// and a request helper.
func runLimitedIntake(t *testing.T, s *natstest.Server, l SensorLimits, linger time.Duration) (*Publisher, func(string, []byte) string) {
	t.Helper()
	pub := NewPublisher(s.JetStream(), prometheus.NewRegistry())
	in := NewIntake(s.Conn, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	in.Limits = &l
	in.Linger = linger
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- in.Run(ctx, pub, lifecycle.Discard) }()
	t.Cleanup(func() { cancel(); <-done })
	nc := s.Connect(t)
	return pub, func(subject string, data []byte) string {
		for i := 0; i < 100; i++ {
			m, err := nc.Request(subject, data, 5*time.Second)
			if err == nil {
				return string(m.Data)
			}
			if !errors.Is(err, nats.ErrNoResponders) && i >= 2 {
				break
			}
			time.Sleep(20 * time.Millisecond) // the queue subscription is made asynchronously
		}
		t.Errorf("%s: no answer", subject)
		return ""
	}
}

// TestIntakeRefusesWhatItCannotKeep (issue 32): a sensor name outside the
// one rule (bus.ValidSensor; `=HYPERLINK(...)` was accepted on NATS while
// HTTP refused it), a frame over 65535 bytes and a sensor over its rate or
// byte limit are each answered -ERR with the reason and counted in
// cuasd_frames_dropped_total.
func TestIntakeRefusesWhatItCannotKeep(t *testing.T) {
	s := natstest.StartWithStreams(t, bus.DefaultLimits())
	pub, ask := runLimitedIntake(t, s, SensorLimits{FramesPerSecond: 5, BytesPerSecond: 1000}, 0)
	if a := ask(`cuas.in.adsb.=HYPERLINK("x")`, []byte{1}); !strings.HasPrefix(a, "-ERR invalid") {
		t.Errorf("a formula as sensor name: %q", a)
	}
	if a := ask("cuas.in.mavlink.big", make([]byte, 70000)); !strings.HasPrefix(a, "-ERR too_large: a frame of 70000 bytes") {
		t.Errorf("a 70000-byte frame: %q", a)
	}
	if a := ask("cuas.in.mavlink.wide", make([]byte, 2000)); !strings.HasPrefix(a, "-ERR rate_limited: sensor wide is over 1000 bytes a second") {
		t.Errorf("2000 bytes from a sensor limited to 1000 a second: %q", a)
	}
	limited := 0
	for range 20 {
		if strings.HasPrefix(ask("cuas.in.adsb.chatty", []byte{1}), "-ERR rate_limited: sensor chatty is over 5 frames a second") {
			limited++
		}
	}
	if limited < 10 {
		t.Errorf("%d of 20 frames at once refused from a sensor limited to 5 a second", limited)
	}
	for reason, want := range map[string]float64{"invalid": 1, "too_large": 1, "rate_limited": float64(limited + 1)} {
		if got := sumDropped(pub, reason); got != want {
			t.Errorf("dropped{reason=%q} = %v, want %v", reason, got, want)
		}
	}
}

// TestIntakeBatchesFitAMessage: 40 frames of 60,000 bytes from one sensor,
// all in flight, are stored in batches that fit a NATS message
// (bus.MaxBatchBytes); one batch of all of them (2.4 MB) exceeds
// CUAS_RAW's message limit and was refused.
func TestIntakeBatchesFitAMessage(t *testing.T) {
	s := natstest.StartWithStreams(t, bus.DefaultLimits())
	// Batches wait up to a second, so frames sent at once share them.
	_, ask := runLimitedIntake(t, s, DefaultSensorLimits(), time.Second)
	frame := make([]byte, 60000)
	var wg sync.WaitGroup
	answers := make(chan string, 40)
	for range 40 {
		wg.Add(1)
		go func() { defer wg.Done(); answers <- ask("cuas.in.mavlink.big", frame) }()
	}
	wg.Wait()
	close(answers)
	for a := range answers {
		if a != "+OK" {
			t.Fatalf("a 60,000-byte frame: %q", a)
		}
	}
	frames, messages := rawFrames(t, s.JS)
	if len(frames) != 40 || messages < 3 {
		t.Errorf("%d frames in %d messages, want 40 frames in at least 3 messages of at most %d bytes", len(frames), messages, bus.MaxBatchBytes)
	}
}

// sumDropped is the intake's drops for reason over every protocol.
func sumDropped(p *Publisher, reason string) float64 {
	n := 0.0
	for _, proto := range append([]string{""}, Protocols...) {
		n += testutil.ToFloat64(p.dropped.WithLabelValues(proto, "intake", reason))
	}
	return n
}

// answer sends msg to the intake and returns its answer, waiting for
// the intake to subscribe.
func answer(t *testing.T, nc *nats.Conn, msg *nats.Msg) string {
	t.Helper()
	for i := 0; ; i++ {
		m, err := nc.RequestMsg(msg, 5*time.Second)
		if err == nil {
			return string(m.Data)
		}
		if !errors.Is(err, nats.ErrNoResponders) || i > 100 {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestIntakeCarriesSensorPosition (issue 31): a single frame stating its
// receiver's position (Cuas-Sensor-Position) is stored in a raw batch
// carrying that position, in its canonical form, apart from the frames
// of another position or of none; a malformed one is answered
// "-ERR sensor_position" with the header's problem, counted, and not
// stored.
func TestIntakeCarriesSensorPosition(t *testing.T) {
	s := natstest.StartWithStreams(t, bus.DefaultLimits())
	pub, _ := runLimitedIntake(t, s, DefaultSensorLimits(), 50*time.Millisecond)
	nc := s.Connect(t)
	ask := func(position string, sensorNs int64, frame byte) string {
		msg := &nats.Msg{Subject: "cuas.in.adsb.mast", Data: []byte{frame}, Header: nats.Header{}}
		if position != "" {
			msg.Header.Set(bus.HeaderSensorPosition, position)
		}
		if sensorNs != 0 {
			msg.Header.Set(bus.HeaderSensorTime, strconv.FormatInt(sensorNs, 10))
			msg.Header.Set(bus.HeaderClock, "gps")
		}
		return answer(t, nc, msg)
	}
	now := time.Now().UnixNano()
	for _, c := range []struct {
		position string
		ns       int64
		frame    byte
	}{{" 47.3769, 8.5417, 455.2", now, 1}, {"47.3769,8.5417,455.2", now + 1000, 2}, {"47.5,8.6,400", now, 3}, {"", now, 4}, {"", 0, 5}} {
		if a := ask(c.position, c.ns, c.frame); a != "+OK" {
			t.Fatalf("frame %d: %q", c.frame, a)
		}
	}
	if a := ask("47.3769,8.5417", now, 6); !strings.HasPrefix(a, "-ERR sensor_position: ") || !strings.Contains(a, "want LAT,LON,ALT") {
		t.Errorf("a position without its alt: %q", a)
	}
	if got := sumDropped(pub, "sensor_position"); got != 1 {
		t.Errorf("dropped{reason=sensor_position} = %v, want 1", got)
	}
	ctx := context.Background()
	st, err := s.JS.Stream(ctx, bus.StreamRaw)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := st.Info(ctx)
	got := map[string]int{} // position and framing → frames
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		if _, err := bus.EachFrameTS(m.Header.Get(bus.HeaderFraming), m.Data, nil, func(int, uint64, []byte) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		got[m.Header.Get(bus.HeaderSensorPosition)+" "+m.Header.Get(bus.HeaderFraming)] += n
	}
	want := map[string]int{"47.3769,8.5417,455.2 lpt": 2, "47.5,8.6,400 lpt": 1, " lpt": 1, " lp": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("raw batches by position and framing %v, want %v", got, want)
	}
}

// TestIntakeRefusesBadSensorTime: a frame whose Cuas-Sensor-Ns is not a
// positive decimal, or whose Cuas-Clock is not a clock cuasd knows
// (`GPS`, `utc`), is answered "-ERR sensor_time" and counted, not
// stored: it used to be stored with its arrival time, or with a GPS time
// read as a free-running clock (and so left out of multilateration),
// while the sender was told +OK.
func TestIntakeRefusesBadSensorTime(t *testing.T) {
	s := natstest.StartWithStreams(t, bus.DefaultLimits())
	pub, _ := runLimitedIntake(t, s, DefaultSensorLimits(), 50*time.Millisecond)
	nc := s.Connect(t)
	ask := func(sensorNs, clock string) string {
		msg := &nats.Msg{Subject: "cuas.in.adsb.mast", Data: []byte{1}, Header: nats.Header{}}
		msg.Header.Set(bus.HeaderSensorTime, sensorNs)
		if clock != "" {
			msg.Header.Set(bus.HeaderClock, clock)
		}
		return answer(t, nc, msg)
	}
	now := strconv.FormatInt(time.Now().UnixNano(), 10)
	for _, c := range []struct{ ns, clock string }{{"abc", "gps"}, {"-5", ""}, {"1.7e18", "gps"}, {now, "GPS"}, {now, "utc"}} {
		if a := ask(c.ns, c.clock); !strings.HasPrefix(a, "-ERR sensor_time: ") {
			t.Errorf("Cuas-Sensor-Ns %q, Cuas-Clock %q: %q, want -ERR sensor_time", c.ns, c.clock, a)
		}
	}
	if got := sumDropped(pub, "sensor_time"); got != 5 {
		t.Errorf("dropped{reason=sensor_time} = %v, want 5", got)
	}
	for _, clock := range []string{"gps", "receiver", ""} {
		if a := ask(now, clock); a != "+OK" {
			t.Errorf("Cuas-Clock %q: %q", clock, a)
		}
	}
}
