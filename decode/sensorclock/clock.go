// Package sensorclock maps the time a sensor gives a frame to UTC (issue
// 30): the 48-bit Beast timestamp as a free-running 12 MHz counter (as
// dump1090 and readsb stamp it) or as GPS time (Radarcape-style), or a
// sensor-supplied clock reading. Fusion judges frames by the sensor's
// own clock, not by when a batch of them reached cuasd, so a buffered
// feeder, a reconnecting receiver or a fast replay delivering a minute of
// frames at once is judged as the receiver heard them.
//
// One Model per sensor keeps that sensor's clock: anchored at first
// contact, following drift, detecting counter wraps, resets and jumps (a
// receiver restart), and never placing a frame after it arrived. The
// mapped UTC time is an estimate; the sensor's own time differences are
// exact, so every Time carries both, with a Clock identifying the epoch
// within which SensorNs differences may be taken.
//
// The package does no I/O and reads no clock: arrival times are given.
package sensorclock

import (
	"encoding/binary"
	"errors"
	"math"
	"sync/atomic"
	"time"
)

// Kind is what a sensor's timestamps are.
type Kind uint8

// The kinds of sensor timestamp.
const (
	// MHz12 is a free-running 12 MHz counter (48 bits in Beast records):
	// dump1090's and readsb's, and the default.
	MHz12 Kind = iota
	// GPS is UTC from a GPS-disciplined receiver: in a Beast record the
	// seconds of the UTC day in the top 18 bits and the nanoseconds in the
	// low 30 (Radarcape, readsb's --net-receiver-id GPS mode); as a
	// Cuas-Sensor-Ns, Unix nanoseconds.
	GPS
	// Receiver is a Cuas-Sensor-Ns from the sensor's own free-running
	// clock in nanoseconds, modelled like the 12 MHz counter.
	Receiver
)

// ErrKind reports an unknown clock name.
var ErrKind = errors.New("sensorclock: unknown clock (12mhz, gps or receiver)")

// ParseKind reads a clock name: "12mhz" (also ""), "gps", "receiver".
func ParseKind(s string) (Kind, error) {
	switch s {
	case "", "12mhz":
		return MHz12, nil
	case "gps":
		return GPS, nil
	case "receiver":
		return Receiver, nil
	}
	return MHz12, ErrKind
}

// String is the kind's name as ParseKind reads it.
func (k Kind) String() string {
	switch k {
	case GPS:
		return "gps"
	case Receiver:
		return "receiver"
	}
	return "12mhz"
}

// Source says where a frame's time came from (a track's time_source).
type Source uint8

// The sources of a frame's time.
const (
	// Arrival: the sensor gave no usable time; the time the frame reached
	// cuasd is used.
	Arrival Source = iota
	// FromReceiver: the sensor's own free-running clock, mapped to UTC.
	FromReceiver
	// FromGPS: UTC from the sensor's GPS-disciplined clock.
	FromGPS
)

// String is the source's name in JSON ("arrival", "receiver", "gps").
func (s Source) String() string {
	switch s {
	case FromReceiver:
		return "receiver"
	case FromGPS:
		return "gps"
	}
	return "arrival"
}

// MarshalText writes the source's name.
func (s Source) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a source's name.
func (s *Source) UnmarshalText(b []byte) error {
	switch string(b) {
	case "arrival", "":
		*s = Arrival
	case "receiver":
		*s = FromReceiver
	case "gps":
		*s = FromGPS
	default:
		return errors.New("sensorclock: unknown time source " + string(b))
	}
	return nil
}

// Time is a frame's time.
type Time struct {
	// UnixNano is the frame's time in UTC: never after its arrival.
	UnixNano int64
	// SensorNs is the sensor's own time of the frame in nanoseconds, in
	// the epoch Clock names; 0 with Clock 0 when there is none.
	SensorNs int64
	// Clock identifies one epoch of one sensor's clock (it changes when
	// the clock is reset or jumps): the SensorNs of two frames with the
	// same non-zero Clock differ by exactly the time between them.
	Clock uint32
	// Source says where UnixNano came from.
	Source Source
	// No more fields: a struct of more than four is returned in memory,
	// not registers, which doubled Map's cost. Whether a frame was judged
	// re-sent is Model.Resent's count (Model.Judge).
}

