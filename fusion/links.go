package fusion

import (
	"hash/maphash"
	"math"
	"slices"

	"github.com/cuasd/cuasd/decode/sensorclock"
)

// Two receivers' clocks are related by the transmissions both heard. A
// receiver's own clock times its frames exactly, but its mapped UTC times
// are only estimates, and in a burst (a reconnect, a fast replay) they are
// held at the frames' arrivals, which say nothing of when the frames were
// heard. When several receivers burst at once (a site's network comes
// back and every feeder sends what it buffered), their batches race, and
// UTC alone cannot tell whether a receiver's position is newer than the
// track's, which another receiver heard: the track stepped back and forth
// between the receivers' times, its history held each fix up to three
// times, and real positions were refused as jumps.
//
// Each copy of a compact position report another receiver heard too
// (heardAgain) gives the offset between the two clocks: the same
// transmission, stamped on both. Fusion keeps that offset per pair of
// clock epochs and, while it is fresh, compares two receivers' times on
// one clock: exact to the signal's path difference (under a millisecond)
// and the clocks' drift since (50 ppm crystals: 30 ms over linkMaxAgeNS).

// linkSlots is how many clock pairs are related at once: every pair of
// 8 receivers; past that the least recently confirmed pair is forgotten.
const linkSlots = 28

// linkMaxAgeNS is how long, by the frames' mapped times, a pair's offset
// is used after it was last confirmed. Receivers hearing the same traffic
// confirm it with every shared transmission.
const linkMaxAgeNS = 5 * 60e9

// linkSlackNS is how far one copy's offset may differ from its pair's
// fresh offset and confirm it: the signal's path difference between two
// receivers (under a millisecond) and their drift between two shared
// reports. Two clock epochs' offset changes no faster (a reset is a new
// epoch), so a copy that differs more is of another transmission (an
// aircraft that had not moved, heard by one receiver once and by the
// other again): it is kept as a candidate and taken only when the next
// copy agrees with it, which also mends a pair first related wrongly.
// That copy must be another aircraft's: a transmitter replaying one
// aircraft's frames late near one receiver (meaconing) repeats its own
// wrong offset, but cannot make another aircraft's copies agree with it.
const linkSlackNS = 50e6

// clockLink is the offset between two clock epochs a < b: b's SensorNs of
// an instant minus a's, confirmed last at (Unix ns, mapped); cand is an
// offset one copy of aircraft candBy disagreed with it by (hasCand).
type clockLink struct {
	a, b    uint32
	off     int64
	at      int64
	cand    int64
	candBy  string
	hasCand bool
}

// clockLinks are the store's related clock pairs. It is only touched
// under the store's lock.
type clockLinks struct {
	// l[:n] are the related pairs (a handful: every look-up walks them).
	l [linkSlots]clockLink
	n int
	// An aircraft's last four reports (heardAgain) relate two receivers'
	// clocks only when their feeds are less than four reports apart; two
	// racing bursts can be the whole burst apart. So new reports timed on
	// a clock are also kept in heard, a table of the last reports of every
	// aircraft, and a report found there from another clock relates the
	// two. It is kept while more than one clock is heard (a frame came on
	// another clock than the one before it in the last multiNS), and in
	// the first multiNS, when several receivers' bursts may start at once
	// and the second one's first reports must find the first one's. A
	// single receiver does not fill it after that.
	heard             []heardSlot
	seed              maphash.Seed
	lastClock         uint32
	first, multiUntil int64
}

// heardSlots is the size of the table of reports (a power of two): at
// 400 position reports a second (200 aircraft), the last 80 s.
const heardSlots = 1 << 15

// multiNS is how long, by the frames' mapped times, the table is kept
// after a frame came on another clock than the one before it, and after
// the first.
const multiNS = 60e9

// copySeconds is how far apart by their mapped times two receivers'
// copies of one report may be: the most a feeder is expected to buffer
// across a reconnect. A report found in the table from longer ago is the
// aircraft back at the same place, not a copy.
const copySeconds = 60

// heardSlot is one report in the table (24 bytes): its key (aircraft,
// kind, lat, lon; bit 0 set when its clock heard it more than once: an
// aircraft that has not moved repeats it, and which of them another
// clock's copy is of is not known), the second (Unix) and the time on its
// clock it was heard.
type heardSlot struct {
	key   uint64
	ns    int64
	clock uint32
	sec   uint32
}

// keepsReports reports whether a new report at at goes to the table.
func (ls *clockLinks) keepsReports(at sensorclock.Time) bool {
	if at.Clock == 0 {
		return false
	}
	if at.Clock != ls.lastClock {
		ls.lastClock, ls.multiUntil = at.Clock, at.UnixNano+multiNS
	}
	if ls.first == 0 {
		ls.first = at.UnixNano
	}
	return at.UnixNano <= ls.multiUntil || at.UnixNano-ls.first <= multiNS
}

