package zmq

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// ZMTP 3.x (rfc.zeromq.org/spec/23 and /37) wire format, the subset a SUB
// socket with the NULL security mechanism needs: the greeting, the READY
// command and frames. Pure functions on bytes.

// GreetingSize is the length of a ZMTP 3 greeting.
const GreetingSize = 64

// Frame flag bits.
const (
	flagMore    = 0x01
	flagLong    = 0x02
	flagCommand = 0x04
)

// AppendGreeting appends cuasd's greeting: ZMTP 3.0, mechanism NULL, as
// client. Announcing 3.0 (not 3.1) makes every libzmq since 4.0 expect the
// subscription as a message ("\x01" + topic), which all versions accept.
func AppendGreeting(dst []byte) []byte {
	var g [GreetingSize]byte
	g[0], g[9] = 0xFF, 0x7F
	g[10], g[11] = 3, 0
	copy(g[12:32], "NULL")
	return append(dst, g[:]...)
}

// Greeting is what a peer's greeting says.
type Greeting struct {
	Major, Minor uint8
	Mechanism    string
	AsServer     bool
}

// ParseGreeting checks a peer's 64-byte greeting: the signature, a ZMTP
// version of at least 3 and the NULL mechanism (cuasd speaks no other).
func ParseGreeting(b []byte) (Greeting, error) {
	var g Greeting
	if len(b) < GreetingSize {
		return g, &Error{Op: "greeting", Err: fmt.Errorf("%d bytes, want %d", len(b), GreetingSize)}
	}
	if b[0] != 0xFF || b[9]&1 != 1 {
		return g, &Error{Op: "greeting", Err: fmt.Errorf("not a ZeroMQ peer (signature % x)", b[:10])}
	}
	g.Major, g.Minor = b[10], b[11]
	if g.Major < 3 {
		return g, &Error{Op: "greeting", Err: fmt.Errorf("ZMTP %d.%d; only 3.x is spoken", g.Major, g.Minor)}
	}
	g.Mechanism = string(bytes.TrimRight(b[12:32], "\x00"))
	g.AsServer = b[32] == 1
	if g.Mechanism != "NULL" {
		return g, &Error{Op: "greeting", Err: fmt.Errorf("security mechanism %q; only NULL is supported", g.Mechanism)}
	}
	return g, nil
}

// AppendFrame appends one frame holding body with the given flags (more,
// command); the long form is chosen when body needs it.
func AppendFrame(dst []byte, flags byte, body []byte) []byte {
	if len(body) > 255 {
		dst = append(dst, flags|flagLong)
		dst = binary.BigEndian.AppendUint64(dst, uint64(len(body)))
	} else {
		dst = append(dst, flags, byte(len(body)))
	}
	return append(dst, body...)
}

// AppendReady appends a READY command frame naming the socket type.
func AppendReady(dst []byte, socketType string) []byte {
	body := append([]byte{5}, "READY"...)
	body = append(body, byte(len("Socket-Type")))
	body = append(body, "Socket-Type"...)
	body = binary.BigEndian.AppendUint32(body, uint32(len(socketType)))
	body = append(body, socketType...)
	return AppendFrame(dst, flagCommand, body)
}

// AppendSubscribe appends a ZMTP 3.0 subscription message for topic (""
// subscribes to everything).
func AppendSubscribe(dst []byte, topic string) []byte {
	return AppendFrame(dst, 0, append([]byte{1}, topic...))
}

// FrameHeader parses the header at the start of b: the flags, the body
// size and the header's length. n is 0 when b is too short to tell.
func FrameHeader(b []byte) (flags byte, size uint64, n int, err error) {
	if len(b) < 2 {
		return 0, 0, 0, nil
	}
	flags = b[0]
	if flags&^(flagMore|flagLong|flagCommand) != 0 {
		return flags, 0, 0, &Error{Op: "frame", Err: fmt.Errorf("reserved flag bits set (%#02x)", flags)}
	}
	if flags&flagLong == 0 {
		return flags, uint64(b[1]), 2, nil
	}
	if len(b) < 9 {
		return flags, 0, 0, nil
	}
	return flags, binary.BigEndian.Uint64(b[1:9]), 9, nil
}

// ParseCommand splits a command body into its name and its properties
// (READY's metadata: name → value).
func ParseCommand(body []byte) (name string, props map[string]string, err error) {
	// Lengths are widened to int before adding: 1+body[0] in byte
	// arithmetic wraps at 255 (the fuzzer found it).
	if len(body) < 1 || int(body[0]) > len(body)-1 {
		return "", nil, &Error{Op: "command", Err: fmt.Errorf("truncated command name")}
	}
	end := 1 + int(body[0])
	name = string(body[1:end])
	if name != "READY" {
		return name, nil, nil
	}
	props = map[string]string{}
	for p := body[end:]; len(p) > 0; {
		nl := int(p[0])
		if len(p) < 1+nl+4 {
			return name, props, &Error{Op: "command", Err: fmt.Errorf("truncated READY property")}
		}
		key := string(p[1 : 1+nl])
		vl := binary.BigEndian.Uint32(p[1+nl:])
		p = p[1+nl+4:]
		if uint64(vl) > uint64(len(p)) {
			return name, props, &Error{Op: "command", Err: fmt.Errorf("truncated READY property %q", key)}
		}
		props[key], p = string(p[:vl]), p[vl:]
	}
	return name, props, nil
}