// Since is the time from a to b: by the sensor's clock when both are on
// the same clock epoch, by their UTC times otherwise.
func Since(a, b Time) int64 {
	if a.Clock != 0 && a.Clock == b.Clock {
		return b.SensorNs - a.SensorNs
	}
	return b.UnixNano - a.UnixNano
}

// Newer is the later of a and b by Since (b when they are the same time):
// on the sensor's clock when both are on the same epoch. The zero Time is
// older than any frame's.
func Newer(a, b Time) Time {
	if Since(a, b) >= 0 {
		return b
	}
	return a
}

// Limits of the model.
const (
	// DriftWindow is how much sensor time the model watches before it lets
	// its offset rise to the smallest delay seen in it (a clock running
	// slow would otherwise fall ever further behind).
	DriftWindow = 10 * time.Second
	// BackSlack is how far a timestamp may go back before the clock counts
	// as reset: receivers send their frames in order, give or take the
	// demodulator's reordering.
	BackSlack = time.Second
	// JumpSlack is how much further the sensor's clock may advance between
	// two frames than their arrivals did before it counts as a jump.
	JumpSlack = 30 * time.Second
	// GPSAhead is how far a GPS time may be ahead of its arrival (the
	// server's own clock being behind) before it is held at the arrival.
	GPSAhead = time.Second
	// ResendMax is how far back inside the span its clock epoch already
	// covered a timestamp may go and still be judged a re-send (Model's
	// resend rule); further back it is a reset. It bounds what a burst
	// (where arrivals tell nothing) can mistake for a re-send.
	ResendMax = 2 * time.Minute
	// ResendEvidence is how long after a timestamp went back the arrivals
	// must show that the sensor's clock runs ResendSpeed times faster than
	// they do (a re-send catching up) for its frames to be still judged
	// re-sent; a restarted receiver's clock runs in step with its
	// arrivals, so at most this much of its frames is judged re-sent.
	ResendEvidence = 500 * time.Millisecond
	// ResendSpeed is how many times faster than its arrivals a re-send's
	// timestamps must advance.
	ResendSpeed = 4
	// dayNs is one UTC day in nanoseconds.
	dayNs = int64(24 * time.Hour)
	// wrap12 is the range of the 48-bit Beast counter.
	wrap12 = uint64(1) << 48
)

// Model is one sensor's clock. Its zero value is ready; it is not safe for
// concurrent use.
type Model struct {
	started bool
	clock   uint32
	lastRaw uint64
	wraps   uint64
	// loNs and hiNs are the span of sensor time the epoch has covered,
	// lastArr the latest arrival.
	loNs, hiNs int64
	lastArr    int64
	resend     resend
	// offset maps the sensor's ns to UTC: the smallest arrival-minus-sensor
	// delay seen (a frame cannot arrive before it was heard), raised at the
	// end of each drift window to that window's smallest delay.
	offset  int64
	winMin  int64
	winFrom int64
	gps     uint32
	// hiUTC is the newest UTC time a GPS-timed sensor gave (resentUTC).
	hiUTC int64
	dups  dupCache
	// Counts is what the model saw, for metrics.
	Counts
}

// Counts are what a model saw, for metrics: a caller takes a copy before
// a message and counts the difference after it. Invalid counts GPS
// timestamps that are no time of day (timed by their arrival); Resent
// frames judged re-sent (Judge; a frame whose Map or Frame raised it is
// not to be decoded), and ResentLive those of them found afterwards to be
// a restarted receiver's.
type Counts struct {
	Resets, Wraps, Held, Duplicates, Invalid, Resent, ResentLive uint64
}

// resend is a run of frames stamped back inside the epoch's span, judged
// re-sent while their timestamps advance ResendSpeed times faster than
// their arrivals: from the frame at ns0 that arrived at arr0; n frames
// so far.
type resend struct {
	on        bool
	ns0, arr0 int64
	n         uint64
	// dups is the model's Duplicates when the run began: a frame the
	// duplicate check finds in a run repeats one heard before it (the
	// run's own frames are not remembered), which a restarted receiver's
	// frames never do.
	dups uint64
}

