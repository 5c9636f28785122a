package cot

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/internal/natstest"
	"github.com/cuasd/cuasd/output"
)

// upReporter signals the first Up; it records the last error.
type upReporter struct {
	once sync.Once
	up   chan struct{}
	mu   sync.Mutex
	err  error
}

func newUpReporter() *upReporter { return &upReporter{up: make(chan struct{})} }
func (r *upReporter) Up()        { r.once.Do(func() { close(r.up) }) }
func (r *upReporter) Retrying(err error) {
	r.mu.Lock()
	r.err = err
	r.mu.Unlock()
}

// runSink runs s against a fresh NATS server until the test ends and
// returns the connection to publish on, once s reported Up.
func runSink(t *testing.T, s *Sink) (*nats.Conn, *upReporter) {
	t.Helper()
	srv := natstest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	rep := newUpReporter()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, output.Conn(srv.Conn), rep) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case <-rep.up:
	case err := <-done:
		t.Fatalf("sink stopped before it was up: %v", err)
	}
	return srv.Conn, rep
}

func publishTrack(t testing.TB, nc *nats.Conn, ev *events.TrackEvent) {
	t.Helper()
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	proto, key, _ := strings.Cut(ev.Track.TrackID, ":")
	if err := nc.Publish(bus.TrackSubject(proto, key), b); err != nil {
		t.Fatal(err)
	}
}

func publishZone(t testing.TB, nc *nats.Conn, ev *events.ZoneEvent) {
	t.Helper()
	b, _ := json.Marshal(ev)
	if err := nc.Publish(bus.ZoneSubject(ev.Zone.ID), b); err != nil {
		t.Fatal(err)
	}
}

// uidOf returns the uid attribute of one CoT document.
func uidOf(b []byte) string {
	_, rest, _ := strings.Cut(string(b), `uid="`)
	uid, _, _ := strings.Cut(rest, `"`)
	return uid
}

