package beastout

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/internal/natstest"
	"github.com/cuasd/cuasd/lifecycle"
	"github.com/cuasd/cuasd/output"
)

type nopRep struct{ up chan struct{} }

func (r nopRep) Up() {
	select {
	case r.up <- struct{}{}:
	default:
	}
}
func (nopRep) Retrying(error) {}

var _ lifecycle.Reporter = nopRep{}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// readRecords reads n Beast records from conn.
func readRecords(t *testing.T, conn net.Conn, n int) []adsb.BeastFrame {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var buf []byte
	var out []adsb.BeastFrame
	chunk := make([]byte, 4096)
	for len(out) < n {
		k, err := conn.Read(chunk)
		if err != nil {
			t.Fatalf("after %d records: %v", len(out), err)
		}
		buf = append(buf, chunk[:k]...)
		for {
			var f adsb.BeastFrame
			used, err := adsb.ParseBeast(buf, &f)
			if err == adsb.ErrIncomplete {
				break
			}
			if err != nil {
				t.Fatalf("bad Beast from the output: %v", err)
			}
			buf = buf[used:]
			out = append(out, f)
		}
	}
	return out
}

func TestListenRelaysAndDropsForSlowClients(t *testing.T) {
	srv := natstest.Start(t)
	nc := srv.Connect(t)
	o, err := Listen("127.0.0.1:0", false, quiet())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx, output.Conn(nc), nopRep{}) }()
	fast, err := net.Dial("tcp", o.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	slow, err := net.Dial("tcp", o.Addr()) // never reads
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	for o.bc.Clients() < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	df17 := mustHex(t, "8D406B902015A678D4D220AA4BDA")
	body := bus.AppendBeast(nil, '1', 1, 2, []byte{0x12, 0x34})
	body = bus.AppendBeast(body, '3', 0x1a0000000042, 0x1a, df17)
	msg := &nats.Msg{Subject: bus.RawSubject("adsb", "rx1"), Data: body, Header: nats.Header{bus.HeaderFraming: {bus.FramingBeast}}}
	if err := nc.PublishMsg(msg); err != nil {
		t.Fatal(err)
	}
	got := readRecords(t, fast, 2)
	if got[0].Type != '1' || got[0].Timestamp != 1 || got[1].Timestamp != 0x1a0000000042 || got[1].Signal != 0x1a || !bytes.Equal(got[1].Bytes(), df17) {
		t.Fatalf("relayed %+v", got)
	}
	// Flood: the slow client's buffer overflows (dropped, counted) while the
	// fast one still gets the last message.
	big := bytes.Repeat(body, 400)
	for i := 0; i < 3*maxBehind/len(big)+1024; i++ { // three times what a client may fall behind, and its socket buffers
		_ = nc.PublishMsg(&nats.Msg{Subject: msg.Subject, Data: big, Header: msg.Header})
		if i%512 == 0 {
			_ = nc.Flush()
			_ = fast.SetReadDeadline(time.Now().Add(time.Second))
			_, _ = io.CopyN(io.Discard, fast, int64(len(big))) // keep the fast client drained
		}
	}
	_ = nc.Flush()
	deadline := time.Now().Add(10 * time.Second)
	for o.Dropped() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if o.Dropped() == 0 {
		t.Fatal("a client that never reads lost nothing: the queue is not bounded")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestConnectPushesAndReconnects(t *testing.T) {
	srv := natstest.Start(t)
	nc := srv.Connect(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	o := Connect(ln.Addr().String(), false, quiet())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep := nopRep{up: make(chan struct{}, 1)}
	go func() { _ = o.Run(ctx, output.Conn(nc), rep) }()
	df17 := mustHex(t, "8D406B902015A678D4D220AA4BDA")
	body := bus.AppendBeast(nil, '3', 77, 5, df17)
	for round := 0; round < 2; round++ {
		conn, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		<-rep.up
		if err := nc.PublishMsg(&nats.Msg{Subject: bus.RawSubject("adsb", "rx"), Data: body, Header: nats.Header{bus.HeaderFraming: {bus.FramingBeast}}}); err != nil {
			t.Fatal(err)
		}
		got := readRecords(t, conn, 1)
		if got[0].Timestamp != 77 || got[0].Signal != 5 {
			t.Fatalf("round %d: %+v", round, got[0])
		}
		conn.Close() // the aggregator goes away; the output must come back
	}
}

// TestSimulatedFramesStayInside: a feeder never relays the simulator's
// frames (issue 34: with --demo, 542 made-up frames went out to an
// aggregator) unless asked (IncludeSimulated, --demo-outputs). The
// simulated message is published first: the first record a client reads
// must be the received one.
func TestSimulatedFramesStayInside(t *testing.T) {
	srv := natstest.Start(t)
	nc := srv.Connect(t)
	df17 := mustHex(t, "8D406B902015A678D4D220AA4BDA")
	sim := &nats.Msg{Subject: bus.RawSubject("adsb", "demo"), Data: bus.AppendBeast(nil, '3', 0, 0, df17),
		Header: nats.Header{bus.HeaderFraming: {bus.FramingBeast}, bus.HeaderSimulated: {"1"}}}
	real := &nats.Msg{Subject: bus.RawSubject("adsb", "rx1"), Data: bus.AppendBeast(nil, '3', 0x42, 0x1a, df17),
		Header: nats.Header{bus.HeaderFraming: {bus.FramingBeast}}}
	for _, include := range []bool{false, true} {
		o, err := Listen("127.0.0.1:0", false, quiet())
		if err != nil {
			t.Fatal(err)
		}
		o.IncludeSimulated(include)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { _ = o.Run(ctx, output.Conn(nc), nopRep{}) }()
		c, err := net.Dial("tcp", o.Addr())
		if err != nil {
			t.Fatal(err)
		}
		for o.bc.Clients() < 1 {
			time.Sleep(5 * time.Millisecond)
		}
		for _, m := range []*nats.Msg{sim, real} {
			if err := nc.PublishMsg(m); err != nil {
				t.Fatal(err)
			}
		}
		if got := readRecords(t, c, 1)[0]; (got.Timestamp == 0) != include {
			t.Errorf("include=%v: first record has timestamp %#x (0 is the simulator's)", include, got.Timestamp)
		}
		c.Close()
		cancel()
	}
}
