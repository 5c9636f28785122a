// Package testcapture turns the real Beast capture in ../shared/data/adsb
// (read in place, through internal/testshared) into raw messages
// (cuas.raw.adsb.rx1) as a receiver's adapter publishes them: for the
// tests of the outputs that read raw frames (per-message SBS, Beast out,
// aircraft.json's message counts), which must judge each frame by its
// receiver's clock (issue 30).
package testcapture

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/internal/testshared"
)

// Then is about when the capture was recorded (its file's date), the
// UTC time given to its first frame.
var Then = time.Date(2018, 4, 3, 19, 5, 0, 0, time.UTC)

// Record is one Beast record of the capture.
type Record struct {
	Type   byte
	TS     uint64 // the receiver's 12 MHz counter
	Signal byte
	Data   []byte
}

// Records reads the capture's records, Mode A/C included, in order.
func Records(tb testing.TB) []Record {
	tb.Helper()
	capture, err := os.ReadFile(testshared.Path(tb, "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin"))
	if err != nil {
		tb.Fatal(err)
	}
	var out []Record
	for f, err := range adsb.BeastFrames(capture) {
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, Record{Type: f.Type, TS: f.Timestamp, Signal: f.Signal, Data: append([]byte(nil), f.Bytes()...)})
	}
	return out
}

// Msgs is the capture in raw messages of size records each (Beast
// framing, its own 12 MHz timestamps), every one received at Then.
func Msgs(tb testing.TB, size int) []*nats.Msg {
	tb.Helper()
	return MsgsAt(tb, size, "", func(int, int64) int64 { return Then.UnixNano() })
}

// MsgsAt is the capture in raw messages of size records each, heard from
// Then on (each record at Then plus its counter's time since the first
// record's). clock is the Cuas-Clock header: "" (none) or "12mhz" the
// capture's own 12 MHz timestamps; "gps" those times as a GPS-timed
// receiver (Radarcape-style) stamps them, seconds of the UTC day above 30
// bits of nanoseconds. arrival gives the Cuas-Recv-Ns of message i from
// the time its latest record was heard (Unix ns; the capture repeats
// records, some thousands of records on): a little after it for live
// data, anything later for a burst or a replay.
func MsgsAt(tb testing.TB, size int, clock string, arrival func(i int, heard int64) int64) []*nats.Msg {
	tb.Helper()
	recs := Records(tb)
	if len(recs) == 0 {
		tb.Fatal("the capture holds no records")
	}
	ts0 := recs[0].TS
	heardAt := func(r Record) int64 { return Then.UnixNano() + int64(r.TS-ts0)*1000/12 }
	stamp := func(r Record) uint64 { return r.TS }
	if clock == "gps" {
		stamp = func(r Record) uint64 {
			ofDay := uint64(heardAt(r) % int64(24*time.Hour))
			return ofDay/1e9<<30 | ofDay%1e9
		}
	}
	var msgs []*nats.Msg
	for from := 0; from < len(recs); from += size {
		var body []byte
		heard := int64(0)
		for _, r := range recs[from:min(from+size, len(recs))] {
			body = bus.AppendBeast(body, r.Type, stamp(r), r.Signal, r.Data)
			heard = max(heard, heardAt(r))
		}
		m := &nats.Msg{Subject: bus.RawPrefix + ".adsb.rx1", Header: nats.Header{}, Data: body}
		m.Header.Set(bus.HeaderFraming, bus.FramingBeast)
		m.Header.Set(bus.HeaderSensor, "rx1")
		if clock != "" {
			m.Header.Set(bus.HeaderClock, clock)
		}
		m.Header.Set(bus.HeaderRecvTime, strconv.FormatInt(arrival(len(msgs), heard), 10))
		msgs = append(msgs, m)
	}
	return msgs
}

// Advance adds d to the timestamp of every record of a bus Beast body
// (bus.AppendBeast's framing), in place: a benchmark sends the same
// frames again as new ones, not as exact duplicates. It stops at a
// record it cannot read.
func Advance(body []byte, d uint64) {
	for len(body) > 0 {
		n := bus.BeastDataLen(body[0])
		if n == 0 || len(body) < 8+n {
			return
		}
		ts := uint64(body[1])<<40 | uint64(body[2])<<32 | uint64(body[3])<<24 | uint64(body[4])<<16 | uint64(body[5])<<8 | uint64(body[6])
		ts = (ts + d) & (1<<48 - 1)
		for i := range 6 {
			body[1+i] = byte(ts >> (40 - 8*i))
		}
		body = body[8+n:]
	}
}

// Frame is one Beast record of a made-up raw message.
type Frame struct {
	Type byte
	TS   uint64 // a 12 MHz counter
	Data []byte
}

// ReplyAfterAMinute is the frames of the known-address tests (issue 30),
// on a 12 MHz receiver clock: the checked squitter sq at 1 s, a corrupted
// copy of it every 5 s (a receiver's clock that skipped 30 s more than
// the arrivals did would count as restarted), the parity reply reply
// from sq's address at 60 s (59 s after sq: the address is known), the
// same again (an exact duplicate), a corrupted copy of sq at 61 s and the
// reply at 63 s (62 s after sq: no longer known). Corrupted copies: 13.
func ReplyAfterAMinute(sq, reply []byte) []Frame {
	const mhz = 12_000_000
	bad := append([]byte(nil), sq...)
	bad[len(bad)-1] ^= 0xff // eight bits: beyond any error correction
	typ := func(b []byte) byte {
		if len(b) == 7 {
			return bus.BeastModeSShort
		}
		return bus.BeastModeSLong
	}
	frames := []Frame{{typ(sq), 1 * mhz, sq}}
	for s := uint64(5); s < 60; s += 5 {
		frames = append(frames, Frame{typ(bad), s * mhz, bad})
	}
	return append(frames, Frame{typ(reply), 60 * mhz, reply}, Frame{typ(reply), 60 * mhz, reply},
		Frame{typ(bad), 61 * mhz, bad}, Frame{typ(reply), 63 * mhz, reply})
}