// heardOnce relates at's clock to another that heard the same report
// (frame f of kind k of the aircraft id, whose cprState is c) and keeps
// the report.
func (ls *clockLinks) heardOnce(c *cprState, id string, f cprFrame, k uint8, at sensorclock.Time) {
	if !ls.keepsReports(at) {
		return
	}
	if ls.heard == nil {
		ls.heard, ls.seed = make([]heardSlot, heardSlots), maphash.MakeSeed()
	}
	if c.idHash == 0 {
		c.idHash = maphash.String(ls.seed, id) | 1
	}
	key := (c.idHash ^ (uint64(f.lat)<<35 | uint64(f.lon)<<3 | uint64(k))) &^ 1
	sec := uint32(at.UnixNano / 1e9)
	h := &ls.heard[(key>>1)&(heardSlots-1)]
	switch {
	case h.key&^1 != key || abs64(int64(sec)-int64(h.sec)) > copySeconds:
	case h.clock == at.Clock:
		h.key |= 1 // repeated
		return
	default:
		// Another receiver's copy: the slot keeps the first hearer's, so
		// that every receiver is related to it, one hop apart.
		if h.key&1 == 0 {
			ls.learn(id, sensorclock.Time{UnixNano: int64(h.sec) * 1e9, SensorNs: h.ns, Clock: h.clock}, at)
		}
		return
	}
	*h = heardSlot{key: key, ns: at.SensorNs, clock: at.Clock, sec: sec}
}

// learn relates the clocks of x and y, two receivers' times of one
// transmission of aircraft id.
func (ls *clockLinks) learn(id string, x, y sensorclock.Time) {
	if x.Clock == 0 || y.Clock == 0 || x.Clock == y.Clock {
		return
	}
	if x.Clock > y.Clock {
		x, y = y, x
	}
	off, now := y.SensorNs-x.SensorNs, max(x.UnixNano, y.UnixNano)
	k := 0
	for i := range ls.l[:ls.n] {
		l := &ls.l[i]
		if l.a == x.Clock && l.b == y.Clock {
			l.confirm(id, off, now)
			return
		}
		if l.at < ls.l[k].at {
			k = i
		}
	}
	if ls.n < linkSlots {
		k = ls.n
		ls.n++
	}
	ls.l[k] = clockLink{a: x.Clock, b: y.Clock, off: off, at: now}
}

// confirm takes one copy's offset off, of aircraft id, at now: it
// confirms a fresh link within linkSlackNS; one that differs more is
// taken only when the copy before it, another aircraft's, differed the
// same way.
func (l *clockLink) confirm(id string, off, now int64) {
	fresh := abs64(now-l.at) <= linkMaxAgeNS
	agrees := l.hasCand && abs64(off-l.cand) <= linkSlackNS && l.candBy != id
	if fresh && abs64(off-l.off) > linkSlackNS && !agrees {
		l.cand, l.candBy, l.hasCand = off, id, true
		return
	}
	l.off, l.at, l.hasCand = off, max(l.at, now), false
}

// fresh is the number of pairs confirmed within linkMaxAgeNS of the
// newest confirmation.
func (ls *clockLinks) fresh() int {
	newest := int64(math.MinInt64)
	for _, l := range ls.l[:ls.n] {
		newest = max(newest, l.at)
	}
	n := 0
	for _, l := range ls.l[:ls.n] {
		if newest-l.at <= linkMaxAgeNS {
			n++
		}
	}
	return n
}

// on is t's sensor time on clock epoch c (t.SensorNs when t is on c), and
// whether the two clocks are related: directly, or through other clocks
// (the receivers' first shared reports need not include every pair). The
// links are searched breadth first: a handful of receivers, a few hops.
func (ls *clockLinks) on(t sensorclock.Time, c uint32) (int64, bool) {
	switch {
	case t.Clock == 0 || c == 0:
		return 0, false
	case t.Clock == c:
		return t.SensorNs, true
	}
	var clocks [linkSlots + 1]uint32
	var ns [linkSlots + 1]int64
	clocks[0], ns[0] = t.Clock, t.SensorNs
	n := 1
	for i := 0; i < n; i++ {
		for j := range ls.l[:ls.n] {
			l := &ls.l[j]
			var other uint32
			var v int64
			switch {
			case abs64(t.UnixNano-l.at) > linkMaxAgeNS:
				continue
			case l.a == clocks[i]:
				other, v = l.b, ns[i]+l.off
			case l.b == clocks[i]:
				other, v = l.a, ns[i]-l.off
			default:
				continue
			}
			if other == c {
				return v, true
			}
			if !slices.Contains(clocks[:n], other) {
				clocks[n], ns[n] = other, v
				n++
			}
		}
	}
	return 0, false
}

// since is the time from a to b: by a's clock when b's is a's or related
// to it, by their UTC times otherwise (sensorclock.Since).
func (ls *clockLinks) since(a, b sensorclock.Time) int64 {
	if a.Clock != b.Clock {
		if ns, ok := ls.on(b, a.Clock); ok {
			return ns - a.SensorNs
		}
	}
	return sensorclock.Since(a, b)
}
