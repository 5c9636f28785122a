package fusion

import "github.com/cuasd/cuasd/decode/sensorclock"

// Several receivers hear one aircraft: every transmission reaches fusion
// once per receiver, each copy timed by its own receiver's clock and
// delivered with its own latency. Only the first copy is a new fix; the
// others, and any position older than the track's newest, are skipped
// (counted in cuasd_positions_skipped_total), so that a track's position
// never steps back to an older one and its history holds each fix once,
// in time order, however many receivers hear it.

// skipReason is why a position was no new fix of its track.
type skipReason int

const (
	// skipHeardAgain: another receiver's copy of a transmission already
	// applied.
	skipHeardAgain skipReason = iota
	// skipOlder: older than the track's position (heard late).
	skipOlder
	skipReasons
)

func (r skipReason) String() string {
	switch r {
	case skipHeardAgain:
		return "heard_again"
	case skipOlder:
		return "older"
	}
	return "unknown"
}

// heardAgainNS is how far apart in time two receivers' copies of one
// compact position report may be timed: readsb's window (track.c,
// cpr_duplicate_check). Receivers on GPS time stamp one transmission
// microseconds apart; free-running ones, mapped to UTC from their
// arrivals, by the difference of their feeds' latencies. An aircraft
// repeats a compact position only when it has not moved (the encoding
// resolves ~5 m), so a repeat mistaken for a copy loses nothing.
const heardAgainNS = 2e9

// heardFrame is one compact position report as a receiver heard it, at
// t (Unix ns) and ns on its clock epoch (0: none). Two receivers' copies
// compare by their clocks when those are related (clockLinks), by their
// UTC times otherwise.
type heardFrame struct {
	lat, lon uint32
	kind     uint8 // frameKind
	clock    uint32
	sensor   string
	t, ns    int64
}

// time is when the frame was heard.
func (h *heardFrame) time() sensorclock.Time {
	return sensorclock.Time{UnixNano: h.t, SensorNs: h.ns, Clock: h.clock}
}

// frameKind tells apart the reports a lat/lon pair alone does not: even
// or odd, airborne or surface; 0 is an empty slot.
func frameKind(odd, surface bool) uint8 {
	k := uint8(1)
	if odd {
		k |= 2
	}
	if surface {
		k |= 4
	}
	return k
}

// heardAgain reports whether frame f, heard by sensor at at, is another
// receiver's copy of a report heard in the last heardAgainNS; when it is
// not, f is remembered. The last four reports are kept, as readsb keeps
// them: an aircraft sends about two a second. A copy relates the two
// receivers' clocks (links), unless the report was heard more than once
// (an aircraft that has not moved repeats it), when which of them the
// copy is of is not known.
func (c *cprState) heardAgain(id string, f cprFrame, odd bool, sensor string, at sensorclock.Time, links *clockLinks) bool {
	k := frameKind(odd, f.surface)
	match, same := -1, 0
	for i := range c.heard {
		h := &c.heard[i]
		if h.kind != k || h.lat != f.lat || h.lon != f.lon {
			continue
		}
		same++
		if h.sensor != sensor && abs64(links.since(h.time(), at)) <= heardAgainNS {
			match = i
		}
	}
	if match >= 0 {
		if same == 1 {
			links.learn(id, c.heard[match].time(), at)
		}
		return true
	}
	links.heardOnce(c, id, f, k, at)
	c.heard[c.heardNext] = heardFrame{lat: f.lat, lon: f.lon, kind: k, clock: at.Clock, sensor: sensor, t: at.UnixNano, ns: at.SensorNs}
	c.heardNext = (c.heardNext + 1) % uint8(len(c.heard))
	return false
}

// A position heard by one receiver is judged for a jump against the last
// accepted one, which another receiver may have heard. The time between
// them is then only as good as the two receivers' clocks mapped to UTC:
// live, within their feeds' latency difference, which the jump check's
// 1 km slack absorbs; but in a burst or a fast replay a free-running
// receiver's times are held at their arrivals (a mapped time is never
// after its arrival), so UTC squeezes the time between two receivers'
// positions and a real aircraft seems to fly several times its speed.
// On its own receiver's clock the time is exact, so a position is judged
// instead against the last one accepted on its own clock when that is
// recent (sameClockRefNS of UTC before the track's last position: the
// tolerance this adds live is at most that much flight), or when the
// receiver's times have been held since it (heldNS more of its clock
// than of UTC: the data comes faster than real time, and UTC says
// nothing about the time between two receivers' positions).

// sameClockRefNS is how much older than the track's last position the
// last one on a position's own clock may be to be its reference live.
const sameClockRefNS = 2e9

// heldNS is how much more a receiver's clock may advance than its mapped
// UTC times before its times count as held (a burst, a fast replay):
// live the two advance together, but for the smallest-delay tracking of
// the clock model, which moves them apart by a feed's latency changes.
const heldNS = 1e9

// clockPosition is the last position accepted on one clock epoch.
type clockPosition struct {
	clock              uint32
	sensorNs, unixNano int64
	lat, lon           float64
}

// noteOnClock remembers a position accepted at at (at.Clock != 0) as its
// clock's last; the least recent clock's slot is reused.
func (c *cprState) noteOnClock(at sensorclock.Time, lat, lon float64) {
	k := 0
	for i := range c.onClock {
		if c.onClock[i].clock == at.Clock {
			k = i
			break
		}
		if c.onClock[i].unixNano < c.onClock[k].unixNano {
			k = i
		}
	}
	c.onClock[k] = clockPosition{clock: at.Clock, sensorNs: at.SensorNs, unixNano: at.UnixNano, lat: lat, lon: lon}
}

// jumpReference is the position a new one at at is judged against for a
// jump, and the time from it to at: the track's last position, or the
// last one on at's own clock when the last came from another clock.
func (t *track) jumpReference(at sensorclock.Time, links *clockLinks) (lat, lon float64, since int64) {
	last := t.lastPoint()
	since = t.sinceLastPosition(at, links)
	c := t.cpr
	if c == nil || at.Clock == 0 || c.posT.UnixNano != last.T || c.posT.Clock == at.Clock {
		return last.Lat, last.Lon, since
	}
	if _, ok := links.on(at, c.posT.Clock); ok {
		return last.Lat, last.Lon, since // the time between them is known
	}
	for i := range c.onClock {
		r := &c.onClock[i]
		if r.clock != at.Clock {
			continue
		}
		onClock := at.SensorNs - r.sensorNs
		if last.T-r.unixNano <= sameClockRefNS || onClock-(at.UnixNano-r.unixNano) > heldNS {
			return r.lat, r.lon, onClock
		}
	}
	return last.Lat, last.Lon, since
}
