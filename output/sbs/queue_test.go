package sbs

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/decode/worker"
	"github.com/cuasd/cuasd/internal/testcapture"
)

// batchOf is a raw message's batch of n messages whose addresses are
// first, first+1, …, stored at stored with sequence seq.
func batchOf(first uint32, n int, stored int64, seq uint64) *worker.ModeSBatch {
	bt := &worker.ModeSBatch{Meta: &worker.Meta{StoredUnixNano: stored}, Seq: seq}
	for i := range n {
		f := worker.ModeSFrame{At: sensorclock.Time{UnixNano: stored + int64(i)}}
		f.Msg.Address = first + uint32(i)
		bt.Frames = append(bt.Frames, f)
	}
	return bt
}

// TestDecodedQueueHandsBatchesInOrder: the writer gets every batch handed,
// in order, with its own frames, storage time, sequence and handing time;
// a batch that would take the queue past its bound is refused (the
// caller counts it) while a lone batch larger than the bound is taken,
// and once taken the queue holds nothing.
func TestDecodedQueueHandsBatchesInOrder(t *testing.T) {
	q := newDecodedQueue(10)
	in := []*worker.ModeSBatch{batchOf(100, 3, 1000, 1), batchOf(200, 1, 2000, 2), batchOf(300, 5, 3000, 3)}
	for i, bt := range in {
		if !q.put(bt, int64(10+i)) {
			t.Fatalf("batch %d refused below the bound", i)
		}
	}
	if q.put(batchOf(400, 2, 4000, 4), 13) {
		t.Fatal("a batch taking the queue to 11 of 10 messages was taken")
	}
	var w decodedWork
	q.take(&w)
	got := 0
	w.each(func(bt *worker.ModeSBatch, now int64) {
		want := in[got]
		if bt.Meta.StoredUnixNano != want.Meta.StoredUnixNano || bt.Seq != want.Seq || now != int64(10+got) || len(bt.Frames) != len(want.Frames) {
			t.Fatalf("batch %d: stored %d seq %d now %d, %d frames; want %d, %d, %d, %d", got,
				bt.Meta.StoredUnixNano, bt.Seq, now, len(bt.Frames), want.Meta.StoredUnixNano, want.Seq, 10+got, len(want.Frames))
		}
		for i := range bt.Frames {
			if bt.Frames[i].Msg.Address != want.Frames[i].Msg.Address || bt.Frames[i].At != want.Frames[i].At {
				t.Fatalf("batch %d frame %d: address %d at %v, want %d at %v", got, i, bt.Frames[i].Msg.Address, bt.Frames[i].At, want.Frames[i].Msg.Address, want.Frames[i].At)
			}
		}
		got++
	})
	if got != len(in) {
		t.Fatalf("%d batches taken, want %d", got, len(in))
	}
	q.take(&w)
	w.each(func(*worker.ModeSBatch, int64) { t.Fatal("a batch taken twice") })
	if !q.put(batchOf(500, 12, 5000, 5), 20) {
		t.Fatal("a lone batch larger than the bound was refused: it could never be written")
	}
}

// TestDecodedQueueAllocatesNothing: once the queue and the writer's
// buffers have grown, handing and taking allocate nothing (they run for
// every raw message at the pipeline's rate).
func TestDecodedQueueAllocatesNothing(t *testing.T) {
	q := newDecodedQueue(maxQueued)
	bt := batchOf(1, 20, 1000, 1)
	var w decodedWork
	cycle := func() {
		for range 50 {
			q.put(bt, 1)
		}
		q.take(&w)
		w.each(func(*worker.ModeSBatch, int64) {})
	}
	cycle()
	cycle()
	if n := testing.AllocsPerRun(20, cycle); n != 0 {
		t.Fatalf("%.1f allocations a cycle of 50 batches, want 0", n)
	}
}

// tapFeed is a ModeSFeed that lets the test hand batches itself; end is
// the stream's end it reports.
type tapFeed struct {
	fn  func(*worker.ModeSBatch)
	end bus.StreamPos
}

func (f *tapFeed) FeedModeS(_ context.Context, fn func(*worker.ModeSBatch)) (func(), bus.StreamPos, error) {
	f.fn = fn
	return func() {}, f.end, nil
}

// TestFeedDropsWhatTheWriterCannotTake: with the writer not taking (here
// stopped before it began), handing never blocks the feed's goroutine:
// what would take the queue past maxQueued messages is dropped and
// counted in Dropped.
func TestFeedDropsWhatTheWriterCannotTake(t *testing.T) {
	o, err := Listen("127.0.0.1:0", false, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the writer stops at once: nothing is ever taken
	var f tapFeed
	stop, err := o.feedDecoded(ctx, &f)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	defer func() { _ = o.bc.Serve(ctx) }() // ctx has ended: it closes the listener
	bt := batchOf(1, 1024, 1000, 1)
	for i := range maxQueued/1024 + 3 {
		bt.Seq = uint64(i + 1)
		f.fn(bt)
	}
	if got := o.Dropped(); got != 3 {
		t.Fatalf("Dropped %d, want 3 (the batches past %d messages)", got, maxQueued)
	}
}

// TestStartIsTheStreamsNotCuasdsClock: what was stored before the output
// started is told by the raw stream's positions, not by cuasd's clock.
// Here the server's clock is an hour behind cuasd's: a message stored
// after the stream's end at the start is written at once (compared with
// cuasd's clock, it was silenced for the hour), and one stored at or
// before it only builds state.
func TestStartIsTheStreamsNotCuasdsClock(t *testing.T) {
	o, err := Listen("127.0.0.1:0", false, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { defer close(served); _ = o.bc.Serve(ctx) }()
	defer func() { cancel(); <-served }()
	server := time.Now().Add(-time.Hour).UnixNano()
	f := tapFeed{end: bus.StreamPos{Stored: server, Seq: 100}}
	stop, err := o.feedDecoded(ctx, &f)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	conn, err := net.Dial("tcp", o.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	waitClients(t, o)
	for _, c := range []struct {
		addr   uint32
		stored int64
		seq    uint64
	}{
		{0xA00001, server - 1e9, 99}, // before the end: replayed
		{0xA00002, server, 100},      // the end itself
		{0xA00003, server + 1e9, 101},
	} {
		f.fn(allCallBatch(t, c.addr, c.stored, c.seq))
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatalf("no line within 10 s: %v (a server clock behind cuasd's silences the output)", err)
	}
	if !strings.HasPrefix(line, "MSG,8,1,1,A00003,") {
		t.Fatalf("the first line is %q, want A00003's MSG,8: a message stored before the start was written", line)
	}
}

// allCallBatch is a raw message holding one all-call reply (DF11) from
// addr, stored at stored (the server's clock) with sequence seq.
func allCallBatch(t *testing.T, addr uint32, stored int64, seq uint64) *worker.ModeSBatch {
	t.Helper()
	var m adsb.Message
	frame := testcapture.WithParity([]byte{11<<3 | 5, byte(addr >> 16), byte(addr >> 8), byte(addr), 0, 0, 0}, 0)
	if err := adsb.Decode(frame, &m); err != nil {
		t.Fatal(err)
	}
	return &worker.ModeSBatch{Meta: &worker.Meta{StoredUnixNano: stored}, Seq: seq,
		Frames: []worker.ModeSFrame{{At: sensorclock.Time{UnixNano: stored}, Msg: m}}}
}