// confirmed reports whether the run repeated a frame the duplicate check
// remembered from before it, as a re-send does and a restart cannot.
func (m *Model) confirmed() bool { return m.Duplicates > m.resend.dups }

// endResend ends a run of frames judged re-sent at the first frame not
// judged so (caught up with the epoch's newest time, or a reset): it
// reports whether the run was a restart after all (it repeated nothing
// remembered from before it, as in a burst, where the arrivals could not
// tell), counting its frames in ResentLive; the caller then resets the
// epoch, so that fusion reacquires rather than refusing the restarted
// clock's positions as jumps on the old one.
func (m *Model) endResend() bool {
	m.resend.on = false
	if m.confirmed() {
		return false
	}
	m.ResentLive += m.resend.n
	return true
}

var clockIDs atomic.Uint32

func newClockID() uint32 {
	for {
		if id := clockIDs.Add(1); id != 0 {
			return id
		}
	}
}

// Map maps a sensor timestamp raw of the given kind, on a frame that
// arrived at arrival (Unix ns), to the frame's Time. raw 0 is no
// timestamp (Beast senders write 0 when they have none).
func (m *Model) Map(kind Kind, raw uint64, arrival int64) Time {
	if raw == 0 {
		return Time{UnixNano: arrival}
	}
	switch kind {
	case GPS:
		return m.mapGPS(raw, arrival)
	case Receiver:
		return m.mapNs(int64(raw), arrival)
	}
	return m.mapNs(m.unwrap12(raw), arrival)
}

// Stamp is what a raw message says of the times of its frames (its
// Cuas-Clock, Cuas-Sensor-Ns and Cuas-Recv-Ns headers and its framing).
type Stamp struct {
	// Kind is what the sensor's timestamps are (Cuas-Clock).
	Kind Kind
	// Ns says the frames' own timestamps are nanoseconds on Kind's clock
	// (framing lpt), not Beast's 48-bit format.
	Ns bool
	// SensorNs is the message's own sensor time (Cuas-Sensor-Ns; 0:
	// none), the time of its frames that carry none of their own.
	SensorNs int64
	// Arrival is when the message reached cuasd (Cuas-Recv-Ns), Unix ns.
	Arrival int64
}

// Key is the timestamp by which a frame whose own timestamp is ts (0:
// none) is told apart from a re-sent one (Duplicate): ts, else the
// message's sensor time.
func (s Stamp) Key(ts uint64) uint64 {
	if ts == 0 {
		return uint64(s.SensorNs)
	}
	return ts
}

// Frame maps the time of a frame of a message stamped s whose own
// timestamp is ts (0: none): ts on Kind's clock (a Beast timestamp unless
// s.Ns); else the message's SensorNs (UTC when Kind is GPS, the sensor's
// own nanoseconds otherwise); else the arrival. It is how the decoder
// and the outputs that read raw frames time each frame alike.
func (m *Model) Frame(ts uint64, s Stamp) Time {
	switch {
	case ts != 0 && !s.Ns:
		return m.Map(s.Kind, ts, s.Arrival)
	case ts == 0:
		ts = uint64(s.SensorNs)
	}
	switch {
	case ts == 0:
		return Time{UnixNano: s.Arrival}
	case s.Kind == GPS:
		return m.MapUTC(int64(ts), s.Arrival)
	}
	return m.Map(Receiver, ts, s.Arrival)
}

// Judge is Frame that also reports whether the frame was judged re-sent
// (the resend rule: a reconnecting feeder repeating frames older than the
// duplicate check remembers): like an exact duplicate it is not to be
// decoded; its Time is what it was when the frame was first heard.
func (m *Model) Judge(ts uint64, s Stamp) (t Time, resent bool) {
	n := m.Resent
	t = m.Frame(ts, s)
	return t, m.Resent != n
}

