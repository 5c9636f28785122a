package zmq_test

import (
	"bytes"
	"testing"

	"github.com/cuasd/cuasd/ingest/sensors/zmq"
)

// A greeting as libzmq 4.3 sends it (captured from the publisher of
// TestRealPublisher): signature, version 3.1, NULL, not as-server.
var libzmqGreeting = append(append([]byte{0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 3, 1}, append([]byte("NULL"), make([]byte, 16)...)...), make([]byte, 32)...)

func TestGreeting(t *testing.T) {
	g, err := zmq.ParseGreeting(libzmqGreeting)
	if err != nil || g.Major != 3 || g.Minor != 1 || g.Mechanism != "NULL" || g.AsServer {
		t.Fatalf("%+v %v", g, err)
	}
	own := zmq.AppendGreeting(nil)
	if len(own) != zmq.GreetingSize || own[0] != 0xff || own[9] != 0x7f || own[10] != 3 || !bytes.HasPrefix(own[12:], []byte("NULL\x00")) {
		t.Fatalf("own greeting % x", own)
	}
	bad := map[string][]byte{
		"short":  libzmqGreeting[:20],
		"http":   append([]byte("GET / HTTP/1.1\r\n"), make([]byte, 60)...),
		"zmtp 2": append([]byte{0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 2, 0}, make([]byte, 52)...),
		"curve":  append([]byte{0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 3, 0}, append([]byte("CURVE"), make([]byte, 47)...)...),
	}
	for name, b := range bad {
		t.Run(name, func(t *testing.T) {
			if _, err := zmq.ParseGreeting(b); err == nil {
				t.Error("accepted")
			}
		})
	}
}

func TestFrames(t *testing.T) {
	tests := []struct {
		name  string
		b     []byte
		flags byte
		size  uint64
		n     int
		err   bool
	}{
		{"short message", []byte{0x00, 5, 'h'}, 0, 5, 2, false},
		{"more", []byte{0x01, 1, 'x'}, 1, 1, 2, false},
		{"long command", []byte{0x06, 0, 0, 0, 0, 0, 0, 1, 0, 'x'}, 6, 256, 9, false},
		{"long truncated", []byte{0x02, 0, 0}, 2, 0, 0, false},
		{"one byte", []byte{0x00}, 0, 0, 0, false},
		{"reserved bits", []byte{0x80, 1}, 0x80, 0, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			flags, size, n, err := zmq.FrameHeader(tc.b)
			if flags != tc.flags || size != tc.size || n != tc.n || (err != nil) != tc.err {
				t.Errorf("got %#x %d %d %v", flags, size, n, err)
			}
		})
	}
	long := zmq.AppendFrame(nil, 0, bytes.Repeat([]byte{'a'}, 300))
	if _, size, n, _ := zmq.FrameHeader(long); size != 300 || n != 9 || len(long) != 309 {
		t.Errorf("long frame header: size %d n %d", size, n)
	}
}

func TestReadyCommand(t *testing.T) {
	f := zmq.AppendReady(nil, "SUB")
	_, size, n, err := zmq.FrameHeader(f)
	if err != nil || f[0] != 0x04 || int(size) != len(f)-n {
		t.Fatalf("ready frame % x", f)
	}
	name, props, err := zmq.ParseCommand(f[n:])
	if err != nil || name != "READY" || props["Socket-Type"] != "SUB" || len(props) != 1 {
		t.Fatalf("%q %v %v", name, props, err)
	}
	for _, b := range [][]byte{{}, {9, 'R'}, append([]byte{5}, "READY\x0bSocket-Type\x00\x00\x00\x09PUB"...)} {
		if _, _, err := zmq.ParseCommand(b); err == nil {
			t.Errorf("accepted % x", b)
		}
	}
}

// FuzzWire: none of the wire parsers panics or reads past its input, and
// a frame header's length never exceeds what it was given.
func FuzzWire(f *testing.F) {
	f.Add(libzmqGreeting)
	f.Add(zmq.AppendReady(nil, "PUB"))
	f.Add(zmq.AppendFrame(nil, 0x02, bytes.Repeat([]byte{'a'}, 300)))
	f.Add(zmq.AppendSubscribe(nil, ""))
	f.Fuzz(func(t *testing.T, b []byte) {
		zmq.ParseGreeting(b)
		if _, _, n, _ := zmq.FrameHeader(b); n > len(b) {
			t.Fatalf("header length %d of %d bytes", n, len(b))
		}
		zmq.ParseCommand(b)
	})
}
