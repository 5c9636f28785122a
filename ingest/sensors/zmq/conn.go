package zmq

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// Error is the error type of package zmq.
type Error struct {
	Op string
	// Oversized marks a message larger than the limit: it was skipped, the
	// connection goes on.
	Oversized bool
	Err       error
}

func (e *Error) Error() string { return "zmq: " + e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// hardLimit bounds a frame cuasd will even skip over; a larger size is a
// broken or hostile peer and ends the connection.
const hardLimit = 16 << 20

// Conn is a SUB connection to one ZeroMQ publisher (a PUB or XPUB socket)
// over TCP, subscribed to every topic.
type Conn struct {
	c   net.Conn
	r   *bufio.Reader
	max int
	buf []byte
}

// Dial connects to a publisher at addr (HOST:PORT), performs the ZMTP 3
// NULL handshake as a SUB socket and subscribes to everything. Messages
// larger than max bytes are skipped by Next.
func Dial(ctx context.Context, addr string, max int) (*Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, &Error{Op: "dial", Err: err}
	}
	z := &Conn{c: c, r: bufio.NewReaderSize(c, 64<<10), max: max}
	if err := z.handshake(); err != nil {
		c.Close()
		return nil, err
	}
	return z, nil
}

// handshake exchanges greetings and READY commands, then subscribes. The
// peer gets 10 s for it.
func (z *Conn) handshake() error {
	z.c.SetDeadline(time.Now().Add(10 * time.Second))
	defer z.c.SetDeadline(time.Time{})
	if _, err := z.c.Write(AppendGreeting(nil)); err != nil {
		return &Error{Op: "greeting", Err: err}
	}
	var g [GreetingSize]byte
	if _, err := io.ReadFull(z.r, g[:]); err != nil {
		return &Error{Op: "greeting", Err: err}
	}
	if _, err := ParseGreeting(g[:]); err != nil {
		return err
	}
	if _, err := z.c.Write(AppendReady(nil, "SUB")); err != nil {
		return &Error{Op: "ready", Err: err}
	}
	flags, body, err := z.frame()
	if err != nil {
		return err
	}
	name, props, err := ParseCommand(body)
	if err != nil || flags&flagCommand == 0 || name != "READY" {
		return &Error{Op: "ready", Err: fmt.Errorf("peer answered %q, not READY (%v)", name, err)}
	}
	if t := props["Socket-Type"]; t != "PUB" && t != "XPUB" {
		return &Error{Op: "ready", Err: fmt.Errorf("peer is a %q socket, not a publisher", t)}
	}
	if _, err := z.c.Write(AppendSubscribe(nil, "")); err != nil {
		return &Error{Op: "subscribe", Err: err}
	}
	return nil
}

// frame reads one frame; the body is valid until the next read. A frame
// over the limit is skipped and reported as an oversized *Error.
func (z *Conn) frame() (flags byte, body []byte, err error) {
	hdr, err := z.r.Peek(2)
	if err != nil {
		return 0, nil, &Error{Op: "read", Err: err}
	}
	if hdr[0]&flagLong != 0 {
		if hdr, err = z.r.Peek(9); err != nil {
			return 0, nil, &Error{Op: "read", Err: err}
		}
	}
	flags, size, n, err := FrameHeader(hdr)
	if err != nil {
		return 0, nil, err
	}
	z.r.Discard(n)
	if size > uint64(z.max) {
		if size > hardLimit {
			return flags, nil, &Error{Op: "read", Err: fmt.Errorf("frame of %d bytes", size)}
		}
		if _, err := z.r.Discard(int(size)); err != nil {
			return flags, nil, &Error{Op: "read", Err: err}
		}
		return flags, nil, &Error{Op: "read", Oversized: true, Err: fmt.Errorf("message of %d bytes over the %d-byte limit", size, z.max)}
	}
	if cap(z.buf) < int(size) {
		z.buf = make([]byte, size)
	}
	z.buf = z.buf[:size]
	if _, err := io.ReadFull(z.r, z.buf); err != nil {
		return flags, nil, &Error{Op: "read", Err: err}
	}
	return flags, z.buf, nil
}

// Next returns the next message: its last frame (publishers that send a
// topic frame first put the document last). Commands (PING, ...) are
// skipped; an ERROR command ends the connection. The result is valid until
// the next call. An oversized message yields an *Error with Oversized set,
// after which Next may be called again.
func (z *Conn) Next() ([]byte, error) {
	var oversized error
	for {
		flags, body, err := z.frame()
		var e *Error
		if errors.As(err, &e) && e.Oversized {
			oversized = err
		} else if err != nil {
			return nil, err
		}
		if flags&flagCommand != 0 {
			if name, _, _ := ParseCommand(body); name == "ERROR" {
				return nil, &Error{Op: "read", Err: errors.New("the publisher sent ERROR")}
			}
			continue
		}
		if flags&flagMore != 0 {
			continue
		}
		if oversized != nil {
			return nil, oversized
		}
		return body, nil
	}
}

// Close closes the connection.
func (z *Conn) Close() error { return z.c.Close() }