// MapUTC maps a sensor's UTC claim (Unix ns, a GPS-disciplined
// Cuas-Sensor-Ns) on a frame that arrived at arrival.
func (m *Model) MapUTC(ns, arrival int64) Time {
	if m.gps == 0 {
		m.gps = newClockID()
	}
	t := Time{UnixNano: ns, SensorNs: ns, Clock: m.gps, Source: FromGPS}
	switch {
	case ns > arrival+int64(GPSAhead):
		t.UnixNano = arrival
		m.Held++
	case m.resentUTC(ns):
		m.Resent++
		m.dups.unremember()
	default:
		m.hiUTC = max(m.hiUTC, ns)
	}
	return t
}

// resentUTC is the resend rule for a GPS-timed sensor (one whose frames
// are checked for duplicates, as in resent): its times are UTC, with no
// epoch to restart, so a frame stamped more than BackSlack before the
// newest one it sent, and at most ResendMax before, is a frame heard
// before and sent again (a reconnecting feeder re-sending more than the
// duplicate check remembers), as receivers send their frames in order.
// Further back it is taken (a GPS clock set back). The newest time is
// only ever a time not held at its arrival, so one frame stamped ahead
// (a wrong time of day) cannot make the frames after it look re-sent.
func (m *Model) resentUTC(ns int64) bool {
	return m.dups.slots != nil && m.hiUTC != 0 && ns < m.hiUTC-int64(BackSlack) && m.hiUTC-ns <= int64(ResendMax)
}

// unwrap12 turns a 12 MHz counter value into nanoseconds on a continuous
// scale: a value far below the last one is taken as the 48-bit counter
// wrapping (every 271 days) when the arrival times agree, which mapNs
// checks; otherwise it is a reset.
func (m *Model) unwrap12(raw uint64) int64 {
	if m.started && raw < m.lastRaw && m.lastRaw-raw > wrap12/2 {
		m.wraps++
		m.Wraps++
	}
	m.lastRaw = raw
	return int64((raw + m.wraps*wrap12) * 1000 / 12)
}

// mapNs maps a sensor time in nanoseconds.
func (m *Model) mapNs(ns, arrival int64) Time {
	back := ns < m.hiNs-int64(BackSlack)
	reset := !m.started || back || (ns-m.hiNs)-(arrival-m.lastArr) > int64(JumpSlack)
	if m.started && (back || m.resend.on) {
		var resent bool
		if resent, reset = m.stepBack(ns, arrival, back, reset); resent {
			return Time{UnixNano: ns + m.offset, SensorNs: ns, Clock: m.clock, Source: FromReceiver}
		}
	}
	if reset {
		if m.started {
			m.Resets++
		}
		m.started, m.clock = true, newClockID()
		m.offset, m.winMin, m.winFrom = arrival-ns, math.MaxInt64, ns
		m.loNs, m.hiNs = ns, ns
	}
	if ns-m.winFrom >= int64(DriftWindow) {
		if m.winMin != math.MaxInt64 && m.winMin > m.offset {
			m.offset = m.winMin
		}
		m.winMin, m.winFrom = math.MaxInt64, ns
	}
	d := arrival - ns
	m.winMin = min(m.winMin, d)
	if d < m.offset {
		// Never after its arrival: a frame heard earlier than the sensor's
		// clock said is impossible, so the offset was too large.
		m.offset = d
	}
	m.loNs, m.hiNs = min(m.loNs, ns), max(m.hiNs, ns)
	m.lastArr = max(m.lastArr, arrival)
	return Time{UnixNano: ns + m.offset, SensorNs: ns, Clock: m.clock, Source: FromReceiver}
}

// stepBack applies the resend rule to a frame stamped back (or ending a
// run of re-sent frames): it reports whether the frame is re-sent, and
// whether the epoch is to be reset (reset, or the run just ended was a
// restart).
func (m *Model) stepBack(ns, arrival int64, back, reset bool) (resent, _ bool) {
	if back && m.dups.slots != nil && m.resent(ns, arrival) {
		m.Resent++
		m.dups.unremember()
		return true, false
	}
	if m.resend.on && m.endResend() {
		reset = true
	}
	return false, reset
}

