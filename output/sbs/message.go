package sbs

import (
	"math"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/decode/worker"
	"github.com/cuasd/cuasd/output"
)

// MessageEncoder writes one SBS line per decoded Mode S message, as readsb
// and dump1090 write their port 30003 (issue 30): DF4/20 MSG,5; DF5/21
// MSG,6; DF0/16 MSG,7; DF11 MSG,8; DF17/18 type codes 1-4 MSG,1, 5-8 MSG,2,
// 9-18 and 20-22 MSG,3, 19 MSG,4; each with the fields its message
// carries, the on-ground flag, alert and SPI from the flight status, and
// the message's own time (its receiver's clock, mapped as fusion maps it)
// in fields 7-8. It reads the raw frames (cuas.raw.adsb.>) and decodes
// them itself, positions too (each message's own CPR decoding, as readsb
// writes it, not fusion's judgement). Like readsb it writes only for
// aircraft it tracks: a Mode S reply whose address comes from its parity
// only once the address was heard in a checked squitter, and no
// non-ICAO addresses. It is not safe for concurrent use.
type MessageEncoder struct {
	// clock times each frame by its receiver's clock; aircraft are
	// forgotten on its Latest, the frames' clock, not the wall's, so that
	// a capture replayed with its own times keeps them as live data does.
	clock output.FrameClock
	m     adsb.Message
	ac    aircraftTable
	swept sensorclock.Time
	clk   clock
	// now is the time the lines of one raw message are written, as written.
	now []byte
	// ln is the line being written: its logged time and clock set once a
	// raw message (logAt), its aircraft and time for each message.
	ln line
	// silent keeps the aircraft state without writing lines (Track).
	silent bool
	// sq holds a line's squawk digits (fields.squawk, not allocated).
	sq [4]byte
}

// msgAircraft is what the encoder keeps of one aircraft: when it was last
// heard in a checked squitter, and its CPR frames. It is 128 bytes, two
// cache lines (TestMsgAircraftIsTwoCacheLines): one is read for every
// message of the aircraft, both for a position.
type msgAircraft struct {
	heard     when // of the last DF11/17/18
	even, odd cprHalf
	fix       when // ok: a position was ever decoded
	fixLat    float64
	fixLon    float64
}

// when is a sensorclock.Time as the encoder keeps it: what
// sensorclock.Since reads (not its Source), with two flags of what it
// times in what would otherwise be its padding.
type when struct {
	unixNano, sensorNs int64
	clock              uint32
	ok, surface        bool
}

// keep is t as kept, with flags ok and surface.
func keep(t sensorclock.Time, ok, surface bool) when {
	return when{unixNano: t.UnixNano, sensorNs: t.SensorNs, clock: t.Clock, ok: ok, surface: surface}
}

// since is sensorclock.Since(w, t).
func (w *when) since(t sensorclock.Time) int64 {
	return sensorclock.Since(sensorclock.Time{UnixNano: w.unixNano, SensorNs: w.sensorNs, Clock: w.clock}, t)
}

// cprHalf is an even or odd CPR position and when it was heard (t.ok: one
// was; t.surface: a surface position).
type cprHalf struct {
	t        when
	lat, lon uint32
}

// Limits of the message encoder's aircraft state, readsb's.
const (
	// knownFor is how long a squitter makes an address known for the
	// replies whose address comes from their parity.
	knownFor = int64(60 * time.Second)
	// pairWindow is the longest time between an even and an odd position
	// that are decoded together.
	pairWindow = int64(10 * time.Second)
	// refFor is the oldest position a single position is decoded against.
	refFor = int64(60 * time.Second)
)

// AppendMsg appends the lines of one raw message (cuas.raw.adsb.{sensor})
// to b, logged at now.
func (e *MessageEncoder) AppendMsg(b []byte, m *nats.Msg, now time.Time) ([]byte, error) {
	e.clock.Begin(m, now.UnixNano())
	e.logAt(now)
	_, err := bus.EachFrameTS(m.Header.Get(bus.HeaderFraming), m.Data, nil, func(_ int, ts uint64, frame []byte) error {
		if at, dup := e.clock.Frame(ts, frame); !dup {
			b = e.appendFrame(b, frame, at)
		}
		return nil
	})
	e.sweep(e.clock.Latest)
	return b, err
}

