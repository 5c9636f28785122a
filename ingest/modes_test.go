package ingest

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/sensorclock"
)

// framedSink records what a Mode S stream publishes.
type framedSink struct {
	mu       sync.Mutex
	framings []string
	bodies   [][]byte
	modeAC   int
}

func (f *framedSink) PublishFrames(context.Context, string, string, string, []Frame) (Result, error) {
	return Result{}, nil
}
func (f *framedSink) PublishBatch(ctx context.Context, adapter, protocol, sensor string, batch []byte, n int, recv int64, id string) (Result, error) {
	return f.PublishBatchFramed(ctx, adapter, protocol, sensor, bus.FramingLP, "", "", batch, n, recv, id)
}
func (f *framedSink) PublishBatchFramed(_ context.Context, _, _, _, framing, _, _ string, batch []byte, n int, _ int64, _ string) (Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.framings = append(f.framings, framing)
	f.bodies = append(f.bodies, bytes.Clone(batch))
	return Result{Accepted: n}, nil
}
func (f *framedSink) Dropped(string, string, string, int) {}
func (f *framedSink) ModeAC(_ string, n int)              { f.modeAC += n }

func TestModeSStreamKeepsBeastRecords(t *testing.T) {
	// A Mode A/C reply, then a DF11 whose timestamp and signal hold 0x1a
	// (escaped on the wire).
	wire := []byte{0x1a, '1', 0, 0, 0, 0, 0, 5, 0x40, 0x12, 0x34,
		0x1a, '2', 0x1a, 0x1a, 0, 0, 0, 0, 7, 0x1a, 0x1a, 0x5d, 0x4c, 0xa1, 0xfa, 0x1a, 0x1a, 0x00, 0x00}
	sink := &framedSink{}
	s := &ModeSStream{Format: Beast, Sensor: "rx", Adapter: "beast-listen", Pub: sink, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := s.Run(context.Background(), bytes.NewReader(wire)); err != nil {
		t.Fatal(err)
	}
	if len(sink.framings) != 1 || sink.framings[0] != bus.FramingBeast {
		t.Fatalf("framings %v", sink.framings)
	}
	type rec struct {
		typ  byte
		ts   uint64
		sig  byte
		data string
	}
	var got []rec
	if err := bus.EachBeast(sink.bodies[0], func(typ byte, ts uint64, sig byte, data []byte) error {
		got = append(got, rec{typ, ts, sig, string(data)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []rec{{'1', 5, 0x40, "\x12\x34"}, {'2', 0x1a0000000007, 0x1a, "\x5d\x4c\xa1\xfa\x1a\x00\x00"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("records %+v, want %+v", got, want)
	}
	if s.ModeAC != 1 || sink.modeAC != 1 {
		t.Fatalf("mode A/C counted %d, reported %d", s.ModeAC, sink.modeAC)
	}
}

func TestModeSStreamLPWithoutFramedSink(t *testing.T) {
	var sink struct{ Sink }
	rec := &framedSink{}
	sink.Sink = lpOnly{rec}
	wire := []byte{0x1a, '1', 0, 0, 0, 0, 0, 5, 0x40, 0x12, 0x34,
		0x1a, '2', 0, 0, 0, 0, 0, 7, 0x20, 0x5d, 0x4c, 0xa1, 0xfa, 0x10, 0x00, 0x00}
	s := &ModeSStream{Format: Beast, Sensor: "rx", Adapter: "beast-listen", Pub: sink, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := s.Run(context.Background(), bytes.NewReader(wire)); err != nil {
		t.Fatal(err)
	}
	want := bus.AppendLP(nil, []byte{0x5d, 0x4c, 0xa1, 0xfa, 0x10, 0x00, 0x00})
	if len(rec.bodies) != 1 || rec.framings[0] != bus.FramingLP || !bytes.Equal(rec.bodies[0], want) || s.ModeAC != 1 {
		t.Fatalf("framings %v bodies %x modeAC %d", rec.framings, rec.bodies, s.ModeAC)
	}
}

// lpOnly hides the FramedSink methods of its sink.
type lpOnly struct{ f *framedSink }

func (l lpOnly) PublishFrames(ctx context.Context, a, p, s string, fr []Frame) (Result, error) {
	return l.f.PublishFrames(ctx, a, p, s, fr)
}
func (l lpOnly) PublishBatch(ctx context.Context, a, p, s string, b []byte, n int, r int64, id string) (Result, error) {
	return l.f.PublishBatch(ctx, a, p, s, b, n, r, id)
}
func (l lpOnly) Dropped(p, a, r string, n int) {}

// TestSplitClock: --beast-listen/--beast-connect take ?clock=12mhz|gps
// (issue 30); anything else is refused with a reason.
func TestSplitClock(t *testing.T) {
	for _, c := range []struct {
		in, addr string
		clock    sensorclock.Kind
		ok       bool
	}{
		{"127.0.0.1:30004", "127.0.0.1:30004", sensorclock.MHz12, true},
		{"rx:30005?clock=gps", "rx:30005", sensorclock.GPS, true},
		{"rx:30005?clock=12mhz", "rx:30005", sensorclock.MHz12, true},
		{"rx:30005?clock=receiver", "", 0, false},
		{"rx:30005?clock=ntp", "", 0, false},
		{"rx:30005?speed=2", "", 0, false},
		{"rx:30005?clock=gps&x=1", "", 0, false},
	} {
		addr, clock, err := SplitClock(c.in)
		if (err == nil) != c.ok || c.ok && (addr != c.addr || clock != c.clock) {
			t.Errorf("%q: %q %v %v", c.in, addr, clock, err)
		}
	}
}

// stuckSender is a BatchSender whose first batch is never acknowledged
// until the test says so (as a batch sent to a stream leader that then
// stopped); it reports each batch sent.
type stuckSender struct {
	framedSink
	sent    chan int
	release chan struct{}
	n       int
}

func (s *stuckSender) SendBatch(_, _, _, _, _, _ string, _ []byte, n int, _ int64, _ string) (Acker, error) {
	i := s.n
	s.n++
	s.sent <- i
	return stuckAck{first: i == 0, n: n, release: s.release}, nil
}

type stuckAck struct {
	first   bool
	n       int
	release chan struct{}
}

func (a stuckAck) Wait(ctx context.Context) (Result, error) {
	if a.first {
		select {
		case <-a.release:
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
	return Result{Accepted: a.n}, nil
}

// A batch whose acknowledgement does not come holds back only its own
// frames: the receiver's next batches are sent while it waits (make
// faults, (b): one batch sent to a CUAS_RAW leader that stopped held a
// Beast receiver's frames, and so SBS, for the publisher's 10 s timeout).
func TestModeSStreamSendsOnWhileABatchWaits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	snd := &stuckSender{sent: make(chan int, 16), release: make(chan struct{})}
	r, w := io.Pipe()
	s := &ModeSStream{Format: Beast, Sensor: "rx", Adapter: "beast-listen", Pub: snd, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, r) }()
	// A DF11 record; batchMax of them make a batch.
	rec := []byte{0x1a, '2', 0, 0, 0, 0, 0, 7, 0x20, 0x5d, 0x4c, 0xa1, 0xfa, 0x10, 0x00, 0x00}
	full := bytes.Repeat(rec, batchMax)
	for want := range 3 {
		go func() { _, _ = w.Write(full) }()
		select {
		case i := <-snd.sent:
			if i != want {
				t.Fatalf("batch %d sent, want %d", i, want)
			}
		case <-ctx.Done():
			t.Fatalf("batch %d was not sent while batch 0 waited for its acknowledgement", want)
		}
	}
	close(snd.release)
	w.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