// resent is the resend rule, for a model whose frames are checked for
// duplicates (a sensor's, not a transmitter's whose messages repeat no
// frames): it reports whether a frame stamped ns, which the caller found
// more than BackSlack behind the newest time of the epoch (hiNs), but inside
// the span the epoch covered and at most ResendMax back, is re-sent.
// A feeder re-sending its last frames on reconnect goes back to counter
// values already seen, delivers them far faster than its counter
// advances, catching up with hiNs, and repeats frames the duplicate check
// still remembers (the most recent ones); a receiver restarting with its
// counter inside the span (it and cuasd started together) counts on in
// step with its arrivals, never catches up, and repeats nothing. So the
// frames from such a step back are judged re-sent (a run), and stay so
// until they catch up if the run repeats a remembered frame (confirmed),
// or while their timestamps have advanced ResendSpeed times more than
// their arrivals once ResendEvidence of arrivals has passed; otherwise
// the step back was a restart: the epoch is reset, and the run's frames
// are counted in ResentLive (endResend). A paced restart inside the span
// thus loses at most ResendEvidence of its frames; in a burst, where the
// arrivals tell nothing, at most ResendMax (until its counter passes
// hiNs, unconfirmed), and its tracks are reacquired on the new epoch.
func (m *Model) resent(ns, arrival int64) bool {
	r := &m.resend
	if ns < m.loNs-int64(BackSlack) || m.hiNs-ns > int64(ResendMax) {
		return false // not a step back to what the epoch saw: a reset
	}
	if !r.on {
		*r = resend{on: true, ns0: ns, arr0: arrival, n: 1, dups: m.Duplicates}
		return true
	}
	if a := arrival - r.arr0; !m.confirmed() && a >= int64(ResendEvidence) && ns-r.ns0 < ResendSpeed*a {
		return false // in step with its arrivals: a restart (endResend counts the run)
	}
	r.n++
	return true
}

// mapGPS maps a Radarcape-style GPS timestamp: the UTC day is the one that
// puts it nearest its arrival.
func (m *Model) mapGPS(raw uint64, arrival int64) Time {
	secs, nanos := int64(raw>>30), int64(raw&(1<<30-1))
	if secs >= 86400 || nanos >= 1e9 {
		// Not a time of day: most likely a 12 MHz counter given
		// ?clock=gps, counted so the mistake shows.
		m.Invalid++
		return Time{UnixNano: arrival}
	}
	tod := secs*1e9 + nanos
	day := arrival - arrival%dayNs
	ns := day + tod
	switch {
	case ns-arrival > dayNs/2:
		ns -= dayNs
	case arrival-ns > dayNs/2:
		ns += dayNs
	}
	return m.MapUTC(ns, arrival)
}

// Duplicate reports whether the same frame with the same timestamp was
// seen recently from this sensor, and remembers it. Frames without a
// timestamp are never duplicates: identical frames are common (a squitter
// repeats itself) and only the timestamp tells a re-sent frame apart.
func (m *Model) Duplicate(raw uint64, frame []byte) bool {
	if raw == 0 {
		return false
	}
	if m.dups.seen(raw, frame) {
		m.Duplicates++
		return true
	}
	return false
}

// dupCache is a 4-way set-associative cache of recent (timestamp, frame)
// hashes, first in first out within a set: fixed size, no allocation, no
// false positives short of a 64-bit hash collision. A duplicate is missed
// only when four other frames fell into its set in between (a direct-mapped
// cache missed 1 in 85 of a real capture's duplicates, 50 frames apart).
//
// Every Mode S frame pays this check, and under load the set it reads is
// a cache miss (bench-compare's profile: 3 % of the process stalled on
// that one load). A frame stamped later than every frame remembered
// cannot repeat one, so it is only remembered: its set is written, not
// read (the small insertion counters stay cached).
type dupCache struct {
	slots *[dupSets][4]uint64
	next  *[dupSets]uint8
	// newest is the latest timestamp remembered since it last went back
	// by more than dupReset (a restarted clock): every frame remembered
	// since then is stamped at or before it.
	newest uint64
	// undo is where the last frame was remembered (set index + 1; 0:
	// nowhere) and the hash it replaced, so that a frame judged re-sent
	// right after can be forgotten again (unremember).
	undo    uint32
	undoOld uint64
}