// Arrivals of made-up frames: Burst all within milliseconds (a buffered
// feeder, a reconnect), Paced each 5 ms after it was heard. heard is
// the frame's time on the receiver's clock (ns since its counter's 0).
var (
	Burst = func(i int, _ int64) int64 { return Then.UnixNano() + int64(i)*10e6 }
	Paced = func(_ int, heard int64) int64 { return Then.UnixNano() + heard + 5e6 }
)

// FrameMsgs puts each frame in a raw message of its own (Beast framing,
// receiver rx1, signal 128) arriving at arrival(i, heard).
func FrameMsgs(frames []Frame, arrival func(i int, heard int64) int64) []*nats.Msg {
	var msgs []*nats.Msg
	for i, f := range frames {
		m := &nats.Msg{Subject: bus.RawPrefix + ".adsb.rx1", Data: bus.AppendBeast(nil, f.Type, f.TS, 128, f.Data), Header: nats.Header{}}
		m.Header.Set(bus.HeaderFraming, bus.FramingBeast)
		m.Header.Set(bus.HeaderRecvTime, strconv.FormatInt(arrival(i, int64(f.TS)*1000/12), 10))
		msgs = append(msgs, m)
	}
	return msgs
}

// Arrival is a raw message's Cuas-Recv-Ns.
func Arrival(m *nats.Msg) int64 {
	v, _ := strconv.ParseInt(m.Header.Get(bus.HeaderRecvTime), 10, 64)
	return v
}

// WithParity sets a Mode S frame's parity field (its last 3 bytes) to its
// CRC XOR ap (an address, or an interrogator code), in place.
func WithParity(f []byte, ap uint32) []byte {
	n := len(f)
	p := adsb.CRC24(f[:n-3]) ^ ap
	f[n-3], f[n-2], f[n-1] = byte(p>>16), byte(p>>8), byte(p)
	return f
}

// beastMask is the range of the Beast 48-bit timestamp.
const beastMask = 1<<48 - 1

// Continuation is a Beast capture to be sent again and again as one
// continuous live feed: repetition r is the capture with every 12 MHz
// timestamp moved forward by r steps of the capture's span plus a gap,
// modulo 2^48 as the receiver's counter wraps. The same frames with the
// same timestamps sent again would be a feeder re-sending them, which
// cuasd drops (docs/design/time.md, "Re-sends").
type Continuation struct {
	recs []adsb.BeastFrame
	step uint64
}

// Continue reads capture (a Beast stream of whole records) for
// repetitions gap ticks apart. A capture with bytes outside records is
// refused: it could not be re-encoded faithfully.
func Continue(capture []byte, gap uint64) (*Continuation, error) {
	var recs []adsb.BeastFrame
	for f, err := range adsb.BeastFrames(capture) {
		if err != nil {
			return nil, fmt.Errorf("capture record %d: %w", len(recs), err)
		}
		recs = append(recs, f)
	}
	return &Continuation{recs: recs, step: (beastSpan(recs) + gap) & beastMask}, nil
}

// Append appends repetition r to b, a shifted timestamp whose bytes now
// hold 0x1a escaped again (repetition 0 is the capture's own bytes), and
// returns it with the number of Mode S records appended.
func (c *Continuation) Append(b []byte, r int) ([]byte, int) {
	shift := uint64(r) * c.step
	modeS := 0
	for _, f := range c.recs {
		if f.Timestamp != 0 { // 0 is "no timestamp"; keep it so
			f.Timestamp = (f.Timestamp + shift) & beastMask
			if f.Timestamp == 0 {
				f.Timestamp = 1 // one tick late rather than untimed
			}
		}
		b = adsb.AppendBeast(b, &f)
		if f.Type == adsb.BeastModeSShort || f.Type == adsb.BeastModeSLong {
			modeS++
		}
	}
	return b, modeS
}

// Continued returns capture's first n repetitions (Continue) as one
// stream, and the Mode S records in it.
func Continued(capture []byte, n int, gap uint64) ([]byte, int, error) {
	c, err := Continue(capture, gap)
	if err != nil {
		return nil, 0, err
	}
	out := make([]byte, 0, len(capture)*n+len(capture)*n/64)
	modeS := 0
	for r := range n {
		var k int
		out, k = c.Append(out, r)
		modeS += k
	}
	return out, modeS, nil
}

// beastSpan is the receiver time from the earliest to the latest
// timestamp of recs, in ticks: the timestamps are followed in order,
// a fall by more than half the counter's range being its wrap, so a
// capture that crosses the wrap (or holds frames a little out of order)
// has its true span.
func beastSpan(recs []adsb.BeastFrame) uint64 {
	var lo, hi, cur int64
	var last uint64
	started := false
	for _, f := range recs {
		if f.Timestamp == 0 {
			continue
		}
		if started {
			d := int64((f.Timestamp - last) & beastMask)
			if d > beastMask/2 {
				d -= beastMask + 1 // backwards, not a wrap
			}
			cur += d
		}
		started, last = true, f.Timestamp
		lo, hi = min(lo, cur), max(hi, cur)
	}
	return uint64(hi - lo)
}
