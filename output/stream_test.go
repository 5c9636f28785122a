package output

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
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
