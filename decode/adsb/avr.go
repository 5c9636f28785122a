package adsb

import (
	"bytes"
	"iter"
)

// AVRFrame is one line of the AVR text format that dump1090 and its
// descendants serve on port 30002:
//
//	*8D406B902015A678D4D220AA4BDA;                 frame
//	:8D406B902015A678D4D220AA4BDA;                 frame
//	@0F1E2D3C4B5A8D406B902015A678D4D220AA4BDA;     12-digit 12 MHz timestamp, frame
//	%0F1E2D3C4B5A8D406B902015A678D4D220AA4BDA;     the same
//	<0F1E2D3C4B5AC88D406B902015A678D4D220AA4BDA;   timestamp, signal level, frame
type AVRFrame struct {
	Data [14]byte
	// Len is 2 (Mode A/C), 7 or 14.
	Len          uint8
	HasTimestamp bool
	Timestamp    uint64
	HasSignal    bool
	Signal       uint8
}

// Bytes returns the frame bytes.
func (f *AVRFrame) Bytes() []byte { return f.Data[:f.Len] }

// ParseAVR parses one AVR line (surrounding white space and a final line
// break are ignored) into f. It returns ErrFormat for anything else. It
// does not allocate.
func ParseAVR(line []byte, f *AVRFrame) error {
	*f = AVRFrame{}
	line = bytes.TrimSpace(line)
	if len(line) < 2 || line[len(line)-1] != ';' {
		return ErrFormat
	}
	body := line[1 : len(line)-1]
	switch line[0] {
	case '*', ':':
	case '@', '%', '<':
		if len(body) < 12 {
			return ErrFormat
		}
		ts, ok := hexUint(body[:12])
		if !ok {
			return ErrFormat
		}
		f.Timestamp, f.HasTimestamp = ts, true
		body = body[12:]
		if line[0] == '<' {
			if len(body) < 2 {
				return ErrFormat
			}
			s, ok := hexUint(body[:2])
			if !ok {
				return ErrFormat
			}
			f.Signal, f.HasSignal = uint8(s), true
			body = body[2:]
		}
	default:
		return ErrFormat
	}
	switch len(body) {
	case 4, 14, 28:
	default:
		return ErrFormat
	}
	for i := 0; i < len(body); i += 2 {
		v, ok := hexUint(body[i : i+2])
		if !ok {
			return ErrFormat
		}
		f.Data[i/2] = byte(v)
	}
	f.Len = uint8(len(body) / 2)
	return nil
}

func hexUint(b []byte) (uint64, bool) {
	var v uint64
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(c)
	}
	return v, true
}

// AVRFrames iterates over the lines of AVR text, skipping blank lines. It
// yields each frame with a nil error, or a zero frame with ErrFormat for a
// line that is not AVR.
func AVRFrames(b []byte) iter.Seq2[AVRFrame, error] {
	return parseLines(b, ParseAVR)
}

// parseLines iterates over the non-blank lines of b, parsing each into a
// reused T with parse (which must reset it, so that a line parse rejects
// yields a zero T) and yielding the T with parse's error. Each line is
// passed with its terminating "\n" (and any "\r"): parse trims it, as
// ParseAVR and ParseSBS do. The text formats (AVR, SBS) are line-oriented
// the same way; only the line parser differs.
func parseLines[T any](b []byte, parse func([]byte, *T) error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var v T
		for line := range bytes.Lines(b) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			err := parse(line, &v)
			if !yield(v, err) {
				return
			}
		}
	}
}
