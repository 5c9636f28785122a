package cot

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/internal/natstest"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/output/cot/cottest"
)

// takServer is the server side of a TAK Server stream, written here from
// the protocol's description (not with the sink's code): it offers
// versions, reads the client's request and answers it.
type takServer struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func acceptTAK(t *testing.T, ln net.Listener) *takServer {
	t.Helper()
	c, err := ln.Accept()
	if err != nil {
		if !errors.Is(err, net.ErrClosed) { // closed: the test is over
			t.Error(err)
		}
		return nil
	}
	_ = c.SetDeadline(time.Now().Add(30 * time.Second)) // a guard against a hang only
	return &takServer{t: t, c: c, r: bufio.NewReader(c)}
}

// control writes a TakControl event of type typ with body inside
// <TakControl>, as TAK Server does (XML, one event after another).
func (s *takServer) control(uid, typ, body string) {
	now := time.Now().UTC().Format(timeLayout)
	fmt.Fprintf(s.c, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<event version="2.0" uid="%s" type="%s" time="%s" start="%s" stale="%s" how="m-g"><point lat="0.0" lon="0.0" hae="0.0" ce="999999" le="999999"/><detail><TakControl>%s</TakControl></detail></event>`,
		uid, typ, now, now, now, body)
}

// xmlEvent reads the next XML event the client sent.
func (s *takServer) xmlEvent() string {
	var b strings.Builder
	for !strings.HasSuffix(b.String(), "</event>") {
		chunk, err := s.r.ReadString('>')
		if err != nil {
			s.t.Errorf("reading XML from the client: %v (after %q)", err, b.String())
			return ""
		}
		b.WriteString(chunk)
	}
	return b.String()
}

// frame reads one TAK Protocol version 1 stream frame and returns its
// TakMessage.
func (s *takServer) frame() []byte {
	magic, err := s.r.ReadByte()
	if err != nil || magic != 0xbf {
		s.t.Errorf("stream frame: magic % x, %v", magic, err)
		return nil
	}
	n, err := binary.ReadUvarint(s.r)
	if err != nil || n > 1<<20 {
		s.t.Errorf("stream frame length %d: %v", n, err)
		return nil
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(s.r, msg); err != nil {
		s.t.Errorf("stream frame of %d bytes: %v", n, err)
		return nil
	}
	return msg
}

// takRequest is what the server reads of the client's request.
type takRequest struct {
	UID     string `xml:"uid,attr"`
	Type    string `xml:"type,attr"`
	Request struct {
		Version string `xml:"version,attr"`
	} `xml:"detail>TakControl>TakRequest"`
}

func newV1Server(t *testing.T) (net.Listener, *Sink) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s, err := NewServer("tcp://"+ln.Addr().String()+"?protocol=1", TLSFiles{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ln, s
}

// TestTAKServerProtocol1Negotiated: the server offers version 1, the sink
// asks for it under the offer's uid and, once accepted, streams 0xbf +
// varint + TakMessage frames that node-cot reads exactly as it reads the
// events' XML.
func TestTAKServerProtocol1Negotiated(t *testing.T) {
	ln, s := newV1Server(t)
	got := make(chan [][]byte, 1)
	go func() {
		srv := acceptTAK(t, ln)
		if srv == nil {
			got <- nil
			return
		}
		defer srv.c.Close()
		srv.control("ping-1", "t-x-c-t", "") // other traffic first: passed over
		srv.control("proto-7f3a", "t-x-takp-v", `<TakProtocolSupport version="1"/><TakServerVersionInfo serverVersion="5.2-RELEASE-test"/>`)
		var req takRequest
		if err := xml.Unmarshal([]byte(srv.xmlEvent()), &req); err != nil || req.Type != "t-x-takp-q" || req.UID != "proto-7f3a" || req.Request.Version != "1" {
			t.Errorf("request %+v (%v), want t-x-takp-q for version 1 under the offer's uid", req, err)
		}
		srv.control("proto-7f3a", "t-x-takp-r", `<TakResponse status="true"/>`)
		got <- [][]byte{srv.frame(), srv.frame(), srv.frame()}
	}()
	nc, _ := runSink(t, s)
	publishTrack(t, nc, airliner())
	publishTrack(t, nc, droneAlert())
	msgs := <-got
	if msgs == nil || t.Failed() {
		t.FailNow()
	}
	var e Encoder
	a, _ := e.AppendTrack(nil, airliner())
	d, _ := e.AppendTrack(nil, droneAlert())
	o, _ := e.AppendOperator(nil, droneAlert())
	fromXML, fromProto := cottest.Parse(t, [][]byte{a, d, o}), cottest.ParseProto(t, msgs)
	for i := range fromXML {
		if fromProto[i].Error != "" || !reflect.DeepEqual(fromXML[i], fromProto[i]) {
			t.Errorf("frame %d:\nproto %+v\nxml   %+v", i, fromProto[i], fromXML[i])
		}
	}
}

// TestTAKServerProtocol1FallsBackToXML: a server that offers nothing, or
// only another version, or refuses the request, gets XML.
func TestTAKServerProtocol1FallsBackToXML(t *testing.T) {
	for _, c := range []struct {
		name   string
		server func(*takServer)
	}{
		{"no offer", func(*takServer) {}},
		{"offers version 2 only", func(srv *takServer) {
			srv.control("proto-2", "t-x-takp-v", `<TakProtocolSupport version="2"/>`)
		}},
		{"refuses", func(srv *takServer) {
			srv.control("proto-r", "t-x-takp-v", `<TakProtocolSupport version="1"/>`)
			if req := srv.xmlEvent(); !strings.Contains(req, `type="t-x-takp-q"`) {
				t.Errorf("expected the request, got %s", req)
			}
			srv.control("proto-r", "t-x-takp-r", `<TakResponse status="false"/>`)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ln, s := newV1Server(t)
			s.tr.(*streamTransport).waits.offer = 300 * time.Millisecond
			got := firstXMLEvent(t, ln, c.server)
			nc, _ := runSink(t, s)
			publishTrack(t, nc, airliner())
			ev := <-got
			if !bytes.HasPrefix([]byte(ev), []byte("<?xml")) || uidOf([]byte(ev)) != "cuasd.site1.adsb-4CA1FA" {
				t.Fatalf("the server received %q, want the airliner as XML", ev)
			}
		})
	}
}

// firstXMLEvent accepts one connection on ln, plays the server's side of
// the negotiation with serve, and delivers the first XML event the sink
// then sends ("" when no connection came).
func firstXMLEvent(t *testing.T, ln net.Listener, serve func(*takServer)) <-chan string {
	got := make(chan string, 1)
	go func() {
		srv := acceptTAK(t, ln)
		if srv == nil {
			got <- ""
			return
		}
		defer srv.c.Close()
		serve(srv)
		got <- srv.xmlEvent()
	}()
	return got
}

// TestTAKServerProtocol1Unanswered: a server that offers version 1 and
// never answers the request is hung up on and dialled again (the
// protocol's rule), the reason reported.
func TestTAKServerProtocol1Unanswered(t *testing.T) {
	ln, s := newV1Server(t)
	s.tr.(*streamTransport).waits.response = 200 * time.Millisecond
	go func() {
		for {
			srv := acceptTAK(t, ln)
			if srv == nil {
				return
			}
			srv.control("proto-q", "t-x-takp-v", `<TakProtocolSupport version="1"/>`)
			_, _ = io.Copy(io.Discard, srv.r) // the request, then silence
		}
	}()
	srv := natstest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = s.Run(ctx, output.Conn(srv.Conn), newUpReporter()) }()
	st := waitStatus(t, s, "gave up waiting", func(st output.SinkStatus) bool { return st.LastError != "" })
	if st.Connected || !strings.Contains(st.LastError, "did not answer") {
		t.Fatalf("status %+v, want the unanswered request", st)
	}
}

// TestTAKServerProtocol1OverTLS: on a mutual-TLS stream the negotiation
// runs inside TLS; a server that offers nothing gets XML on the same
// connection after the wait for the offer timed out (a read timeout
// leaves a TLS connection usable).
func TestTAKServerProtocol1OverTLS(t *testing.T) {
	pki := newPKI(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", pki.serverConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s, err := NewServer("ssl://"+ln.Addr().String()+"?protocol=1", pki.clientFiles(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.tr.(*streamTransport).waits.offer = 300 * time.Millisecond
	got := firstXMLEvent(t, ln, func(*takServer) {}) // offers nothing
	nc, _ := runSink(t, s)
	publishTrack(t, nc, airliner())
	if ev := <-got; uidOf([]byte(ev)) != "cuasd.site1.adsb-4CA1FA" {
		t.Fatalf("the TLS server received %q, want the airliner as XML", ev)
	}
}
