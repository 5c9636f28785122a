package adsb

import (
	"bytes"
	"iter"
	"math"
)

// Beast record types (the byte after the 0x1a escape).
const (
	BeastModeAC     = '1' // Mode A/C reply, 2 bytes
	BeastModeSShort = '2' // Mode S short frame, 7 bytes
	BeastModeSLong  = '3' // Mode S long frame, 14 bytes
)

const beastEsc = 0x1a

// BeastFrame is one record of the Mode-S Beast binary format: 0x1a, a type
// byte, a 48-bit big-endian timestamp, a signal-level byte and the frame,
// with every 0x1a after the type byte sent twice.
type BeastFrame struct {
	// Type is BeastModeAC, BeastModeSShort or BeastModeSLong.
	Type byte
	// Timestamp is the receiver's 48-bit counter: a 12 MHz clock on
	// Beast-compatible receivers (see Micros), GPS time on some others.
	Timestamp uint64
	// Signal is the signal level byte: amplitude scaled to 0-255.
	Signal uint8
	// Data holds the frame; only the first Len bytes (2, 7 or 14) are used.
	Data [14]byte
	Len  uint8
}

// Bytes returns the frame bytes.
func (f *BeastFrame) Bytes() []byte { return f.Data[:f.Len] }

// Micros returns the timestamp in microseconds, for a 12 MHz counter.
func (f *BeastFrame) Micros() float64 { return float64(f.Timestamp) / 12 }

// RSSI returns the signal level in dBFS, as dump1090 reports it: the level
// byte is an amplitude, so power is its square. A zero level gives -Inf.
func (f *BeastFrame) RSSI() float64 {
	a := float64(f.Signal) / 255
	return 10 * math.Log10(a*a)
}

// ParseBeast parses the Beast record at the start of b into f and returns
// how many bytes of b it used. Errors say what to do next:
//   - ErrIncomplete (n = 0): b ends inside the record; call again with more.
//   - ErrSync (n > 0): b does not start with a record; skip n bytes.
//   - ErrFormat (n > 0): an unknown record type (skip n bytes to the next
//     0x1a) or a lone 0x1a inside the record (a new record began before
//     this one ended: skip n bytes to it).
//
// It does not allocate.
func ParseBeast(b []byte, f *BeastFrame) (n int, err error) {
	if len(b) == 0 {
		return 0, ErrIncomplete
	}
	if b[0] != beastEsc {
		i := bytes.IndexByte(b, beastEsc)
		if i < 0 {
			i = len(b)
		}
		return i, ErrSync
	}
	if len(b) < 2 {
		return 0, ErrIncomplete
	}
	plen := beastPayloadLen(b[1])
	if plen == 0 {
		return beastSkip(b)
	}
	need := 6 + 1 + plen
	var raw [21]byte
	i, err := unescapeBeast(b, raw[:need])
	if err != nil {
		return i, err
	}
	f.Type = b[1]
	f.Timestamp = uint64(raw[0])<<40 | uint64(raw[1])<<32 | uint64(raw[2])<<24 |
		uint64(raw[3])<<16 | uint64(raw[4])<<8 | uint64(raw[5])
	f.Signal = raw[6]
	f.Len = uint8(plen)
	f.Data = [14]byte{}
	copy(f.Data[:], raw[7:need])
	return i, nil
}

// beastPayloadLen is the payload length of a Mode S or Mode A/C record
// of type t, 0 for any other type.
func beastPayloadLen(t byte) int {
	switch t {
	case BeastModeAC:
		return 2
	case BeastModeSShort:
		return 7
	case BeastModeSLong:
		return 14
	}
	return 0
}

// beastSkip answers a record whose type b[1] is not a frame's: the bytes
// to skip and why.
func beastSkip(b []byte) (int, error) {
	if b[1] == beastEsc {
		// An escaped 0x1a: we are inside a record's payload.
		return 2, ErrSync
	}
	// Unknown record type (e.g. a receiver status record): skip to the
	// next possible record start.
	i := bytes.IndexByte(b[1:], beastEsc)
	if i < 0 {
		return len(b), ErrFormat
	}
	return 1 + i, ErrFormat
}

// unescapeBeast fills raw with the record's timestamp, signal and payload
// bytes from b[2:], each doubled 0x1a read as one, and returns the index
// after them. A lone 0x1a is ErrFormat at its index; b ending first is
// ErrIncomplete (0).
func unescapeBeast(b []byte, raw []byte) (int, error) {
	i := 2
	for k := range raw {
		if i >= len(b) {
			return 0, ErrIncomplete
		}
		c := b[i]
		if c == beastEsc {
			if i+1 >= len(b) {
				return 0, ErrIncomplete
			}
			if b[i+1] != beastEsc {
				return i, ErrFormat
			}
			i += 2
		} else {
			i++
		}
		raw[k] = c
	}
	return i, nil
}

// BeastFrames iterates over the records of a Beast byte stream, yielding
// each record with a nil error, and an error (with a zero frame) for each
// run of bytes it had to skip. If b ends inside a record, the last thing
// yielded is ErrIncomplete.
func BeastFrames(b []byte) iter.Seq2[BeastFrame, error] {
	return func(yield func(BeastFrame, error) bool) {
		var f BeastFrame
		for len(b) > 0 {
			n, err := ParseBeast(b, &f)
			if err == ErrIncomplete {
				yield(BeastFrame{}, err)
				return
			}
			b = b[n:]
			if err != nil {
				if !yield(BeastFrame{}, err) {
					return
				}
				continue
			}
			if !yield(f, nil) {
				return
			}
		}
	}
}

// AppendBeast appends the Beast encoding of f to dst, escaping 0x1a bytes.
func AppendBeast(dst []byte, f *BeastFrame) []byte {
	dst = append(dst, beastEsc, f.Type)
	put := func(c byte) {
		dst = append(dst, c)
		if c == beastEsc {
			dst = append(dst, c)
		}
	}
	for s := 40; s >= 0; s -= 8 {
		put(byte(f.Timestamp >> s))
	}
	put(f.Signal)
	for _, c := range f.Data[:f.Len] {
		put(c)
	}
	return dst
}
