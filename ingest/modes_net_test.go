package ingest

import (
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/internal/testlog"
	"github.com/cuasd/cuasd/lifecycle"
)

// Two receivers pushing Beast from two addresses are two sensors, each
// named <format>-in-<peer IP>: their frames land on two raw subjects, so
// per-sensor metrics and de-duplication tell them apart (issue 24,
// item 9). 127.0.0.2 is a second loopback address on Linux.
func TestModeSListenerNamesEachConnection(t *testing.T) {
	js := testJS(t, bus.DefaultLimits())
	pub := NewPublisher(bus.NewJetStream(js), nil)
	l, err := ListenModeS("127.0.0.1:0", Beast, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx, pub, lifecycle.Discard) }()
	defer func() { cancel(); <-done }()

	raw, _ := hex.DecodeString("8D4840D6202CC371C32CE0576098")
	rec := adsb.AppendBeast(nil, &adsb.BeastFrame{Type: adsb.BeastModeSLong, Len: 14, Data: [14]byte(raw), Signal: 100})
	for _, from := range []string{"127.0.0.1", "127.0.0.2"} {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Skipf("cannot connect from %s: %v", from, err)
		}
		// Two records: the parser publishes a record once the next begins.
		if _, err := c.Write(append(append([]byte(nil), rec...), rec...)); err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	st, err := js.Stream(ctx, bus.StreamRaw)
	if err != nil {
		t.Fatal(err)
	}
	for _, sensor := range []string{"beast-in-127-0-0-1", "beast-in-127-0-0-2"} {
		subj := bus.RawSubject("adsb", sensor)
		deadline := time.Now().Add(10 * time.Second)
		for {
			msg, err := st.GetLastMsgForSubject(ctx, subj)
			if err == nil {
				if got := msg.Header.Get(bus.HeaderSensor); got != sensor {
					t.Errorf("%s: Cuas-Sensor %q", subj, got)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no frame on %s: %v", subj, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestNamedListenerServesOneReceiver: a port given one receiver's name
// (--beast-listen HOST:PORT?sensor=NAME) serves one connection at a
// time. A new connection replaces the one before (a receiver that
// reconnects while its old connection is still half open), which is
// closed: two receivers pushing to one named port were one sensor with
// two clocks interleaved (on the real capture, 183 clock resets in a
// minute and tracks refused as jumping), and multilateration took one
// receiver's times for the other's.
func TestNamedListenerServesOneReceiver(t *testing.T) {
	js := testJS(t, bus.DefaultLimits())
	pub := NewPublisher(bus.NewJetStream(js), nil)
	l, err := ListenModeS("127.0.0.1:0", Beast, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	l.Fixed = "rx1"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx, pub, lifecycle.Discard) }()
	defer func() { cancel(); <-done }()

	first, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	waitActive := func(n int) {
		deadline := time.Now().Add(10 * time.Second)
		for l.Active() != n {
			if time.Now().After(deadline) {
				t.Fatalf("%d connections served, want %d", l.Active(), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitActive(1)
	second, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	// The first is closed by cuasd: its read ends (EOF or reset).
	_ = first.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := first.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Fatalf("the replaced connection is still open (read: %v)", err)
	}
	waitActive(1)
	if n := l.Replaced(); n != 1 {
		t.Errorf("Replaced() = %d, want 1", n)
	}
	// The second is served.
	raw, _ := hex.DecodeString("8D4840D6202CC371C32CE0576098")
	rec := adsb.AppendBeast(nil, &adsb.BeastFrame{Type: adsb.BeastModeSLong, Len: 14, Data: [14]byte(raw), Signal: 100})
	if _, err := second.Write(append(append([]byte(nil), rec...), rec...)); err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, bus.StreamRaw)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := st.GetLastMsgForSubject(ctx, bus.RawSubject("adsb", "rx1")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the new connection's frames were not published")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestListenerWarnsOfOneSensorTwice: two connections at once from one
// address to a listener that names connections after their peers are
// one sensor with two receivers' clocks (two receivers behind one NAT
// address); cuasd cannot tell them apart, so it says so, naming the
// sensor and the cure, rather than mixing their timestamps silently.
func TestListenerWarnsOfOneSensorTwice(t *testing.T) {
	var logs testlog.Buffer
	l, err := ListenModeS("127.0.0.1:0", Beast, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx, &recSink{}, lifecycle.Discard) }()
	defer func() { cancel(); <-done }()
	for range 2 {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	waitUntil(t, "the warning", func() bool {
		s := logs.String()
		return strings.Contains(s, "level=WARN") && strings.Contains(s, "sensor=beast-in-127-0-0-1") && strings.Contains(s, "?sensor=")
	})
}

// orderSink records the frames published, in order, taking a while over
// each batch (a sink under load) so that a stream's last frames are still
// being read when the next connection comes.
type orderSink struct {
	recSink
	mu    sync.Mutex
	order []string
}

func (s *orderSink) PublishBatch(_ context.Context, _, _, _ string, batch []byte, n int, _ int64, _ string) (Result, error) {
	time.Sleep(5 * time.Millisecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = bus.EachFrame(bus.FramingLP, batch, nil, func(_ int, f []byte) error {
		s.order = append(s.order, string(f))
		return nil
	})
	return Result{Accepted: n}, nil
}

func (s *orderSink) frames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.order)
}

// TestReconnectIsReadAfterTheOldConnection: a receiver that closes its
// connection and reconnects at once (a feeder or relay re-sending its
// buffer) leaves its last data unread in the old connection; the new
// connection, the same sensor, is read only once the old one has been
// read to its end, so the sensor's frames reach the bus in the order the
// receiver sent them. Served at once, the two interleaved (on the real
// capture: clock resets, positions refused as jumps, 40 % of the history
// and a third of the SBS lines lost; TestDeliveryModesEqual). Fails
// without connTurn.
func TestReconnectIsReadAfterTheOldConnection(t *testing.T) {
	for _, fixed := range []string{"", "rx1"} {
		t.Run("sensor="+fixed, func(t *testing.T) {
			sink := &orderSink{}
			l, err := ListenModeS("127.0.0.1:0", Beast, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			l.Fixed = fixed
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- l.Run(ctx, sink, lifecycle.Discard) }()
			defer func() { cancel(); <-done }()
			const first, second = 12_000, 2_000
			frames := validFrames(first + second)
			for _, part := range [][][]byte{frames[:first], frames[first:]} {
				var b []byte
				for _, f := range part {
					b = append(b, beastEncode(f)...)
				}
				c, err := net.Dial("tcp", l.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.Write(b); err != nil {
					t.Fatal(err)
				}
				c.Close()
			}
			waitUntil(t, "every frame published", func() bool { return len(sink.frames()) >= first+second-2 })
			got := sink.frames()
			index := map[string]int{}
			for i, f := range frames {
				index[string(f)] = i
			}
			last := -1
			for i, f := range got {
				if index[f] < last {
					t.Fatalf("frame %d published after frame %d (at %d of %d): the connections were read interleaved", index[f], last, i, len(got))
				}
				last = index[f]
			}
		})
	}
}