const (
	dupSets = 1024
	// dupReset is how far back a timestamp may be from newest before
	// newest follows it down (2^40: 25 hours of a 12 MHz counter, 18
	// minutes in nanoseconds). A repeat of a frame from before that
	// jump is not looked for.
	dupReset = 1 << 40
)

func (c *dupCache) seen(raw uint64, frame []byte) bool {
	if c.slots == nil {
		c.slots, c.next = new([dupSets][4]uint64), new([dupSets]uint8)
	}
	h := frameHash(raw, frame) | 1 // 0 marks an empty slot
	i := (h >> 1) % dupSets
	set := &c.slots[i]
	switch {
	case raw > c.newest || c.newest-raw > dupReset:
		// The newest frame is never judged re-sent: no undo, and the set
		// is not read.
		c.newest, c.undo = raw, 0
	case set[0] == h || set[1] == h || set[2] == h || set[3] == h:
		c.undo = 0
		return true
	default:
		c.undo, c.undoOld = uint32(i)+1, set[c.next[i]&3]
	}
	set[c.next[i]&3] = h
	c.next[i]++
	return false
}

// unremember forgets the frame seen last remembered, putting back what
// it replaced: a frame judged re-sent must not evict the recent frames a
// re-send ends with, which the cache alone tells from new ones.
func (c *dupCache) unremember() {
	if c.undo == 0 {
		return
	}
	i := c.undo - 1
	c.next[i]--
	c.slots[i][c.next[i]&3] = c.undoOld
	c.undo = 0
}

// frameHash hashes a timestamp and a frame eight bytes at a time, each
// step a bijection of the state and the next word (xor, then mix), so
// frames of one length differing in one word never collide; the length
// is hashed in, so a shorter frame is not a longer one's prefix. It
// replaced byte-at-a-time FNV-1a, whose 22 dependent multiplies for a
// long Mode S frame were most of the check's cost.
func frameHash(raw uint64, frame []byte) uint64 {
	h := mix64(mix64(raw) ^ uint64(len(frame)))
	for len(frame) >= 8 {
		h = mix64(h ^ binary.LittleEndian.Uint64(frame))
		frame = frame[8:]
	}
	var tail uint64
	for i, b := range frame {
		tail |= uint64(b) << (8 * i)
	}
	return mix64(h ^ tail)
}

// mix64 is a bijective 64-bit mixer (xor-shift, multiply, xor-shift;
// the multiplier is MurmurHash3's finalizer constant).
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return x
}

// Clocks holds the models of many sensors, keyed by sensor name, and of
// transmitters that stamp their own messages, keyed by sensor and
// transmitter.
type Clocks struct {
	m     map[string]*Model
	byKey map[[2]string]*Model
}

// Transmitter returns the model of a transmitter's own clock as heard by
// sensor (a MAVLink system's time since boot, a Remote ID UA's GNSS
// time), making it on first contact. Looking up an existing one does not
// allocate.
func (c *Clocks) Transmitter(sensor, key string) *Model {
	if c.byKey == nil {
		c.byKey = map[[2]string]*Model{}
	}
	k := [2]string{sensor, key}
	m := c.byKey[k]
	if m == nil {
		m = &Model{}
		c.byKey[k] = m
	}
	return m
}

// AfterHour places a time given as nanoseconds after the full UTC hour
// (Remote ID's timestamp) in the hour that puts it nearest arrival.
func AfterHour(ns, arrival int64) int64 {
	const hour = int64(time.Hour)
	t := arrival - arrival%hour + ns
	switch {
	case t-arrival > hour/2:
		t -= hour
	case arrival-t > hour/2:
		t += hour
	}
	return t
}

// Sensor returns the named sensor's model, making it on first contact.
// Looking up an existing sensor does not allocate.
func (c *Clocks) Sensor(name string) *Model {
	if c.m == nil {
		c.m = map[string]*Model{}
	}
	m := c.m[name]
	if m == nil {
		m = &Model{}
		c.m[name] = m
	}
	return m
}

// Each calls fn with every sensor's model (for metrics).
func (c *Clocks) Each(fn func(name string, m *Model)) {
	for k, v := range c.m {
		fn(k, v)
	}
}
