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

// TestStreamBuffersShareABudget: beyond its reserve a client's buffer
// borrows from the budget its Broadcast's clients share, so stalled
// clients together hold at most the budget plus their reserves; a client
// that keeps up (within its reserve) is never refused for another's lag;
// what a buffer borrowed goes back when it is taken or closed.
func TestStreamBuffersShareABudget(t *testing.T) {
	budget := NewBudget(30)
	slow, other, fast := NewStreamBuffer(100), NewStreamBuffer(100), NewStreamBuffer(100)
	for _, s := range []*StreamBuffer{slow, other, fast} {
		s.Share(budget, 10)
	}
	chunk := []byte("0123456789")
	for range 5 { // 50 bytes: 10 of its reserve, 30 borrowed, then refused
		slow.Put(chunk)
	}
	if len(slow.buf) != 40 || slow.Dropped() != 1 || budget.Used() != 30 {
		t.Fatalf("slow client holds %d bytes, dropped %d, budget used %d: want 40, 1, 30", len(slow.buf), slow.Dropped(), budget.Used())
	}
	if !fast.Put(chunk) {
		t.Fatal("a client within its reserve was refused for another's lag")
	}
	if other.Put(chunk); other.Put(chunk) {
		t.Fatal("a second lagging client borrowed from a spent budget")
	}
	fast.take()
	if budget.Used() != 30 {
		t.Fatalf("budget used %d after the fast client's take, want 30 (it borrowed nothing)", budget.Used())
	}
	slow.take()
	if budget.Used() != 0 {
		t.Fatalf("budget used %d after the slow client's take, want 0", budget.Used())
	}
	if !other.Put(chunk) || budget.Used() != 10 {
		t.Fatalf("the other client could not borrow what was paid back (budget used %d)", budget.Used())
	}
	other.Close()
	if budget.Used() != 0 {
		t.Fatalf("budget used %d after the other client closed, want 0", budget.Used())
	}
}

// TestBroadcastClientPaysBackOnLeaving: a client that leaves leaves
// nothing of the Broadcast's budget borrowed, whether its writer took the
// bytes first or its leaving gave them back.
func TestBroadcastClientPaysBackOnLeaving(t *testing.T) {
	b, err := ListenBroadcast("127.0.0.1:0", 4*ClientReserve, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	c, err := net.Dial("tcp", b.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	for b.Clients() == 0 {
		time.Sleep(time.Millisecond)
	}
	// The client reads nothing; 3 MiB fill its reserve and borrow 2 MiB
	// before the writer's first flush can take them.
	chunk := make([]byte, 64<<10)
	for range 48 {
		b.Send(chunk)
	}
	c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for (b.Clients() != 0 || b.budget.Used() != 0) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if b.Clients() != 0 || b.budget.Used() != 0 {
		t.Fatalf("after the client left: %d clients, %d bytes of the budget still borrowed", b.Clients(), b.budget.Used())
	}
}

// TestStreamBufferTakesALoneChunkBeyondTheBudget: an empty buffer takes
// a chunk larger than its reserve even when the budget is spent (a
// client always gets something), without counting it as borrowed.
func TestStreamBufferTakesALoneChunkBeyondTheBudget(t *testing.T) {
	budget := NewBudget(0) // spent
	s := NewStreamBuffer(100)
	s.Share(budget, 2)
	if !s.Put([]byte("0123456789")) || budget.Used() != 0 || s.borrowed != 0 {
		t.Fatalf("a lone chunk over a spent budget: budget used %d, borrowed %d", budget.Used(), s.borrowed)
	}
	if s.Put([]byte("A")) {
		t.Fatal("a second chunk was taken with nothing left to borrow")
	}
	s.take()
	if budget.Used() != 0 {
		t.Fatalf("budget used %d after take, want 0", budget.Used())
	}
}
