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

// TestWriteFromWritesWaitingChunksInOrder: chunks that wait in the queue
// (more than one writev takes) reach a TCP peer whole and in order.
func TestWriteFromWritesWaitingChunksInOrder(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const chunks = 3*maxWriteChunks + 5
	q := NewQueue[[]byte](chunks)
	var want []byte
	for i := range chunks {
		c := []byte(fmt.Sprintf("chunk %d of %d\n", i, chunks))
		want = append(want, c...)
		if !q.Put(c) {
			t.Fatal("queue full")
		}
	}
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- WriteFrom(ctx, conn, q) }()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(peer, got); err != nil {
		t.Fatal(err)
	}
	cancel()
	conn.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the peer read\n%s\nwant\n%s", got, want)
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

// TestWriteFromHoldsAChunkForTheOthers: having taken a chunk, the writer
// holds it (FlushInterval, here a clock the test turns) and writes
// nothing meanwhile; then it writes it with the chunks that arrived while
// it held, in order; a lone later chunk is held and written the same way.
// Written at once (the writer before issue 30's coalescing), the first
// chunk would go out before any hold.
func TestWriteFromHoldsAChunkForTheOthers(t *testing.T) {
	conn := &recordingConn{writes: make(chan string, 16)}
	q := NewQueue[[]byte](16)
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
	go func() { done <- writeFrom(ctx, conn, q, hold) }()
	deadline := time.After(10 * time.Second) // a hang's limit, not a measurement
	await := func(what string, ch <-chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case s := <-conn.writes:
			t.Fatalf("wrote %q before %s", s, what)
		case <-deadline:
			t.Fatalf("no %s", what)
		}
	}
	expect := func(want ...string) {
		t.Helper()
		for _, w := range want {
			select {
			case s := <-conn.writes:
				if s != w {
					t.Fatalf("wrote %q, want %q", s, w)
				}
			case <-deadline:
				t.Fatalf("%q never written", w)
			}
		}
	}
	q.Put([]byte("a"))
	await("hold of the first chunk", holding)
	q.Put([]byte("b"))
	q.Put([]byte("c"))
	if len(conn.writes) != 0 {
		t.Fatalf("wrote %q while holding", <-conn.writes)
	}
	release <- struct{}{}
	expect("a", "b", "c")
	q.Put([]byte("d"))
	await("hold of a lone chunk", holding)
	release <- struct{}{}
	expect("d")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestWriteFromDeliversALoneChunk: on the real clock, one chunk and no
// other reaches the peer (FlushInterval late; the deadline is 200 times
// that, a limit for a hang, not a measurement).
func TestWriteFromDeliversALoneChunk(t *testing.T) {
	conn, peer := tcpPair(t)
	q := NewQueue[[]byte](4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = WriteFrom(ctx, conn, q) }()
	const line = "MSG,8,1,1,400159,1\r\n"
	q.Put([]byte(line))
	_ = peer.SetReadDeadline(time.Now().Add(200 * FlushInterval))
	got := make([]byte, len(line))
	if _, err := io.ReadFull(peer, got); err != nil || string(got) != line {
		t.Fatalf("the peer read %q, %v", got, err)
	}
}

// TestWriteFromKeepsABusyFeedWhole: a producer putting chunks of random
// sizes in bursts while the writer holds and writes on the real clock:
// the peer reads every byte, in order, and nothing is dropped.
func TestWriteFromKeepsABusyFeedWhole(t *testing.T) {
	conn, peer := tcpPair(t)
	const chunks = 5000
	q := NewQueue[[]byte](chunks)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = WriteFrom(ctx, conn, q) }()
	r := rand.New(rand.NewPCG(30, 1))
	var want []byte
	for i := range chunks {
		c := fmt.Appendf(nil, "%d:%s;", i, bytes.Repeat([]byte{'x'}, r.IntN(3000)))
		want = append(want, c...)
		q.Put(c)
		if i%500 == 0 {
			time.Sleep(FlushInterval / 4) // let some rounds end between bursts
		}
	}
	_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
	got := make([]byte, len(want))
	_, _ = io.ReadFull(peer, got)
	if q.Dropped() != 0 {
		t.Fatalf("%d chunks dropped", q.Dropped())
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
