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
	// FramingBeast: the body is a batch of Beast records as a receiver
	// sent them but without the 0x1a sync byte and escaping: a type byte
	// ('1' Mode A/C, 2 data bytes; '2' Mode S short, 7; '3' Mode S long,
	// 14), the 6-byte big-endian 12 MHz timestamp, the signal byte, the
	// data. It keeps what lp loses (the receiver's timestamp and signal
	// level, and the Mode A/C replies), so a Beast relay can forward
	// frames unchanged (issue 21). Decoders see the Mode S data only.
	FramingBeast = "beast"
	// FramingLPT: lp with a time: each frame preceded by its length as a
	// big-endian uint16 and the sensor's time of the frame as a big-endian
	// int64 of nanoseconds (0: none) on the clock the message's Cuas-Clock
	// names ("receiver" or "gps"). The single-frame intake batches frames
	// that came with a Cuas-Sensor-Ns this way (issue 30).
	FramingLPT = "lpt"
)

// Beast record types of FramingBeast (as on the wire).
const (
	BeastModeAC     = '1'
	BeastModeSShort = '2'
	BeastModeSLong  = '3'
)

// BeastDataLen is the data length of a Beast record type, 0 when the type
// is unknown.
func BeastDataLen(typ byte) int {
	switch typ {
	case BeastModeAC:
		return 2
	case BeastModeSShort:
		return 7
	case BeastModeSLong:
		return 14
	}
	return 0
}

// AppendBeast appends one record to a FramingBeast batch. data must have
// the length of typ (BeastDataLen).
func AppendBeast(batch []byte, typ byte, ts uint64, signal byte, data []byte) []byte {
	batch = append(batch, typ, byte(ts>>40), byte(ts>>32), byte(ts>>24), byte(ts>>16), byte(ts>>8), byte(ts), signal)
	return append(batch, data...)
}

// EachBeast calls fn with every record of a FramingBeast body, Mode A/C
// included. data aliases body. It does not allocate.
func EachBeast(body []byte, fn func(typ byte, ts uint64, signal byte, data []byte) error) error {
	for i := 0; len(body) > 0; i++ {
		n := BeastDataLen(body[0])
		if n == 0 {
			return fmt.Errorf("%w: beast record %d has type 0x%02x", ErrFraming, i, body[0])
		}
		if len(body) < 8+n {
			return fmt.Errorf("%w: beast record %d is cut short (%d of %d bytes)", ErrFraming, i, len(body), 8+n)
		}
		if i >= MaxFramesPerMessage {
			return fmt.Errorf("%w: more than %d frames", ErrFraming, MaxFramesPerMessage)
		}
		ts := uint64(body[1])<<40 | uint64(body[2])<<32 | uint64(body[3])<<24 | uint64(body[4])<<16 | uint64(body[5])<<8 | uint64(body[6])
		if err := fn(body[0], ts, body[7], body[8:8+n]); err != nil {
			return err
		}
		body = body[8+n:]
	}
	return nil
}

// MaxFramesPerMessage bounds a batch so one message cannot monopolise a
// decoder worker.
const MaxFramesPerMessage = 10000

// MaxMessageBytes is the largest NATS message (headers and body) the
// embedded server takes from any client: nats-server's own default
// max_payload, which an external cluster has unless configured otherwise
// (issue 32). It fits the largest batch an adapter makes with room to
// spare (MaxFramesPerMessage Mode S frames in Beast framing are 220 KB),
// and it is the CUAS_RAW, CUAS_OBS and CUAS_DEAD streams' message size
// limit, so a larger message is refused before it is stored: a nats.go
// publisher gets "nats: maximum payload exceeded" without sending, a client
// that sends anyway gets -ERR 'Maximum Payload Violation' and is
// disconnected (counted in cuasd_nats_oversize_refused_total), and on a
// cluster whose max_payload is larger JetStream answers "message size
// exceeds maximum allowed". Before, 40 messages of 8 MB on cuas.raw.*
// took cuasd from 55 MB to 925 MB of memory.
const MaxMessageBytes = 1 << 20

// MaxBatchBytes is the largest batch body cuasd itself publishes in one
// message, leaving room for the headers within MaxMessageBytes.
const MaxBatchBytes = MaxMessageBytes - 16<<10

// ErrFraming reports a malformed batch body.
var ErrFraming = errors.New("bus: malformed frame batch")

// EachFrame calls fn with every frame of a message body of the given
// framing. For hexlines, scratch is reused for the decoded bytes; fn must
// copy what it keeps. An error from fn stops the iteration and is returned.
func EachFrame(framing string, body []byte, scratch []byte, fn func(i int, frame []byte) error) ([]byte, error) {
	return EachFrameTS(framing, body, scratch, func(i int, _ uint64, frame []byte) error { return fn(i, frame) })
}

// EachFrameTS is EachFrame that also hands fn each frame's sensor
// timestamp: a Beast record's 48-bit counter (its meaning is the
// message's Cuas-Clock header), 0 for the other framings, whose frames
// share the message's Cuas-Sensor-Ns header if it has one (issue 30).
func EachFrameTS(framing string, body []byte, scratch []byte, fn func(i int, ts uint64, frame []byte) error) ([]byte, error) {
	switch framing {
	case "", FramingRaw:
		return scratch, fn(0, 0, body)
	case FramingLP, FramingLPT:
		return scratch, eachLP(body, framing == FramingLPT, fn)
	case FramingBeast:
		i := 0
		return scratch, EachBeast(body, func(typ byte, ts uint64, _ byte, data []byte) error {
			if typ == BeastModeAC {
				return nil // no address: nothing a decoder can use
			}
			i++
			return fn(i-1, ts, data)
		})
	case FramingHexLines:
		return eachHexLine(body, scratch, func(i int, frame []byte) error { return fn(i, 0, frame) })
	}
	return scratch, fmt.Errorf("%w: unknown framing %q", ErrFraming, framing)
}

// eachLP iterates over a length-prefixed batch: an lp batch (timed
// false) or an lpt one, whose lengths are followed by a time.
func eachLP(body []byte, timed bool, fn func(i int, ts uint64, frame []byte) error) error {
	head := 2
	if timed {
		head = 10
	}
	for i := 0; len(body) > 0; i++ {
		if len(body) < head {
			return fmt.Errorf("%w: %d trailing byte(s) after frame %d", ErrFraming, len(body), i)
		}
		n := int(binary.BigEndian.Uint16(body))
		if n == 0 || n > len(body)-head {
			return fmt.Errorf("%w: frame %d declares %d bytes, %d remain", ErrFraming, i, n, len(body)-head)
		}
		if i >= MaxFramesPerMessage {
			return fmt.Errorf("%w: more than %d frames", ErrFraming, MaxFramesPerMessage)
		}
		var ts uint64
		if timed {
			ts = binary.BigEndian.Uint64(body[2:])
		}
		if err := fn(i, ts, body[head:head+n]); err != nil {
			return err
		}
		body = body[head+n:]
	}
	return nil
}

// AppendLPT appends frame, with its sensor time (ns, 0: none), to an lpt
// batch.
func AppendLPT(batch []byte, ns int64, frame []byte) []byte {
	batch = binary.BigEndian.AppendUint16(batch, uint16(len(frame)))
	batch = binary.BigEndian.AppendUint64(batch, uint64(ns))
	return append(batch, frame...)
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
