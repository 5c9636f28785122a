package bus

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
)

// Framings of a raw-frame message body (header Cuas-Framing).
const (
	// FramingRaw: the body is exactly one frame (the default).
	FramingRaw = "raw"
	// FramingLP: the body is a batch of frames, each preceded by its length
	// as a big-endian uint16. Easy to produce from any language.
	FramingLP = "lp"
	// FramingHexLines: the body is text, one frame per line as hex
	// (blank lines ignored) — publishable with the plain `nats` CLI.
	FramingHexLines = "hexlines"
)

// MaxFramesPerMessage bounds a batch so one message cannot monopolise a
// decoder worker.
const MaxFramesPerMessage = 10000

// ErrFraming reports a malformed batch body.
var ErrFraming = errors.New("bus: malformed frame batch")

// EachFrame calls fn with every frame of a message body of the given
// framing. For hexlines, scratch is reused for the decoded bytes; fn must
// copy what it keeps. An error from fn stops the iteration and is returned.
func EachFrame(framing string, body []byte, scratch []byte, fn func(i int, frame []byte) error) ([]byte, error) {
	switch framing {
	case "", FramingRaw:
		return scratch, fn(0, body)
	case FramingLP:
		return scratch, eachLP(body, fn)
	case FramingHexLines:
		return eachHexLine(body, scratch, fn)
	}
	return scratch, fmt.Errorf("%w: unknown framing %q", ErrFraming, framing)
}

// eachLP iterates over a length-prefixed batch.
func eachLP(body []byte, fn func(i int, frame []byte) error) error {
	for i := 0; len(body) > 0; i++ {
		if len(body) < 2 {
			return fmt.Errorf("%w: %d trailing byte(s) after frame %d", ErrFraming, len(body), i)
		}
		n := int(binary.BigEndian.Uint16(body))
		if n == 0 || n > len(body)-2 {
			return fmt.Errorf("%w: frame %d declares %d bytes, %d remain", ErrFraming, i, n, len(body)-2)
		}
		if i >= MaxFramesPerMessage {
			return fmt.Errorf("%w: more than %d frames", ErrFraming, MaxFramesPerMessage)
		}
		if err := fn(i, body[2:2+n]); err != nil {
			return err
		}
		body = body[2+n:]
	}
	return nil
}

// eachHexLine iterates over hex lines, decoding each into scratch; a line
// that is not hex is passed to fn as a nil frame.
func eachHexLine(body, scratch []byte, fn func(i int, frame []byte) error) ([]byte, error) {
	i := 0
	for len(body) > 0 {
		line, rest := body, []byte(nil)
		if j := bytes.IndexByte(body, '\n'); j >= 0 {
			line, rest = body[:j], body[j+1:]
		}
		body = rest
		line = trimSpace(line)
		if len(line) == 0 {
			continue
		}
		if i >= MaxFramesPerMessage {
			return scratch, fmt.Errorf("%w: more than %d frames", ErrFraming, MaxFramesPerMessage)
		}
		if cap(scratch) < len(line)/2 {
			scratch = make([]byte, len(line)/2, len(line))
		}
		scratch = scratch[:len(line)/2]
		frame := scratch
		if len(line)%2 != 0 {
			frame = nil
		} else if _, err := hex.Decode(scratch, line); err != nil {
			frame = nil
		}
		if err := fn(i, frame); err != nil {
			return scratch, err
		}
		i++
	}
	return scratch, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// AppendLP appends frame to an lp batch.
func AppendLP(batch, frame []byte) []byte {
	batch = binary.BigEndian.AppendUint16(batch, uint16(len(frame)))
	return append(batch, frame...)
}
