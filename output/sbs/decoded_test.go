package sbs

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/worker"
	"github.com/cuasd/cuasd/internal/natstest"
	"github.com/cuasd/cuasd/internal/testcapture"
	"github.com/cuasd/cuasd/output"
)

// TestDecodedFeedWritesTheRawLines: inside cuasd serve per-message SBS
// writes from the Mode S messages fusion's feed decodes (issue 30), not
// from the raw frames. Over the real capture stored in CUAS_RAW and read by
// a real worker.Feed, a client reads exactly the lines the raw path
// (AppendMsg: its own decoding and clock mapping) writes for the same
// messages, but for the time each was logged. When the feed starts over
// and replays the stream, nothing is written twice: a marker stored after
// the replay is the one line more.
func TestDecodedFeedWritesTheRawLines(t *testing.T) {
	msgs := captureMsgs(t, 64)
	var want []string
	var raw MessageEncoder
	for _, m := range msgs {
		b, err := raw.AppendMsg(nil, m, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, withoutLogged(t, b)...)
	}
	srv := natstest.StartWithStreams(t, bus.DefaultLimits())
	nc := srv.Connect(t)
	tap := &worker.ModeSTap{}
	o, err := Listen("127.0.0.1:0", false, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// run runs an output until the test ends, and waits for it to stop:
	// nothing of this test may still run (and allocate) in the next one.
	run := func(o *Out) {
		done := make(chan struct{})
		go func() { defer close(done); _ = o.Run(ctx, output.InProcess(nc, nil, nil, tap), nopRep{}) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	run(o)
	conn, err := net.Dial("tcp", o.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	waitClients(t, o)
	for _, m := range msgs {
		if _, err := srv.JS.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	// runFeed starts a feed; stopping it waits until it stopped, as its
	// supervisor does before starting it again.
	runFeed := func() (stop func()) {
		fctx, cancel := context.WithCancel(ctx)
		f := worker.NewFeed(srv.JetStream(), worker.FeedConfig{Decoders: []worker.FrameDecoder{&worker.ADSB{}},
			Apply: func([]decode.Observation) {}, Replay: time.Hour, ModeS: tap}, nil)
		done := make(chan struct{})
		go func() { defer close(done); _ = f.Run(fctx) }()
		return func() { cancel(); <-done }
	}
	stop := runFeed()
	r := bufio.NewReader(conn)
	got := readLines(t, conn, r, len(want))
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("line %d of %d: %q, the raw path's %q", i, len(want), got[i], want[i])
		}
	}
	stop()
	// A second output, started now: the messages stored before it started
	// only build its state.
	late, err := Listen("127.0.0.1:0", false, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	run(late)
	lateConn, err := net.Dial("tcp", late.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer lateConn.Close()
	waitClients(t, late)
	stop = runFeed() // starts over: replays the hour
	defer stop()
	if _, err := srv.JS.PublishMsg(ctx, markerMsg(0xABCDEF)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		conn net.Conn
		r    *bufio.Reader
	}{{"after the feed started over", conn, r}, {"the output started late", lateConn, bufio.NewReader(lateConn)}} {
		if next := readLines(t, c.conn, c.r, 1); !strings.HasPrefix(next[0], "MSG,8,1,1,ABCDEF,") {
			t.Fatalf("%s: the next line is %q, want the marker's MSG,8: a message stored before was written", c.name, next[0])
		}
	}
	t.Logf("%d lines, as the raw path's; none again after the replay", len(want))
}

// markerMsg is a raw message of one all-call reply (DF11) from addr.
func markerMsg(addr uint32) *nats.Msg {
	f := testcapture.WithParity([]byte{11<<3 | 5, byte(addr >> 16), byte(addr >> 8), byte(addr), 0, 0, 0}, 0) // II 0
	m := &nats.Msg{Subject: "cuas.raw.adsb.rx1", Header: nats.Header{}}
	m.Data = bus.AppendBeast(nil, bus.BeastModeSShort, 0, 0, f)
	m.Header.Set(bus.HeaderFraming, bus.FramingBeast)
	m.Header.Set(bus.HeaderRecvTime, strconv.FormatInt(time.Now().UnixNano(), 10))
	return m
}

func waitClients(t *testing.T, o *Out) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); o.bc.Clients() < 1; {
		if time.Now().After(deadline) {
			t.Fatal("the client never counted")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// readLines reads n lines, their logged times (fields 9-10) cleared.
func readLines(t *testing.T, conn net.Conn, r *bufio.Reader, n int) []string {
	t.Helper()
	var out []string
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	for len(out) < n {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d of %d lines: %v", len(out), n, err)
		}
		out = append(out, withoutLogged(t, []byte(l))...)
	}
	return out
}

// withoutLogged splits b into lines and clears each one's logged date and
// time (fields 9-10): when a line was written, not what it says.
func withoutLogged(t *testing.T, b []byte) []string {
	t.Helper()
	var out []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l == "" {
			continue
		}
		f := strings.Split(l, ",")
		if len(f) < 22 {
			t.Fatalf("line %q: %d fields", l, len(f))
		}
		f[8], f[9] = "", ""
		out = append(out, strings.Join(f, ","))
	}
	return out
}
