// Package sbs serves SBS-1 BaseStation lines, the CSV format dump1090 and
// readsb serve on port 30003 and that Virtual Radar Server, PlanePlotter
// and many scripts read: by default one line per decoded Mode S message,
// as readsb writes them (MessageEncoder, from cuas.raw.adsb.>, issue 30);
// with Reduce, from the track events (cuas.track.>, Encoder): on each
// update of a track, MSG,1 when its callsign changed, MSG,3 for a new
// position (with altitude), MSG,4 for new velocity, MSG,5 for a new
// altitude without a new position and MSG,6 for a new squawk — 22
// comma-separated fields ending in CRLF, as dump1090 writes them.
package sbs

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/worker"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/lifecycle"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/output/readsbjson"
)

// Error is the error type of package sbs.
type Error struct {
	Op  string
	Err error
}

func (e *Error) Error() string { return "sbs: " + e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

const (
	mToFt    = 1 / 0.3048
	mpsToKt  = 1 / 0.514444
	mpsToFpm = 1 / 0.00508
)

// sent is what was last sent of a track, so that a line goes out only for
// what changed.
type sent struct {
	callsign, squawk string
	lat, lon         float64
	hasPos           bool
	alt              int64
	hasAlt           bool
	gs, trk, vr      int64
	hasVel           bool
	heard            time.Time
}

// forgetAfter drops what was sent of a track whose events stopped without
// a track.lost (live tracks are announced every events.KeepAlive).
const forgetAfter = 2 * time.Minute

// Encoder turns track events into SBS lines. It is not safe for
// concurrent use.
type Encoder struct {
	// Drones includes Remote ID and MAVLink tracks ("~" addresses).
	Drones bool
	last   map[string]*sent
	swept  time.Time
}

// sweep forgets tracks not heard for forgetAfter, once a minute.
func (e *Encoder) sweep(now time.Time) {
	if now.Sub(e.swept) < time.Minute {
		return
	}
	e.swept = now
	for id, s := range e.last {
		if now.Sub(s.heard) > forgetAfter {
			delete(e.last, id)
		}
	}
}

// AppendEvent appends the lines a track event calls for to b, logged at
// now.
func (e *Encoder) AppendEvent(b []byte, ev *events.TrackEvent, now time.Time) []byte {
	t := &ev.Track
	if e.last == nil {
		e.last = map[string]*sent{}
	}
	if ev.Type == events.TypeTrackLost {
		delete(e.last, t.TrackID)
		return b
	}
	if ev.Type != events.TypeTrackUpdate || (!e.Drones && !strings.HasPrefix(t.TrackID, "adsb:")) {
		return b
	}
	e.sweep(now)
	s := e.last[t.TrackID]
	if s == nil {
		s = &sent{}
		e.last[t.TrackID] = s
	}
	s.heard = now
	l := line{hex: strings.ToUpper(readsbjson.Hex(t)), gen: t.LastSeen, now: now, clk: &clock{}}
	if t.Callsign != "" && t.Callsign != s.callsign {
		s.callsign = t.Callsign
		b = l.appendMsg(b, 1, &fields{callsign: []byte(t.Callsign)})
	}
	b = appendPosition(b, &l, s, t)
	b = appendVelocity(b, &l, s, t)
	if t.Squawk != "" && t.Squawk != s.squawk {
		s.squawk = t.Squawk
		b = l.appendMsg(b, 6, &fields{squawk: []byte(t.Squawk), hasSquawk: true})
	}
	return b
}

// appendPosition sends MSG,3 for a new position (with the altitude), else
// MSG,5 for a new altitude.
func appendPosition(b []byte, l *line, s *sent, t *events.Track) []byte {
	var f fields
	if t.AltM != nil {
		f.alt, f.hasAlt = int64(math.Round(*t.AltM*mToFt)), true
	}
	newAlt := f.hasAlt && (!s.hasAlt || f.alt != s.alt)
	s.alt, s.hasAlt = f.alt, f.hasAlt
	if t.Lat != nil && t.Lon != nil && (!s.hasPos || *t.Lat != s.lat || *t.Lon != s.lon) {
		s.lat, s.lon, s.hasPos = *t.Lat, *t.Lon, true
		f.lat, f.lon, f.hasPos = *t.Lat, *t.Lon, true
		gen := l.gen
		if t.PositionTime != nil {
			l.gen = *t.PositionTime
		}
		b = l.appendMsg(b, 3, &f)
		l.gen = gen
		return b
	}
	if newAlt {
		b = l.appendMsg(b, 5, &f)
	}
	return b
}

func appendVelocity(b []byte, l *line, s *sent, t *events.Track) []byte {
	if t.SpeedMps == nil || t.HeadingDeg == nil {
		return b
	}
	f := fields{hasGS: true, hasTrk: true, gs: int64(math.Round(*t.SpeedMps * mpsToKt)), trk: int64(math.Round(*t.HeadingDeg)) % 360}
	if t.VRateMps != nil {
		f.vr, f.hasVR = int64(math.Round(*t.VRateMps*mpsToFpm)), true
	}
	if s.hasVel && s.gs == f.gs && s.trk == f.trk && s.vr == f.vr {
		return b
	}
	s.gs, s.trk, s.vr, s.hasVel = f.gs, f.trk, f.vr, true
	return l.appendMsg(b, 4, &f)
}

// fields are the optional fields 11-22 of a line.
type fields struct {
	callsign             []byte
	alt                  int64
	hasAlt               bool
	gs, trk, vr          int64
	hasGS, hasTrk, hasVR bool
	lat, lon             float64
	hasPos               bool
	squawk               []byte
	hasSquawk            bool
	// alert and spi (fields 19 and 21) come from a Mode S reply's flight
	// status, when hasFlags; ground (field 22) when hasGround.
	alert, spi, hasFlags bool
	ground, hasGround    bool
}

type line struct {
	// hex is the aircraft's hex id; "" writes addr as six hex digits.
	hex      string
	addr     uint32
	gen, now time.Time
	// genNs, when byNs, is the time generated (fields 7-8) in Unix
	// nanoseconds instead of gen: a message's own time, as fusion's feed
	// gives it, written without making a time.Time of it for every line.
	genNs int64
	byNs  bool
	// nowText, when not empty, is now as written (fields 9-10): the same
	// for every line of a raw message, so written once for them all.
	nowText []byte
	clk     *clock
}

// appendMsg appends one MSG line of transmission type typ.
func (l *line) appendMsg(b []byte, typ int, f *fields) []byte {
	b = l.appendHead(b, typ)
	b = append(b, ',')
	b = append(b, f.callsign...)
	b = append(b, ',')
	if f.hasAlt {
		b = appendInt(b, f.alt)
	}
	b = append(b, ',')
	if f.hasGS {
		b = appendInt(b, f.gs)
	}
	b = append(b, ',')
	if f.hasTrk {
		b = appendInt(b, f.trk)
	}
	b = append(b, ',')
	if f.hasPos {
		b = appendDegrees(b, f.lat)
		b = append(b, ',')
		b = appendDegrees(b, f.lon)
	} else {
		b = append(b, ',')
	}
	b = append(b, ',')
	if f.hasVR {
		b = appendInt(b, f.vr)
	}
	b = append(b, ',')
	if f.hasSquawk {
		b = append(b, f.squawk...)
	}
	b = append(b, ',')
	b = appendFlag(b, f.alert, f.hasFlags)
	b = append(b, ',')
	emergency := string(f.squawk) == "7500" || string(f.squawk) == "7600" || string(f.squawk) == "7700"
	b = appendFlag(b, emergency, f.hasSquawk)
	b = append(b, ',')
	b = appendFlag(b, f.spi, f.hasFlags)
	b = append(b, ',')
	b = appendFlag(b, f.ground, f.hasGround)
	return append(b, "\r\n"...)
}

// appendHead appends a line's fields 1-10: the type, the aircraft and
// the times generated and logged.
func (l *line) appendHead(b []byte, typ int) []byte {
	b = append(b, 'M', 'S', 'G', ',', byte('0'+typ), ',', '1', ',', '1', ',') // typ 1-8
	if l.hex != "" {
		b = append(b, l.hex...)
	} else {
		b = adsb.AppendAddress(b, l.addr)
	}
	b = append(b, ",1,"...)
	if l.byNs {
		b = l.clk.appendNs(b, l.genNs)
	} else {
		b = l.clk.append(b, l.gen)
	}
	b = append(b, ',')
	if len(l.nowText) > 0 {
		return append(b, l.nowText...)
	}
	return l.clk.append(b, l.now)
}

// appendDegrees appends v with five decimals, as strconv.AppendFloat(b,
// v, 'f', 5, 64) does (TestAppendDegreesMatchesStrconv,
// FuzzAppendDegrees), and at a fraction of its cost (two a position line,
// a fifth of the line's cost; issue 30): v·10^5 rounded to an integer,
// written by hand where the product, rounded as a float64, is not within
// 10^-6 of a tie between two integers (for |v·10^5| < 2^25, 335°, its
// rounding error is below 2^-28, 4·10^-9, so it rounds as the exact value
// does); else, and beyond that range, strconv decides.
func appendDegrees(b []byte, v float64) []byte {
	x := v * 1e5
	a := math.Abs(x)
	if !(a < 1<<25) { // NaN and infinities too
		return strconv.AppendFloat(b, v, 'f', 5, 64)
	}
	n := math.Floor(a)
	frac := a - n
	if math.Abs(frac-0.5) < 1e-6 {
		return strconv.AppendFloat(b, v, 'f', 5, 64)
	}
	u := uint64(n)
	if frac > 0.5 {
		u++
	}
	if math.Signbit(v) {
		b = append(b, '-')
	}
	b = appendInt(b, int64(u/100000))
	f := u % 100000
	return append(b, '.', byte('0'+f/10000), byte('0'+f/1000%10), byte('0'+f/100%10), byte('0'+f/10%10), byte('0'+f%10))
}

// appendFlag appends an SBS flag: -1 set, 0 clear, nothing unknown.
func appendFlag(b []byte, v, known bool) []byte {
	switch {
	case !known:
		return b
	case v:
		return append(b, "-1"...)
	}
	return append(b, '0')
}

// appendInt appends v in decimal, as strconv.AppendInt(b, v, 10) does
// (TestAppendIntMatchesStrconv, FuzzAppendInt): for the few digits of a
// line's altitude, speed, track, rate and degrees it writes them in
// place, where strconv formats into a buffer of its own and copies it
// (a sixth of a per-message line's cost; issue 30).
func appendInt(b []byte, v int64) []byte {
	if v <= -1e9 || v >= 1e9 {
		return strconv.AppendInt(b, v, 10)
	}
	u := uint32(v)
	if v < 0 {
		b = append(b, '-')
		u = uint32(-v)
	}
	n := 1
	for x := u; x >= 10; x /= 10 {
		n++
	}
	b = slices.Grow(b, n)
	b = b[:len(b)+n]
	for i := len(b) - 1; n > 0; n, i = n-1, i-1 {
		b[i] = byte('0' + u%10)
		u /= 10
	}
	return b
}

// appendTime appends "2006/01/02,15:04:05.000" in UTC.
func appendTime(b []byte, t time.Time) []byte {
	var c clock
	return c.append(b, t)
}

// clock writes SBS times. Every line has two, and time.Time.AppendFormat
// was two fifths of a per-message line's cost (issue 30's pipeline
// profile): the digits are written here for the years 1970-9999 (by
// AppendFormat otherwise), the date computed once per day.
//
// The last time written is kept as written too: the lines of a raw
// message without receiver times (lp framing: the simulator, the
// single-frame intake) all carry its receive time.
type clock struct {
	day  int64 // days since 1970 of date; -1 (or the zero clock): none
	date [11]byte
	ok   bool
	// lastSec and lastMs are the time last written, text its time of
	// day; valid when timed.
	lastSec int64
	lastMs  int
	text    [12]byte
	timed   bool
}

func (c *clock) append(b []byte, t time.Time) []byte {
	sec := t.Unix()
	if sec < 0 || sec >= maxFastSec {
		return t.UTC().AppendFormat(b, "2006/01/02,15:04:05.000")
	}
	return c.appendSec(b, sec, t.Nanosecond()/1e6)
}

// appendNs is append(b, time.Unix(0, ns)).
func (c *clock) appendNs(b []byte, ns int64) []byte {
	if ns < 0 {
		return c.append(b, time.Unix(0, ns))
	}
	// Every int64 of nanoseconds is before maxFastSec.
	return c.appendSec(b, ns/1e9, int(ns%1e9/1e6))
}

// appendSec appends the time sec seconds and ms milliseconds after 1970,
// for 0 <= sec < maxFastSec.
func (c *clock) appendSec(b []byte, sec int64, ms int) []byte {
	if day := sec / 86400; !c.ok || day != c.day {
		y, m, d := civil(day)
		c.date = [11]byte{byte('0' + y/1000), byte('0' + y/100%10), byte('0' + y/10%10), byte('0' + y%10), '/',
			byte('0' + m/10), byte('0' + m%10), '/', byte('0' + d/10), byte('0' + d%10), ','}
		c.day, c.ok = day, true
	}
	b = append(b, c.date[:]...)
	if !c.timed || sec != c.lastSec || ms != c.lastMs {
		tod := sec % 86400
		h, mi, s := tod/3600, tod/60%60, tod%60
		c.text = [12]byte{byte('0' + h/10), byte('0' + h%10), ':', byte('0' + mi/10), byte('0' + mi%10), ':', byte('0' + s/10), byte('0' + s%10),
			'.', byte('0' + ms/100), byte('0' + ms/10%10), byte('0' + ms%10)}
		c.lastSec, c.lastMs, c.timed = sec, ms, true
	}
	return append(b, c.text[:]...)
}

// maxFastSec is 10000-01-01 in Unix seconds: appendTime writes four-digit
// years itself.
const maxFastSec = 253402300800

// civil is the proleptic Gregorian date of a day since 1970-01-01 (days
// >= 0), by Howard Hinnant's days_from_civil inverse.
func civil(days int64) (y, m, d int64) {
	days += 719468
	era := days / 146097
	doe := days - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	y = yoe + era*400
	if m <= 2 {
		y++
	}
	return y, m, d
}

// maxBehind is how many bytes of lines a client may fall behind before
// losing some: about 14 s of per-message SBS at the pipeline benchmark's
// 52,000 messages a second (~92 bytes a line), 12 minutes of a busy
// receiver's 1,000, minutes of --sbs-reduce's lines for 2,000 tracks.
const maxBehind = 64 << 20

// Out is the SBS output on a listening socket (readsb's 30003).
type Out struct {
	bc     *output.Broadcast
	drones bool
	log    *slog.Logger
	// Reduce writes per track from the track events (at most a line of
	// each kind per track a second, --sbs-reduce) instead of one line per
	// message.
	Reduce bool
	// simulated writes simulated tracks too (--demo-outputs; issue 34).
	simulated bool
	// queueDropped counts the raw messages' batches of decoded messages
	// dropped because the writer fell maxQueued messages behind.
	queueDropped atomic.Uint64
}

// IncludeSimulated makes the output write simulated tracks too (cuasd's
// --demo-outputs); by default a feeder never forwards made-up traffic.
// SBS has no field to mark them. Call it before Run.
func (o *Out) IncludeSimulated(yes bool) { o.simulated = yes }

// Listen binds addr for SBS clients.
func Listen(addr string, drones bool, log *slog.Logger) (*Out, error) {
	bc, err := output.ListenBroadcast(addr, maxBehind, log)
	if err != nil {
		return nil, &Error{Op: "listen " + addr, Err: err}
	}
	return &Out{bc: bc, drones: drones, log: log}, nil
}

// Name implements output.Output.
func (o *Out) Name() string { return "sbs-listen " + o.bc.Addr().String() }

// Addr is the listening address.
func (o *Out) Addr() string { return o.bc.Addr().String() }

// Dropped is the number of chunks dropped for slow clients, and of raw
// messages whose decoded messages were dropped because the writer fell
// maxQueued messages behind (decodedQueue).
func (o *Out) Dropped() uint64 { return o.bc.Dropped() + o.queueDropped.Load() }

// Run implements output.Output.
func (o *Out) Run(ctx context.Context, ev output.Events, rep lifecycle.Reporter) error {
	unsub, err := o.subscribe(ctx, ev)
	if err != nil {
		return &Error{Op: "subscribe", Err: err}
	}
	defer unsub()
	rep.Up()
	return o.bc.Serve(ctx)
}

// subscribe hears the raw frames (one line per message) or, with Reduce,
// the track events.
func (o *Out) subscribe(ctx context.Context, ev output.Events) (func(), error) {
	if !o.Reduce {
		if f, ok := ev.(output.ModeSFeed); ok {
			stop, err := o.feedDecoded(ctx, f)
			if !errors.Is(err, output.ErrNoModeS) {
				return stop, err
			}
		}
		enc := &MessageEncoder{}
		// The lines are written into scratch, reused: each client's buffer
		// copies them.
		var scratch []byte
		return ev.Subscribe(bus.RawPrefix+".adsb.>", func(m *nats.Msg) {
			if !o.simulated && bus.Simulated(m.Header) {
				return // issue 34: simulated frames only with --demo-outputs
			}
			if o.bc.Clients() == 0 {
				// Nobody to write to: keep the state a later client's
				// lines need, write none.
				if err := enc.Track(m, time.Now()); err != nil {
					o.log.Debug("sbs: malformed raw message", "subject", m.Subject, "err", err)
				}
				return
			}
			var err error
			scratch, err = enc.AppendMsg(scratch[:0], m, time.Now())
			if err != nil {
				o.log.Debug("sbs: malformed raw message", "subject", m.Subject, "err", err)
			}
			if len(scratch) > 0 {
				o.bc.Send(scratch)
			}
		})
	}
	enc := &Encoder{Drones: o.drones}
	return ev.Subscribe(bus.TrackPrefix+".>", func(m *nats.Msg) {
		var te events.TrackEvent
		if _, err := events.Peek(m.Data); err != nil || json.Unmarshal(m.Data, &te) != nil || te.Track.Simulated && !o.simulated {
			return
		}
		if b := enc.AppendEvent(nil, &te, time.Now()); len(b) > 0 {
			o.bc.Send(b)
		}
	})
}

// feedDecoded writes the lines of the Mode S messages fusion's feed
// decodes (inside cuasd serve): the raw frames are neither heard again on
// NATS nor decoded a second time (issue 30). The feed's goroutine only
// queues them (decodedQueue); writeDecoded writes them in bulk. Messages
// stored before the output started (the feed's replay of the stream at
// its start) only build the aircraft state; a message handed again (the
// feed starting over) is skipped. Both are told by the raw stream's own
// positions (storage time and sequence, the server's): against cuasd's
// clock, a NATS server whose clock is behind by a minute silenced the
// output for that minute after it started.
func (o *Out) feedDecoded(ctx context.Context, f output.ModeSFeed) (func(), error) {
	q := newDecodedQueue(maxQueued)
	stopTap, start, err := f.FeedModeS(ctx, func(bt *worker.ModeSBatch) {
		if !o.simulated && bt.Meta.Simulated {
			return
		}
		if !q.put(bt, time.Now().UnixNano()) {
			o.queueDropped.Add(1)
		}
	})
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); o.writeDecoded(wctx, q, start) }()
	return func() { stopTap(); cancel(); <-done }, nil
}

