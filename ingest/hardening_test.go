package ingest

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/lifecycle"
)

// recSink records the frames of lp batches.
type recSink struct {
	mu     sync.Mutex
	frames map[string]bool
}

func (s *recSink) PublishFrames(context.Context, string, string, string, []Frame) (Result, error) {
	return Result{}, nil
}

func (s *recSink) PublishBatch(_ context.Context, _, _, _ string, batch []byte, n int, _ int64, _ string) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.frames == nil {
		s.frames = map[string]bool{}
	}
	_, _ = bus.EachFrame(bus.FramingLP, batch, nil, func(_ int, f []byte) error {
		s.frames[string(f)] = true
		return nil
	})
	return Result{Accepted: n}, nil
}

func (s *recSink) Dropped(string, string, string, int) {}

func (s *recSink) has(f []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frames[string(f)]
}

type nopReporter struct{}

func (nopReporter) Up()            {}
func (nopReporter) Retrying(error) {}

// validFrames are n distinct 14-byte DF17 messages (their CRC does not
// matter to the adapter, which only frames).
func validFrames(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte{0x8D, 0x40, 0x6B, 0x90, 0x20, 0x15, 0xA6, 0x78, 0xD4, 0xD2, 0x20, 0xAA, byte(i >> 8), byte(i)}
	}
	return out
}

// beastEncode wraps a Mode S long frame in a Beast record, escaping 0x1a.
func beastEncode(msg []byte) []byte {
	rec := append([]byte{'3', 0, 0, 0, 0, 0, 1, 0x80}, msg...)
	out := []byte{0x1a}
	for _, c := range rec {
		out = append(out, c)
		if c == 0x1a {
			out = append(out, 0x1a)
		}
	}
	return out
}

func avrEncode(msg []byte) []byte {
	const hexd = "0123456789ABCDEF"
	out := []byte{'*'}
	for _, c := range msg {
		out = append(out, hexd[c>>4], hexd[c&15])
	}
	return append(out, ';', '\n')
}

// TestModeSListenersSurviveGarbage sends 1 MB of random bytes and then a
// valid stream to the Beast and AVR listeners (issue 23, also-check): the
// valid frames after the garbage are published, the garbage is counted,
// nothing crashes.
func TestModeSListenersSurviveGarbage(t *testing.T) {
	for _, c := range []struct {
		format ModeSFormat
		enc    func([]byte) []byte
	}{{Beast, beastEncode}, {AVR, avrEncode}} {
		t.Run(string(c.format), func(t *testing.T) {
			l, err := ListenModeS("127.0.0.1:0", c.format, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			sink := &recSink{}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- l.Run(ctx, sink, nopReporter{}) }()
			conn, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			garbage := make([]byte, 1<<20)
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range garbage {
				garbage[i] = byte(rng.Uint32())
			}
			// A newline and a Beast escape end any record the garbage began.
			stream := append(garbage, '\n')
			frames := validFrames(200)
			for _, f := range frames {
				stream = append(stream, c.enc(f)...)
			}
			if _, err := conn.Write(stream); err != nil {
				t.Fatal(err)
			}
			conn.Close()
			waitUntil(t, "the connection to be served", func() bool { return l.Active() == 0 && l.Skipped() > 0 })
			missing := 0
			for _, f := range frames[1:] { // the first may be swallowed by a record the garbage began
				if !sink.has(f) {
					missing++
				}
			}
			if missing > 0 {
				t.Errorf("%d of the %d valid frames after the garbage were not published", missing, len(frames)-1)
			}
			if l.Skipped() < 1<<19 {
				t.Errorf("only %d garbage bytes counted as skipped", l.Skipped())
			}
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
}

// TestModeSListenerBoundsIdleConnections opens a thousand idle
// connections: at most MaxConns are served, the rest are closed at once
// and counted, and a receiver is served again once they go.
func TestModeSListenerBoundsIdleConnections(t *testing.T) {
	l, err := ListenModeS("127.0.0.1:0", Beast, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	sink := &recSink{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = l.Run(ctx, sink, nopReporter{}) }()
	var conns []net.Conn
	for range 1000 {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	waitUntil(t, "every connection to be accepted", func() bool { return uint64(l.Active())+l.Refused() == 1000 })
	if l.Active() != DefaultMaxConns || l.Refused() != 1000-DefaultMaxConns {
		t.Errorf("%d served, %d refused; want %d served", l.Active(), l.Refused(), DefaultMaxConns)
	}
	for _, c := range conns {
		c.Close()
	}
	waitUntil(t, "the idle connections to end", func() bool { return l.Active() == 0 })
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	f := validFrames(1)[0]
	_, _ = c.Write(beastEncode(f))
	c.Close()
	waitUntil(t, "a receiver's frame after the idle ones left", func() bool { return sink.has(f) })
}

// waitUntil polls cond until it holds; 20 s bound a hang, not a timing.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

var _ lifecycle.Reporter = nopReporter{}

// TestModeSListenerClosesIdleConnections: a connection that sends nothing
// held one of the 256 slots for ever; it is now closed after IdleTimeout,
// and a receiver that sends is not.
func TestModeSListenerClosesIdleConnections(t *testing.T) {
	l, err := ListenModeS("127.0.0.1:0", Beast, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	l.IdleTimeout = time.Second
	sink := &recSink{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = l.Run(ctx, sink, nopReporter{}) }()
	idle, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	busy, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	frames := validFrames(100)
	k := 0
	waitUntil(t, "the idle connection to be closed", func() bool {
		_, _ = busy.Write(beastEncode(frames[k%len(frames)])) // the busy receiver keeps talking
		k++
		// Idled counts before the connection's slot is freed.
		return l.Idled() == 1 && l.Active() == 1
	})
	if _, err := busy.Write(beastEncode(frames[0])); err != nil {
		t.Errorf("the busy receiver was disconnected: %v", err)
	}
	_ = idle.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := idle.Read(make([]byte, 1)); err == nil {
		t.Error("the idle connection is still open")
	}
}
