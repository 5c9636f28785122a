package output

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

func TestBroadcastBoundsClients(t *testing.T) {
	b, err := ListenBroadcast("127.0.0.1:0", 4, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Serve(ctx) }()
	var conns []net.Conn
	for i := 0; i < MaxClients; i++ {
		c, err := net.Dial("tcp", b.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	for b.Clients() < MaxClients {
		time.Sleep(5 * time.Millisecond)
	}
	extra, err := net.Dial("tcp", b.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	_ = extra.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := extra.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("client %d: read %v, want the server to close it (EOF)", MaxClients+1, err)
	}
	b.Send([]byte("x"))
	_ = conns[0].SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := conns[0].Read(make([]byte, 1)); n != 1 || err != nil {
		t.Fatalf("an admitted client got %d bytes, %v", n, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestStreamBufferBoundsAndCopies: Put copies (the caller may reuse its
// chunk at once), takes a chunk larger than the bound when empty, drops
// (and counts) a chunk that would pass the bound, and after a take holds
// nothing; a buffer given back is filled again, not the one being written.
func TestStreamBufferBoundsAndCopies(t *testing.T) {
	s := NewStreamBuffer(10)
	p := []byte("0123456789AB")
	if !s.Put(p) {
		t.Fatal("an empty buffer refused a chunk")
	}
	copy(p, "xxxxxxxxxxxx")
	if s.Put([]byte("C")) {
		t.Fatal("a full buffer took another chunk")
	}
	if s.Dropped() != 1 {
		t.Fatalf("dropped %d, want 1", s.Dropped())
	}
	b := s.take()
	if string(b) != "0123456789AB" {
		t.Fatalf("took %q: not a copy of what was put", b)
	}
	if !s.Put([]byte("DE")) || !s.Put([]byte("FG")) {
		t.Fatal("an emptied buffer refused chunks")
	}
	if string(b) != "0123456789AB" {
		t.Fatalf("the taken buffer became %q while it was written", b)
	}
	s.giveBack(b)
	if got := string(s.take()); got != "DEFG" {
		t.Fatalf("took %q, want DEFG", got)
	}
	if !s.Put([]byte("H")) || string(s.buf) != "H" || &s.buf[0] != &b[0] {
		t.Fatalf("the buffer given back was not filled again: %q", s.buf)
	}
}

// recordingConn is a connection whose writes are sent on a channel.
type recordingConn struct {
	net.Conn
	writes chan string
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.writes <- string(p)
	return len(p), nil
}

func (*recordingConn) SetWriteDeadline(time.Time) error { return nil }

// TestWriteFromHoldsAChunkForTheOthers: having been told a chunk waits,
// the writer holds (FlushInterval, here a clock the test turns) and
// writes nothing meanwhile; then it writes it with the chunks that
// arrived while it held, in order, in one write; a lone later chunk is
// held and written the same way. Written at once (the writer before issue
// 30's coalescing), the first chunk would go out before any hold.
func TestWriteFromHoldsAChunkForTheOthers(t *testing.T) {
	conn := &recordingConn{writes: make(chan string, 16)}
	s := NewStreamBuffer(1 << 20)
	holding, release := make(chan struct{}), make(chan struct{})
	hold := func(ctx context.Context) bool {
		holding <- struct{}{}
		select {
		case <-release:
			return true
		case <-ctx.Done():
			return false
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- writeFrom(ctx, conn, s, hold) }()
	deadline := time.After(10 * time.Second) // a hang's limit, not a measurement
	await := func(what string) {
		t.Helper()
		select {
		case <-holding:
		case w := <-conn.writes:
			t.Fatalf("wrote %q before %s", w, what)
		case <-deadline:
			t.Fatalf("no %s", what)
		}
	}
	expect := func(want string) {
		t.Helper()
		select {
		case w := <-conn.writes:
			if w != want {
				t.Fatalf("wrote %q, want %q", w, want)
			}
		case <-deadline:
			t.Fatalf("%q never written", want)
		}
	}
	s.Put([]byte("a"))
	await("hold of the first chunk")
	s.Put([]byte("b"))
	s.Put([]byte("c"))
	if len(conn.writes) != 0 {
		t.Fatalf("wrote %q while holding", <-conn.writes)
	}
	release <- struct{}{}
	expect("abc")
	s.Put([]byte("d"))
	await("hold of a lone chunk")
	release <- struct{}{}
	expect("d")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestWriteFromLeavesWhatItHeldForTheNextConnection: a writer whose
// connection ends while it holds (Push's, before a reconnection) leaves
// what was waiting to the next writer of the same buffer, which writes it
// without another Put (the first Put's signal was the only one).
func TestWriteFromLeavesWhatItHeldForTheNextConnection(t *testing.T) {
	s := NewStreamBuffer(1 << 20)
	s.Put([]byte("held"))
	ctx, cancel := context.WithCancel(context.Background())
	first := &recordingConn{writes: make(chan string, 1)}
	err := writeFrom(ctx, first, s, func(context.Context) bool {
		cancel() // the connection ends while the writer holds
		return false
	})
	if err != nil || len(first.writes) != 0 {
		t.Fatalf("the ended writer: %v, %d writes", err, len(first.writes))
	}
	next := &recordingConn{writes: make(chan string, 1)}
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	go func() { _ = writeFrom(ctx2, next, s, func(context.Context) bool { return true }) }()
	select {
	case w := <-next.writes:
		if w != "held" {
			t.Fatalf("the next connection got %q", w)
		}
	case <-time.After(10 * time.Second): // a hang's limit, not a measurement
		t.Fatal("what was held never reached the next connection")
	}
}

// TestWriteFromDeliversALoneChunk: on the real clock, one chunk and no
// other reaches the peer (FlushInterval late; the deadline is 200 times
// that, a limit for a hang, not a measurement).
func TestWriteFromDeliversALoneChunk(t *testing.T) {
	conn, peer := tcpPair(t)
	s := NewStreamBuffer(1 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = WriteFrom(ctx, conn, s) }()
	const line = "MSG,8,1,1,400159,1\r\n"
	s.Put([]byte(line))
	_ = peer.SetReadDeadline(time.Now().Add(200 * FlushInterval))
	got := make([]byte, len(line))
	if _, err := io.ReadFull(peer, got); err != nil || string(got) != line {
		t.Fatalf("the peer read %q, %v", got, err)
	}
}

// TestWriteFromKeepsABusyFeedWhole: a producer putting chunks of random
// sizes (into one reused buffer) in bursts while the writer holds and
// writes on the real clock and the peer reads: the peer reads every byte,
// in order, and nothing is dropped.
func TestWriteFromKeepsABusyFeedWhole(t *testing.T) {
	conn, peer := tcpPair(t)
	const chunks = 5000
	s := NewStreamBuffer(64 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = WriteFrom(ctx, conn, s) }()
	r := rand.New(rand.NewPCG(30, 1))
	var want, c []byte
	for i := range chunks {
		c = fmt.Appendf(c[:0], "%d:%s;", i, bytes.Repeat([]byte{'x'}, r.IntN(3000)))
		want = append(want, c...)
		s.Put(c)
		if i%500 == 0 {
			time.Sleep(FlushInterval / 4) // let some rounds end between bursts
		}
	}
	_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
	got := make([]byte, len(want))
	_, _ = io.ReadFull(peer, got)
	if s.Dropped() != 0 {
		t.Fatalf("%d chunks dropped", s.Dropped())
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the peer read %d bytes, not the %d written in order", len(got), len(want))
	}
}

// tcpPair is a connected TCP connection and its peer.
func tcpPair(t *testing.T) (conn, peer net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conn, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); peer.Close() })
	return conn, peer
}
