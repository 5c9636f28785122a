// Package beastout relays the Mode S and Mode A/C frames cuasd receives as
// Beast binary, the format readsb and dump1090 serve on port 30005 and
// that feeders (FlightAware, adsb.fi, adsb.lol, mlat-client) read: to
// clients of a listening socket (--beast-out-listen) and to an aggregator
// it connects to (--beast-out-connect). It consumes the raw subjects
// (cuas.raw.adsb.>), so each frame keeps the receiver's 12 MHz timestamp
// and signal byte when the receiver sent Beast (bus.FramingBeast); frames
// that came without them (AVR, HTTP ingest) carry zeros, as readsb does.
package beastout

import (
	"math"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/output"
)

// Error is the error type of package beastout.
type Error struct {
	Op  string
	Err error
}

func (e *Error) Error() string { return "beastout: " + e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// AppendRecord appends one Beast record to b: 0x1a, the type, the 48-bit
// timestamp, the signal byte and the data, every 0x1a after the first
// byte doubled. It does not allocate when b has room.
func AppendRecord(b []byte, typ byte, ts uint64, signal byte, data []byte) []byte {
	b = append(b, 0x1a, typ)
	for _, c := range [7]byte{byte(ts >> 40), byte(ts >> 32), byte(ts >> 24), byte(ts >> 16), byte(ts >> 8), byte(ts), signal} {
		b = appendEsc(b, c)
	}
	for _, c := range data {
		b = appendEsc(b, c)
	}
	return b
}

func appendEsc(b []byte, c byte) []byte {
	if c == 0x1a {
		return append(b, 0x1a, 0x1a)
	}
	return append(b, c)
}

// knownTTL is how long an address heard in a CRC-checked frame (DF11,
// DF17) vouches for address/parity replies, as dump1090 does.
const knownTTL = 60e9

// Filter decides which frames are relayed: by default only frames whose
// CRC checks (DF17/18 with a zero remainder, DF11 with a remainder that
// can be an interrogator or surveillance identifier code, below 128, as
// dump1090 accepts) and address/parity replies (DF0/4/5/16/20/21)
// from an address such a frame announced within the last minute, the rule
// dump1090 and readsb apply. The minute is the receiver's (the frames'
// times, output.FrameClock), not the arrival's: a burst of buffered
// frames is judged as the receiver heard them (issue 30). Mode A/C
// replies have no CRC and are relayed. A Filter is not safe for
// concurrent use.
type Filter struct {
	// All relays every frame, CRC-good or not (--beast-out-all).
	All   bool
	known map[uint32]sensorclock.Time // address → its last CRC-checked frame
}

// Pass reports whether a frame of the given Beast type, heard at at, is
// relayed, remembering addresses announced by checked frames.
func (f *Filter) Pass(typ byte, data []byte, at sensorclock.Time) bool {
	if f.All || typ == bus.BeastModeAC {
		return true
	}
	_, ok := f.Address(data, at)
	return ok
}

// Address returns the address of a Mode S frame heard at at that passes
// the CRC rule (whatever All says), remembering addresses announced by
// checked frames. It is how readsb counts an aircraft's messages.
func (f *Filter) Address(data []byte, at sensorclock.Time) (uint32, bool) {
	if len(data) != 7 && len(data) != 14 {
		return 0, false
	}
	if f.known == nil {
		f.known = make(map[uint32]sensorclock.Time)
	}
	df := data[0] >> 3
	syn := adsb.Syndrome(data)
	aa := uint32(data[1])<<16 | uint32(data[2])<<8 | uint32(data[3])
	switch df {
	case 17, 18:
		if syn != 0 || len(data) != 14 {
			return 0, false
		}
		if df == 17 {
			f.heard(aa, at)
		}
		return aa, true
	case 11:
		if syn&^0x7f != 0 {
			return 0, false // the parity is overlaid with a 7-bit II/SI code at most
		}
		f.heard(aa, at)
		return aa, true
	case 0, 4, 5, 16, 20, 21:
		t, ok := f.known[syn]
		return syn, ok && sensorclock.Since(t, at) <= knownTTL
	}
	return 0, false
}

// heard remembers that address aa was heard in a checked frame at at.
// The last such frame to arrive wins: one map store a frame, the work
// this rule did before it judged on the receiver's clock. Keeping the
// later of two times instead (a look-up first, every DF11/DF17) would
// matter only where receivers whose clocks disagree by a minute hear the
// same aircraft.
func (f *Filter) heard(aa uint32, at sensorclock.Time) {
	f.known[aa] = at
}

// Expire forgets addresses not heard for a minute before now (the newest
// frame's time), bounding the filter's memory.
func (f *Filter) Expire(now sensorclock.Time) {
	for a, t := range f.known {
		if sensorclock.Since(t, now) > knownTTL {
			delete(f.known, a)
		}
	}
}

// expireEvery is how much of the frames' clock passes between two
// Filter.Expire calls of an Encoder.
const expireEvery = 10e9

// Encoder turns raw-subject messages into Beast bytes. It is not safe for
// concurrent use.
type Encoder struct {
	Filter Filter
	// Passed and Filtered count the frames relayed and held back;
	// Duplicates the exact duplicates among them (same receiver,
	// timestamp and bytes). Unlike the decoder and per-message SBS, Beast
	// out relays them: it passes on what the receiver sent, as readsb's
	// and dump1090's Beast outputs do (on the shared capture, which holds
	// 4,464 such repeats, both relay them), and the aggregator or
	// mlat-client it feeds judges them itself.
	Passed, Filtered, Duplicates uint64
	// clock times each frame by its receiver's clock.
	clock   output.FrameClock
	expired sensorclock.Time // clock.Latest at the last Filter.Expire
}

// AppendMsg appends the Beast records of one raw message, which arrived
// at now (Unix ns; its Cuas-Recv-Ns header says so when it has one), to
// b: its frames in order, each with its own timestamp and signal when the
// message is bus.FramingBeast, else with timestamp 0 and the Cuas-Signal
// header as the signal byte. Each frame is judged at its receiver's time
// (output.FrameClock). A malformed body relays the frames before the
// fault.
func (e *Encoder) AppendMsg(b []byte, m *nats.Msg, now int64) ([]byte, error) {
	e.clock.Begin(m, now)
	defer e.expire()
	framing := m.Header.Get(bus.HeaderFraming)
	if framing == bus.FramingBeast {
		err := bus.EachBeast(m.Data, func(typ byte, ts uint64, sig byte, data []byte) error {
			b = e.appendFrame(b, typ, ts, ts, sig, data)
			return nil
		})
		return b, err
	}
	sig := signalByte(m.Header.Get(bus.HeaderSignal))
	_, err := bus.EachFrameTS(framing, m.Data, nil, func(_ int, ts uint64, data []byte) error {
		typ := byte(bus.BeastModeSLong)
		switch len(data) {
		case 2:
			typ = bus.BeastModeAC
		case 7:
			typ = bus.BeastModeSShort
		case 14:
		default:
			e.Filtered++
			return nil
		}
		// An lpt frame's time (ns) times it but is no Beast count: 0.
		b = e.appendFrame(b, typ, ts, 0, sig, data)
		return nil
	})
	return b, err
}

// appendFrame relays one frame whose own timestamp is ts as a record
// stamped out.
func (e *Encoder) appendFrame(b []byte, typ byte, ts, out uint64, sig byte, data []byte) []byte {
	at, dup := e.clock.Frame(ts, data)
	if dup {
		e.Duplicates++
	}
	if !e.Filter.Pass(typ, data, at) {
		e.Filtered++
		return b
	}
	e.Passed++
	return AppendRecord(b, typ, out, sig, data)
}

// expire lets the filter forget on the frames' clock, every expireEvery
// of it: a capture replayed hours later keeps its addresses as it did
// live, and a burst forgets those it would have forgotten.
func (e *Encoder) expire() {
	if sensorclock.Since(e.expired, e.clock.Latest) > expireEvery {
		e.Filter.Expire(e.clock.Latest)
		e.expired = e.clock.Latest
	}
}

// signalByte is the Beast signal byte of a level in dBFS: the byte is an
// amplitude (dump1090 squares it for power), so dBFS = 20·log10(byte/255).
// Unknown or unparsable levels give 0.
func signalByte(dbfs string) byte {
	if dbfs == "" {
		return 0
	}
	v, err := strconv.ParseFloat(dbfs, 64)
	if err != nil || v != v || v > 0 {
		return 0
	}
	a := math.Round(255 * math.Pow(10, v/20))
	return byte(max(0, min(255, a)))
}