// udpSink is a unicast sink to a UDP listener on loopback.
func udpSink(t *testing.T) (*net.UDPConn, *Sink) {
	t.Helper()
	l, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s, err := NewUDP(l.LocalAddr().String(), UDPOptions{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return l, s
}

func TestUDPUnicastOneEventPerDatagram(t *testing.T) {
	l, s := udpSink(t)
	nc, _ := runSink(t, s)
	publishTrack(t, nc, airliner())
	publishTrack(t, nc, droneAlert())
	publishZone(t, nc, circleZone())
	got := readDatagrams(t, l, 4)
	want := map[string]bool{"cuasd.site1.adsb-4CA1FA": true, "cuasd.site1.rid-1581F5BKD223Q00A0123": true,
		"cuasd.site1.rid-1581F5BKD223Q00A0123.operator": true, "cuasd.site1.zone-demo-site": true}
	for _, d := range got {
		wellFormed(t, d)
		if len(d) > MaxDatagram {
			t.Errorf("datagram of %d bytes", len(d))
		}
		delete(want, uidOf(d))
	}
	if len(want) != 0 {
		t.Fatalf("events not received: %v", want)
	}
	st := waitStatus(t, s, "counted 4 sent", func(st output.SinkStatus) bool { return st.Sent == 4 })
	if !st.Connected || st.Kind != "cot-udp" || st.Dropped != 0 || st.Failed != 0 {
		t.Fatalf("status %+v", st)
	}
}

// readDatagrams reads n datagrams (the deadline only guards against a
// hang; the assertion is on what arrived).
func readDatagrams(t *testing.T, l *net.UDPConn, n int) [][]byte {
	t.Helper()
	var out [][]byte
	buf := make([]byte, 65536)
	_ = l.SetReadDeadline(time.Now().Add(20 * time.Second))
	for len(out) < n {
		k, _, err := l.ReadFromUDP(buf)
		if err != nil {
			t.Fatalf("after %d of %d datagrams: %v", len(out), n, err)
		}
		out = append(out, bytes.Clone(buf[:k]))
	}
	return out
}

func TestUDPMulticast(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skip("no loopback interface named lo")
	}
	group := &net.UDPAddr{IP: net.IPv4(239, 2, 3, 1), Port: freeUDPPort(t)}
	l, err := net.ListenMulticastUDP("udp4", lo, group)
	if err != nil {
		t.Skipf("cannot join a multicast group on lo here: %v", err)
	}
	defer l.Close()
	s, err := NewUDP(group.String(), UDPOptions{TTL: 1, Interface: "lo"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	nc, _ := runSink(t, s)
	publishTrack(t, nc, airliner())
	d := readDatagrams(t, l, 1)[0]
	wellFormed(t, d)
	if uidOf(d) != "cuasd.site1.adsb-4CA1FA" {
		t.Fatalf("received %s", d)
	}
}

func freeUDPPort(t *testing.T) int {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// readEvents reads n CoT events from a stream.
func readEvents(t *testing.T, c net.Conn, n int) [][]byte {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReader(c)
	var out [][]byte
	var cur []byte
	for len(out) < n {
		line, err := r.ReadSlice('>')
		if err != nil {
			t.Fatalf("after %d of %d events: %v", len(out), n, err)
		}
		cur = append(cur, line...)
		if bytes.HasSuffix(cur, []byte("</event>")) {
			out = append(out, cur)
			cur = nil
		}
	}
	return out
}

func TestTAKServerTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s, err := NewServer("tcp://"+ln.Addr().String(), TLSFiles{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	nc, _ := runSink(t, s)
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	publishTrack(t, nc, airliner())
	publishZone(t, nc, polygonZone())
	evs := readEvents(t, c, 2)
	for _, e := range evs {
		wellFormed(t, e)
		// The stream framing TAK Servers expect: the declaration, a
		// newline, the event, and the next declaration right after
		// </event> (readEvents splits there, so anything between would
		// start the next one).
		if !bytes.HasPrefix(e, []byte(`<?xml version="1.0" encoding="UTF-8"?>`+"\n<event ")) {
			t.Errorf("event framed as %.60q", e)
		}
	}
	// Tracks and zones arrive on two subscriptions: their order is free.
	if u := map[string]bool{uidOf(evs[0]): true, uidOf(evs[1]): true}; !u["cuasd.site1.adsb-4CA1FA"] || !u["cuasd.site1.zone-prison"] {
		t.Fatalf("stream: %s", bytes.Join(evs, []byte("\n")))
	}
}

func TestSinkThatNeverReadsDoesNotBlock(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		// Accept and never read: the socket buffers fill, writes block.
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	s, err := NewServer("tcp://"+ln.Addr().String(), TLSFiles{}, Options{Queue: 16})
	if err != nil {
		t.Fatal(err)
	}
	nc, _ := runSink(t, s)
	ev := droneAlert()
	for i := range 20000 {
		ev.Track.TrackID = "rid:" + strings.Repeat("X", i%50) + string(rune('a'+i%26))
		publishTrack(t, nc, ev)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	// The handler must have kept taking events (dropping them) while the
	// writer was stuck on the dead socket.
	deadline := time.Now().Add(30 * time.Second)
	for s.Sinks()[0].Dropped == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("nothing dropped: %+v", s.Sinks()[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitStatus waits until cond holds for the sink's status.
func waitStatus(t *testing.T, s *Sink, what string, cond func(output.SinkStatus) bool) output.SinkStatus {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := s.Sinks()[0]
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("sink never %s: %+v", what, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// tlsAccept accepts one TLS connection on ln in the background (the
// client's dial waits for the server's half of the handshake), checking
// the client's certificate; the result arrives on the channel.
func tlsAccept(ln net.Listener) <-chan any {
	ch := make(chan any, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			ch <- err
			return
		}
		tc := c.(*tls.Conn)
		_ = tc.SetDeadline(time.Now().Add(20 * time.Second))
		if err := tc.Handshake(); err != nil {
			ch <- err
			return
		}
		if cs := tc.ConnectionState(); len(cs.PeerCertificates) == 0 || cs.PeerCertificates[0].Subject.CommonName != "cuasd-client" {
			ch <- errors.New("client certificate not presented")
			return
		}
		ch <- tc
	}()
	return ch
}

func accepted(t *testing.T, ch <-chan any) *tls.Conn {
	t.Helper()
	switch v := (<-ch).(type) {
	case *tls.Conn:
		return v
	case error:
		t.Fatalf("TLS server: %v", v)
	}
	return nil
}

func TestTAKServerMutualTLSReconnects(t *testing.T) {
	pki := newPKI(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", pki.serverConfig())
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	s, err := NewServer("ssl://"+addr, pki.clientFiles(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	acc := tlsAccept(ln)
	nc, _ := runSink(t, s)
	c := accepted(t, acc)
	publishTrack(t, nc, airliner())
	if e := readEvents(t, c, 1)[0]; uidOf(e) != "cuasd.site1.adsb-4CA1FA" {
		t.Fatalf("received %s", e)
	}

	// The TAK Server restarts: listener and connection go away.
	_ = c.Close()
	_ = ln.Close()
	waitStatus(t, s, "noticed the disconnection", func(st output.SinkStatus) bool { return !st.Connected })
	ln, err = tls.Listen("tcp", addr, pki.serverConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	publishTrack(t, nc, droneAlert())
	c = accepted(t, tlsAccept(ln))
	defer c.Close()
	got := readEvents(t, c, 2)
	if uidOf(got[0]) != "cuasd.site1.rid-1581F5BKD223Q00A0123" || uidOf(got[1]) != "cuasd.site1.rid-1581F5BKD223Q00A0123.operator" {
		t.Fatalf("after the restart: %s", bytes.Join(got, []byte("\n")))
	}
	waitStatus(t, s, "reconnected", func(st output.SinkStatus) bool { return st.Connected && st.LastError != "" })
}

// handshakeOnly runs a TLS listener with p's server certificate that
// completes each handshake and hangs up, and returns its port.
func handshakeOnly(t *testing.T, p *pki) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", p.serverConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			_ = c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

func TestTAKServerNameIsVerified(t *testing.T) {
	pki := newPKI(t)
	// The certificate names 127.0.0.1 and "tak.test", not "localhost".
	port := handshakeOnly(t, pki)
	s, err := NewServer("ssl://localhost:"+port, pki.clientFiles(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := natstest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = s.Run(ctx, output.Conn(srv.Conn), newUpReporter()) }()
	st := waitStatus(t, s, "failed verification", func(st output.SinkStatus) bool { return st.LastError != "" })
	if st.Connected || !strings.Contains(st.LastError, "certificate") {
		t.Fatalf("status %+v, want a certificate error", st)
	}
}

func TestSinkSkipsOtherVersions(t *testing.T) {
	l, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s, err := NewUDP(l.LocalAddr().String(), UDPOptions{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	nc, _ := runSink(t, s)
	v2 := airliner()
	v2.V = 2
	publishTrack(t, nc, v2)
	_ = nc.Publish(bus.TrackSubject("adsb", "x"), []byte("{not json"))
	publishTrack(t, nc, droneAlert())
	d := readDatagrams(t, l, 1)[0]
	if uidOf(d) != "cuasd.site1.rid-1581F5BKD223Q00A0123" {
		t.Fatalf("first datagram %s; events of another version or malformed must be skipped", d)
	}
}

// TestStreamReplaysPictureOnReconnect: a TAK Server that reconnects gets
// the live picture at once (not after the next keep-alive or zone
// repeat), without what was lost or is stale.
func TestStreamReplaysPictureOnReconnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s, err := NewServer("tcp://"+ln.Addr().String(), TLSFiles{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	nc, _ := runSink(t, s)
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	live, lost, old, zone := airliner(), mavIntercept(), droneAlert(), circleZone()
	live.Time, lost.Time, zone.Time = now, now, now
	lost.Type = events.TypeTrackLost
	old.Time = now.Add(-time.Hour) // long stale
	publishTrack(t, nc, live)
	publishTrack(t, nc, lost)
	publishTrack(t, nc, old)
	publishZone(t, nc, zone)
	readEvents(t, c, 5) // live, lost, old + its operator, zone
	_ = c.Close()

	c, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := readEvents(t, c, 2)
	uids := map[string]bool{uidOf(got[0]): true, uidOf(got[1]): true}
	if !uids["cuasd.site1.adsb-4CA1FA"] || !uids["cuasd.site1.zone-demo-site"] {
		t.Fatalf("replayed %v, want the live track and the zone", uids)
	}
	// Nothing else was replayed: the next event is a new one.
	publishTrack(t, nc, droneAlert())
	if next := readEvents(t, c, 1)[0]; uidOf(next) != "cuasd.site1.rid-1581F5BKD223Q00A0123" {
		t.Fatalf("after the picture came %s", next)
	}
}

// feedEvents is the Events of a sink inside cuasd serve: NATS, and the
// gate's typed track events (here handed over by the test through fn).
type feedEvents struct {
	output.Events
	mu sync.Mutex
	fn func(string, *events.TrackEvent)
}

func (f *feedEvents) FeedTracks(fn func(string, *events.TrackEvent)) (func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fn = fn
	return func() {}, nil
}

func (f *feedEvents) feed(ev *events.TrackEvent) {
	f.mu.Lock()
	fn := f.fn
	f.mu.Unlock()
	fn("", ev)
}

// Inside cuasd serve the sink takes the gate's typed events (no JSON), and
// of a track's updates at most one a second: the feed also hands over the
// positions of fast tracks between two events, for the history.
func TestFedTracksAtMostOncePerSecond(t *testing.T) {
	l, s := udpSink(t)
	srv := natstest.Start(t)
	fe := &feedEvents{Events: output.Conn(srv.Conn)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep := newUpReporter()
	go func() { _ = s.Run(ctx, fe, rep) }()
	<-rep.up
	at := func(ms int, typ string) *events.TrackEvent {
		ev := airliner()
		ev.Type, ev.Time = typ, t0.Add(time.Duration(ms)*time.Millisecond)
		return ev
	}
	for _, ev := range []*events.TrackEvent{
		at(0, events.TypeTrackUpdate),    // sent
		at(500, events.TypeTrackUpdate),  // a fast track's positions: not sent
		at(1000, events.TypeTrackUpdate), // sent
		at(1200, events.TypeTrackLost),   // sent, stale = time
		at(1300, events.TypeTrackUpdate), // seen again: sent
		droneAlert(),                     // the end marker (track and operator)
	} {
		fe.feed(ev)
	}
	var times []string
	for _, d := range readDatagrams(t, l, 6) {
		if uidOf(d) == "cuasd.site1.adsb-4CA1FA" {
			_, rest, _ := strings.Cut(string(d), `time="`)
			tm, _, _ := strings.Cut(rest, `"`)
			times = append(times, tm)
		}
	}
	want := []string{"2026-11-26T06:00:00.000Z", "2026-11-26T06:00:01.000Z", "2026-11-26T06:00:01.200Z", "2026-11-26T06:00:01.300Z"}
	if strings.Join(times, " ") != strings.Join(want, " ") {
		t.Errorf("airliner events at %v, want %v", times, want)
	}
}
