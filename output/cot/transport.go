package cot

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"

	"github.com/cuasd/cuasd/lifecycle"
)

// deliver writes the queue to the transport until ctx ends: it dials,
// writes, and after a failure closes and dials again with back-off and
// jitter. State changes are logged once each, never once per event.
func (s *Sink) deliver(ctx context.Context, rep lifecycle.Reporter) {
	bo := lifecycle.Backoff{Min: 500 * time.Millisecond, Max: 30 * time.Second}
	for ctx.Err() == nil {
		c, err := s.tr.dial(ctx)
		if err != nil {
			s.down(rep, err)
			if !bo.Sleep(ctx) {
				return
			}
			continue
		}
		s.up(rep, c)
		start := time.Now()
		err = s.pump(ctx, c)
		_ = c.close()
		if ctx.Err() != nil {
			return
		}
		s.down(rep, err)
		// A connection that lasted earns a fresh back-off; one that a
		// server drops at once keeps backing off.
		if time.Since(start) > time.Minute {
			bo.Reset()
		}
		if !bo.Sleep(ctx) {
			return
		}
	}
}

// pump writes the current picture (streams) and then the queued events
// to c until ctx ends, the peer hangs up or a write fails.
func (s *Sink) pump(ctx context.Context, c conn) error {
	if !s.tr.datagram() {
		for _, doc := range s.picture.current(time.Now()) {
			if err := c.write(doc); err != nil {
				return err
			}
			s.sent.Add(1)
			s.m.sent.Inc()
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.done():
			return errors.New("the server closed the connection")
		case b := <-s.q.C():
			if err := c.write(b); err != nil {
				s.failed.Add(1)
				s.m.failed.Inc()
				if !s.tr.datagram() {
					return err
				}
				// A datagram socket stays usable (an ICMP "port unreachable"
				// fails one send); remember the error without reconnecting.
				s.noteErr(err)
				continue
			}
			s.sent.Add(1)
			s.m.sent.Inc()
		}
	}
}

func (s *Sink) up(rep lifecycle.Reporter, c conn) {
	// A stream has the format agreed with the server; a datagram socket
	// sends what was configured (issue 34: a protocol 1 UDP output logged
	// "CoT XML").
	v1 := s.proto == ProtocolV1
	if p, ok := c.(interface{ protocol() int }); ok {
		v1 = p.protocol() == ProtocolV1
	}
	s.v1.Store(v1)
	if !s.connected.Swap(true) {
		s.log.Info("CoT sink connected", "format", formatName(v1))
	}
	s.m.up.Set(1)
	rep.Up()
}

// formatName names a sink's wire format in the log and /v1/outputs.
func formatName(v1 bool) string {
	if v1 {
		return "TAK Protocol version 1"
	}
	return "CoT XML"
}

func (s *Sink) down(rep lifecycle.Reporter, err error) {
	if err == nil {
		err = errors.New("disconnected")
	}
	s.m.up.Set(0)
	rep.Retrying(err)
	changed := s.connected.Swap(false)
	if s.noteErr(err) || changed {
		s.log.Warn("CoT sink not connected; retrying with back-off", "err", err)
	}
}

// noteErr records err; it reports whether its text differs from the last.
func (s *Sink) noteErr(err error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := s.lastErr != err.Error()
	s.lastErr, s.lastErrAt = err.Error(), time.Now().UTC()
	return changed
}

// udpTransport sends each event as one datagram, to a unicast address or a
// multicast group (with a TTL and, optionally, an outgoing interface).
type udpTransport struct {
	addr  *net.UDPAddr
	ttl   int
	iface *net.Interface
}

func (u *udpTransport) datagram() bool { return true }

func (u *udpTransport) dial(context.Context) (conn, error) {
	c, err := net.DialUDP("udp", nil, u.addr)
	if err != nil {
		return nil, err
	}
	if u.addr.IP.IsMulticast() {
		if err := u.setMulticast(c); err != nil {
			_ = c.Close()
			return nil, err
		}
	}
	return udpConn{c}, nil
}

func (u *udpTransport) setMulticast(c *net.UDPConn) error {
	if u.addr.IP.To4() != nil {
		p := ipv4.NewPacketConn(c)
		if err := p.SetMulticastTTL(u.ttl); err != nil {
			return fmt.Errorf("multicast TTL: %w", err)
		}
		if u.iface != nil {
			return p.SetMulticastInterface(u.iface)
		}
		return nil
	}
	p := ipv6.NewPacketConn(c)
	if err := p.SetMulticastHopLimit(u.ttl); err != nil {
		return fmt.Errorf("multicast hop limit: %w", err)
	}
	if u.iface != nil {
		return p.SetMulticastInterface(u.iface)
	}
	return nil
}

type udpConn struct{ c *net.UDPConn }

func (u udpConn) write(b []byte) error  { _, err := u.c.Write(b); return err }
func (u udpConn) done() <-chan struct{} { return nil }
func (u udpConn) close() error          { return u.c.Close() }