// Track keeps the aircraft state of m's frames (the addresses its
// squitters make known, its CPR halves and positions) without writing a
// line: what AppendMsg does while no client listens, at a fraction of its
// cost, so that a client connecting later gets the lines it would have
// got had the encoder written all along (TestTrackThenAppendMatchesAppend).
func (e *MessageEncoder) Track(m *nats.Msg, now time.Time) error {
	e.silent = true
	_, err := e.AppendMsg(nil, m, now)
	e.silent = false
	return err
}

// sweep forgets aircraft not heard for two minutes before now (the
// newest frame's time), once a minute of that clock.
func (e *MessageEncoder) sweep(now sensorclock.Time) {
	if sensorclock.Since(e.swept, now) < int64(time.Minute) {
		return
	}
	e.swept = now
	e.ac.forget(func(a *msgAircraft) bool { return a.heard.since(now) > int64(2*time.Minute) })
}

// msgType is the SBS transmission type of a message, 0 for none.
func msgType(m *adsb.Message) int {
	switch m.DF {
	case 4, 20:
		return 5
	case 5, 21:
		return 6
	case 0, 16:
		return 7
	case 11:
		return 8
	case 17, 18:
		switch tc := m.TypeCode; {
		case tc >= 1 && tc <= 4:
			return 1
		case tc >= 5 && tc <= 8:
			return 2
		case tc >= 9 && tc <= 18, tc >= 20 && tc <= 22:
			return 3
		case tc == 19:
			return 4
		}
	}
	return 0
}

// appendFrame appends the line of one frame heard at at.
func (e *MessageEncoder) appendFrame(b, frame []byte, at sensorclock.Time) []byte {
	if adsb.DecodeWith(frame, &e.m, adsb.Options{}) != nil {
		return b
	}
	return e.appendMessage(b, &e.m, at)
}

// AppendDecoded appends the lines of the Mode S messages of one raw
// message that fusion's feed decoded (output.ModeSFeed, inside cuasd
// serve), logged at now: the lines AppendMsg writes for that raw message,
// without decoding its frames again, with the times fusion gave them.
func (e *MessageEncoder) AppendDecoded(b []byte, bt *worker.ModeSBatch, now time.Time) []byte {
	e.logAt(now)
	for i := range bt.Frames {
		f := &bt.Frames[i]
		e.clock.Advance(f.At)
		b = e.appendMessage(b, &f.Msg, f.At)
	}
	e.sweep(e.clock.Latest)
	return b
}

// logAt sets the time the lines of one raw message are logged at, when
// they are written.
func (e *MessageEncoder) logAt(now time.Time) {
	if !e.silent {
		e.now = e.clk.append(e.now[:0], now)
		e.ln = line{byNs: true, nowText: e.now, clk: &e.clk}
	}
}

// TrackDecoded is Track for AppendDecoded: it keeps the aircraft state of
// bt's messages without writing a line.
func (e *MessageEncoder) TrackDecoded(bt *worker.ModeSBatch) {
	e.silent = true
	e.AppendDecoded(nil, bt, time.Time{})
	e.silent = false
}

// appendMessage appends the line of one decoded message heard at at,
// logged at e.now.
func (e *MessageEncoder) appendMessage(b []byte, m *adsb.Message, at sensorclock.Time) []byte {
	if m.CRC == adsb.CRCBad || m.CRC == adsb.CRCUnknown {
		return b
	}
	typ := msgType(m)
	if typ == 0 || !m.AddressType.IsICAO() {
		return b
	}
	a := e.ac.find(m.Address)
	if m.CRC == adsb.CRCAddressParity {
		if a == nil || a.heard.since(at) > knownFor {
			return b // any corrupted reply yields some address
		}
	} else {
		if a == nil {
			a = e.ac.insert(m.Address)
		}
		if a.heard.since(at) >= 0 { // sensorclock.Newer
			a.heard = keep(at, true, false)
		}
	}
	var f fields
	if typ == 3 || typ == 2 {
		f.lat, f.lon, f.hasPos = a.position(m, at)
	}
	if e.silent {
		return b
	}
	lineFields(m, &f, &e.sq)
	e.ln.addr, e.ln.genNs = m.Address, at.UnixNano
	return e.ln.appendMsg(b, typ, &f)
}