// decodedHold is how long the writer lets the queue fill once something
// waits: a wake-up costs more than writing a few messages (see
// output.FlushInterval), and the lines wait for the client's flush anyway.
const decodedHold = output.FlushInterval / 2

// writeDecoded writes the queued messages' lines until ctx ends, every
// decodedHold while messages arrive, one Send for all of them.
func (o *Out) writeDecoded(ctx context.Context, q *decodedQueue, start bus.StreamPos) {
	enc := &MessageEncoder{}
	var seen handed
	var w decodedWork
	var scratch []byte
	t := time.NewTimer(decodedHold)
	t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-q.ready:
		}
		t.Reset(decodedHold)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		q.take(&w)
		scratch = scratch[:0]
		w.each(func(bt *worker.ModeSBatch, now int64) {
			if !seen.first(bt) {
				return
			}
			if o.bc.Clients() == 0 || !posOf(bt).After(start) {
				enc.TrackDecoded(bt)
				return
			}
			scratch = enc.AppendDecoded(scratch, bt, time.Unix(0, now))
		})
		if len(scratch) > 0 {
			o.bc.Send(scratch)
		}
	}
}

// handed is the newest raw message handed on.
type handed struct{ last bus.StreamPos }

// first reports whether bt is newer than every message handed before, and
// remembers it.
func (h *handed) first(bt *worker.ModeSBatch) bool {
	p := posOf(bt)
	if !p.After(h.last) {
		return false
	}
	if p != (bus.StreamPos{}) {
		h.last = p
	}
	return true
}

// posOf is bt's raw message's place in CUAS_RAW.
func posOf(bt *worker.ModeSBatch) bus.StreamPos {
	return bus.StreamPos{Stored: bt.Meta.StoredUnixNano, Seq: bt.Seq}
}