// streamTransport streams to a TAK Server over TCP or TLS: XML, or with
// proto ProtocolV1 TAK Protocol version 1 where the server agrees to it.
type streamTransport struct {
	addr  string
	tls   *tls.Config // nil: plain TCP
	proto int
	waits negotiationWaits
}

func (t *streamTransport) datagram() bool { return false }

func (t *streamTransport) dial(ctx context.Context) (conn, error) {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 15 * time.Second}
	var c net.Conn
	var err error
	if t.tls != nil {
		c, err = (&tls.Dialer{NetDialer: d, Config: t.tls}).DialContext(ctx, "tcp", t.addr)
	} else {
		c, err = d.DialContext(ctx, "tcp", t.addr)
	}
	if err != nil {
		return nil, err
	}
	sc := &streamConn{c: c, closed: make(chan struct{})}
	r := bufio.NewReader(c)
	if t.proto == ProtocolV1 {
		stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
		sc.v1, err = negotiate(c, r, t.waits)
		stop()
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("negotiating TAK Protocol version 1: %w", err)
		}
	}
	// A TAK Server sends other clients' events (and pings) down the same
	// stream: read and discard them, so its send buffer never fills, and
	// learn at once when it hangs up.
	go func() {
		_, _ = io.Copy(io.Discard, r)
		sc.once.Do(func() { close(sc.closed) })
	}()
	return sc, nil
}

type streamConn struct {
	c      net.Conn
	closed chan struct{}
	once   sync.Once
	// v1: the server agreed to TAK Protocol version 1; every event is
	// transcoded into a stream frame (in frame, reused) on its way out.
	v1    bool
	frame []byte
}

func (s *streamConn) write(b []byte) error {
	if s.v1 {
		f, err := AppendStream(s.frame[:0], b)
		if err != nil {
			return err // not for the encoder's own XML (FuzzMesh)
		}
		s.frame, b = f, f
	}
	_ = s.c.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, err := s.c.Write(b)
	return err
}
func (s *streamConn) done() <-chan struct{} { return s.closed }
func (s *streamConn) close() error          { return s.c.Close() }

// protocol is the wire format agreed on the connection.
func (s *streamConn) protocol() int {
	if s.v1 {
		return ProtocolV1
	}
	return ProtocolXML
}

// UDPOptions are the --cot-udp settings.
type UDPOptions struct {
	// TTL is the multicast TTL (hop limit); 1 keeps the picture on the
	// local network, as ATAK's SA multicast does.
	TTL int
	// Interface names the multicast interface ("" lets the OS choose).
	Interface string
}

// NewUDP returns a sink sending one event per datagram to addr (unicast,
// or a multicast group such as ATAK's SA default 239.2.3.1:6969). addr is
// HOST:PORT, or udp://HOST:PORT?protocol=1 for TAK Protocol version 1
// (protobuf, mesh framing) instead of XML.
func NewUDP(addr string, u UDPOptions, o Options) (*Sink, error) {
	hostPort, proto, err := splitUDP(addr)
	if err != nil {
		return nil, err
	}
	a, err := ParseUDP(hostPort)
	if err != nil {
		return nil, err
	}
	tr := &udpTransport{addr: a, ttl: max(u.TTL, 1)}
	if u.TTL > 255 {
		return nil, flagErr("--cot-ttl", "must be 1-255, got %d", u.TTL)
	}
	if u.Interface != "" {
		ifi, err := net.InterfaceByName(u.Interface)
		if err != nil {
			return nil, flagErr("--cot-interface", "%q: %v", u.Interface, err)
		}
		tr.iface = ifi
	}
	target := a.String()
	if proto == ProtocolV1 {
		target = "udp://" + target + "?protocol=1"
	}
	s := newSink("cot-udp", target, tr, o)
	s.proto = proto
	s.v1.Store(proto == ProtocolV1)
	return s, nil
}

// splitUDP separates a --cot-udp value into HOST:PORT and the protocol.
func splitUDP(s string) (string, int, error) {
	rest, ok := strings.CutPrefix(s, "udp://")
	if !ok {
		return s, ProtocolXML, nil
	}
	hostPort, query, _ := strings.Cut(rest, "?")
	switch query {
	case "", "protocol=0":
		return hostPort, ProtocolXML, nil
	case "protocol=1":
		return hostPort, ProtocolV1, nil
	}
	return "", 0, flagErr("--cot-udp", "%q: the only option is ?protocol=0 (XML, the default) or ?protocol=1 (TAK Protocol version 1)", s)
}

// NewServer returns a sink streaming to a TAK Server URL (tcp:// or
// ssl://, with ?protocol=1 to ask the server for TAK Protocol version 1);
// files are the client credentials, loaded now so that a bad file stops
// the start with an error naming its flag.
func NewServer(rawURL string, files TLSFiles, o Options) (*Sink, error) {
	srv, err := ParseServer(rawURL)
	if err != nil {
		return nil, err
	}
	tr := &streamTransport{addr: srv.Addr, proto: srv.Protocol, waits: defaultWaits}
	if srv.TLS {
		if tr.tls, err = files.Config(srv.Host); err != nil {
			return nil, err
		}
	}
	return newSink("tak-server", rawURL, tr, o), nil
}