// lineFields sets f to the fields a message carries (all but the
// position); a squawk's digits are written into sq.
func lineFields(m *adsb.Message, f *fields, sq *[4]byte) {
	if m.HasCallsign && m.Callsign.Valid() {
		f.callsign = m.Callsign[:m.Callsign.Len()]
	}
	if m.HasAltitude && !m.AltitudeGNSS {
		f.alt, f.hasAlt = int64(m.Altitude), true
	}
	if m.HasGroundspeed {
		f.gs, f.hasGS = int64(math.Round(m.Groundspeed)), true
	}
	if m.HasTrack {
		f.trk, f.hasTrk = int64(math.Round(m.Track))%360, true
	}
	if m.HasVerticalRate {
		f.vr, f.hasVR = int64(m.VerticalRate), true
	}
	if m.HasSquawk {
		f.squawk, f.hasSquawk = m.Squawk.Append(sq[:0]), true
	}
	switch m.DF {
	case 4, 5, 20, 21:
		// Flight status: 2-4 alert, 4-5 SPI.
		f.hasFlags = true
		f.alert = m.FS >= 2 && m.FS <= 4
		f.spi = m.FS == 4 || m.FS == 5
	}
	switch worker.AirGround(m) {
	case decode.AirGroundGround:
		f.ground, f.hasGround = true, true
	case decode.AirGroundAirborne:
		f.hasGround = true
	}
}

// position decodes the message's CPR position: globally with the other
// half of a pair at most pairWindow apart on the receiver's clock (the
// newest deciding), else locally against the last position at most refFor
// old; ok false when neither applies. Two halves heard by two receivers
// are paired only for the aircraft's first position: only their UTC
// times relate the two clocks, and in a burst (several receivers
// reconnecting at once) those are held at the arrivals, so halves heard a
// minute apart could pair into a wrong position. Once there is a
// position, a receiver's half is decoded locally against it instead,
// whoever heard it: that takes only its being within a few hundred
// kilometres, which no aircraft flies in a feeder's buffer. (The first
// pair is each receiver's own but when the slots hold halves of several
// receivers, as they do with every receiver hearing every message; a
// wrong first pair would take one receiver more than pairWindow ahead of
// another before either had paired two of its own halves.)
func (a *msgAircraft) position(m *adsb.Message, at sensorclock.Time) (lat, lon float64, ok bool) {
	if !m.HasCPR {
		return 0, 0, false
	}
	surface := m.Kind == adsb.KindSurfacePosition
	h := cprHalf{t: keep(at, true, surface), lat: m.CPR.Lat, lon: m.CPR.Lon}
	var other *cprHalf
	if m.CPR.Odd {
		a.odd, other = h, &a.even
	} else {
		a.even, other = h, &a.odd
	}
	var err error = errNoPosition
	if other.t.ok && other.t.surface == surface && (sameClock(other.t.clock, at.Clock) || !a.fix.ok) && abs(other.t.since(at)) <= pairWindow {
		even := adsb.CPR{Lat: a.even.lat, Lon: a.even.lon}
		odd := adsb.CPR{Lat: a.odd.lat, Lon: a.odd.lon, Odd: true}
		switch {
		case !surface:
			lat, lon, err = adsb.CPRGlobalAirborne(even, odd, m.CPR.Odd)
		case a.fix.ok:
			lat, lon, err = adsb.CPRGlobalSurface(even, odd, m.CPR.Odd, a.fixLat, a.fixLon)
		}
	}
	if err != nil && a.fix.ok && a.fix.since(at) <= refFor {
		if surface {
			lat, lon, err = adsb.CPRLocalSurface(m.CPR, a.fixLat, a.fixLon)
		} else {
			lat, lon, err = adsb.CPRLocalAirborne(m.CPR, a.fixLat, a.fixLon)
		}
	}
	if err != nil {
		return 0, 0, false
	}
	a.fix, a.fixLat, a.fixLon = keep(at, true, false), lat, lon
	return lat, lon, true
}

// sameClock reports whether two frames' clock epochs may be compared
// for pairing: the same, or either frame timed by its arrival (UTC both).
func sameClock(a, b uint32) bool { return a == b || a == 0 || b == 0 }

var errNoPosition = &Error{Op: "cpr", Err: errNone{}}

type errNone struct{}

func (errNone) Error() string { return "no position" }

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
