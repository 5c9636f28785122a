package history

import (
	"context"
	"math"
	"time"
)

// fedPoint is a fed fix (issue 30) as the store packs it: the values
// rounded as fusion's views round them and held in the codec's compact
// units, its track's decision with it. The recorder makes one per fix
// and the store packs it straight into its track's filling chunk
// (Store.insertFed), without a Point: at the pipeline benchmark's 2,209
// tracks a commit of 2,048 fixes is ~2,000 runs of one point, and a
// Point per fix (pointer fields, grouped into runs, checked, classified,
// each value rounded and then proved compact again by the codec) was
// about half of the recorder's CPU per fix.
type fedPoint struct {
	id string
	t  int64 // Unix ns
	// u: lat, lon in 1e-6°, alt in 0.1 m, speed, heading, vrate in
	// velScale's units.
	u                                   [6]int64
	hasAlt, hasVel, hasLambda           bool
	lambda                              float64
	altKind, protocol, sensor, decision string
	// bad marks the values of u that are not a finite number of compact
	// units below 2⁵³: u holds the rounded value's bits instead, and the
	// point goes the way of a Point (Insert refusing what it cannot
	// store; today's fusion never hands such a value).
	bad uint8
	// h is the recorder's handle to the track's state in the store (nil:
	// none).
	h *trackHandle
}

// unitScale are the compact units of fedPoint.u.
var unitScale = [6]float64{1e6, 1e6, 10, velScale[0], velScale[1], velScale[2]}

// setUnit sets u[j] to v rounded to units of 1/unitScale[j] (as
// fusion.Round rounds a view's values). A value rounding to −0 is 0.
func (p *fedPoint) setUnit(j int, v float64) {
	r := math.Round(v * unitScale[j])
	if !(math.Abs(r) < 1<<53) {
		p.bad |= 1 << j
		p.u[j] = int64(math.Float64bits(r / unitScale[j]))
		return
	}
	p.u[j] = int64(r)
}

// value is u[j] as the float it stands for.
func (p *fedPoint) value(j int) float64 {
	if p.bad&(1<<j) != 0 {
		return math.Float64frombits(uint64(p.u[j]))
	}
	return float64(p.u[j]) / unitScale[j]
}

// flags is the point's flags byte when packed after st.
func (p *fedPoint) flags(st *packState, withStrings bool) byte {
	flags := byte(0)
	if p.hasAlt {
		flags |= flagAlt
	}
	if p.hasVel {
		flags |= flagSpeed | flagHeading | flagVRate
	}
	if p.hasLambda {
		flags |= st.lambdaFlags(p.lambda)
	}
	return flags | stringsCompact(withStrings, true)
}

// point is p as a Point (for the general path; its measurements are
// fresh allocations).
func (p *fedPoint) point() Point {
	q := Point{TrackID: p.id, Time: time.Unix(0, p.t).UTC(), Lat: p.value(0), Lon: p.value(1),
		Protocol: p.protocol, Sensor: p.sensor, Decision: p.decision}
	if p.hasAlt {
		q.AltM, q.AltKind = f64p(p.value(2)), p.altKind
	}
	if p.hasVel {
		q.SpeedMps, q.HeadingDeg, q.VRateMps = f64p(p.value(3)), f64p(p.value(4)), f64p(p.value(5))
	}
	if p.hasLambda {
		q.Lambda = f64p(p.lambda)
	}
	return q
}

func f64p(v float64) *float64 { return &v }

// storable reports whether p packs compactly and lies on the globe.
func (p *fedPoint) storable() bool {
	return p.bad == 0 && p.u[0] >= -90e6 && p.u[0] <= 90e6 && p.u[1] >= -180e6 && p.u[1] <= 180e6 &&
		(!p.hasLambda || !math.IsNaN(p.lambda) && !math.IsInf(p.lambda, 0))
}

// appendFed packs p (compact) after the point st describes, with its
// strings when withStrings: the bytes append packs for p.point().
func (st *packState) appendFed(b []byte, p *fedPoint, withStrings bool) []byte {
	b = st.appendTime(b, p.t)
	flags := p.flags(st, withStrings)
	b = append(b, flags)
	b = st.appendCompact(b, flags, &p.u)
	return st.appendTail(b, flags, p.lambda, p.altKind, p.protocol, p.sensor, p.decision)
}

// addFed appends p, which fits (or starts an empty chunk).
func (c *chunk) addFed(p *fedPoint) {
	lat, lon := p.value(0), p.value(1)
	withStrings := c.begin(p.id, p.t, p.protocol, lat, lon) ||
		p.altKind != c.last.AltKind || p.protocol != c.last.Protocol || p.sensor != c.last.Sensor || p.decision != c.last.Decision
	c.data = c.st.appendFed(c.data, p, withStrings)
	c.added(p.t, lat, lon)
	if withStrings {
		c.noteStrings(p.altKind, p.protocol, p.sensor, p.decision)
	}
}

// insertFed stores fed points and returns how many were new, as Insert
// does: each packed straight into its track's filling chunk when it is
// newer than the track's chunks and held points (the fed fixes' case:
// the recorder keeps a track's times increasing), the rest (older, a
// replay after a restart; or not storable) through Insert's general
// path. A batch holding a point that cannot be stored is refused whole,
// as Insert refuses it.
func (s *Store) insertFed(ctx context.Context, fps []fedPoint) (int, error) {
	if len(fps) == 0 {
		return 0, nil
	}
	for i := range fps {
		if !fps[i].storable() {
			return s.Insert(ctx, fedPoints(fps))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	holding, heldN, next := len(s.holding), s.heldN, s.logNext
	n, err := s.holdFedPoints(ctx, fps)
	if err == nil {
		err = s.logHeld(holding, heldN, next)
	} else {
		s.unhold(s.marks, holding, heldN, next)
		clear(s.marks)
		s.marks = s.marks[:0]
	}
	rest := s.fedRest
	defer func() { clear(rest); s.fedRest = rest[:0] }()
	if err != nil {
		return 0, err
	}
	if len(rest) > 0 {
		k, err := s.insert(ctx, s.grp.runs(rest), true)
		return n + k, err
	}
	return n, s.compactWhenDue(ctx)
}

// holdFedPoints holds the fed points that are newer than their tracks'
// chunks and held points, marking their tracks (s.marks), and returns
// their number; the others it gathers in s.fedRest, as Points (s.mu
// held). A track's points are held when its first in the batch is newer
// than its chunks and its held points: the rest of them are newer still
// when their times increase, and one that is not goes the general path.
func (s *Store) holdFedPoints(ctx context.Context, fps []fedPoint) (int, error) {
	s.grp.gen++
	gen := s.grp.gen
	rest := s.fedRest[:0]
	defer func() { s.fedRest = rest }()
	n := 0
	for i := range fps {
		p := &fps[i]
		t := s.trackFor(p)
		if t.gen != gen {
			end, err := s.chunkEnd(ctx, t, p.t)
			if err != nil {
				return 0, err
			}
			t.gen, t.k = gen, -1
			if p.t > end && (len(t.held) == 0 || p.t > lastChunk(t.held).t1) {
				t.k, t.fedLast = 0, p.t-1
				s.marks = append(s.marks, markOf(t))
			}
		}
		if t.k < 0 || p.t <= t.fedLast {
			rest = append(rest, p.point())
			continue
		}
		t.fedLast = p.t
		s.holdFed(t, p)
		n++
	}
	return n, nil
}

// trackFor is the state of p's track: its handle's when that is valid,
// else found in s.tracks (added when new) and the handle set to it.
func (s *Store) trackFor(p *fedPoint) *trackState {
	h := p.h
	if h != nil && h.st == s && h.epoch == s.epoch {
		return h.t
	}
	t := trackOf(s.tracks, p.id)
	if h != nil {
		*h = trackHandle{st: s, t: t, epoch: s.epoch}
	}
	return t
}

// holdFed adds p, newer than its track's held points, to the track's
// filling chunk (hold for one fed point).
func (s *Store) holdFed(t *trackState, p *fedPoint) {
	s.fillingChunk(t, p.t, p.protocol).addFed(p)
	s.heldN++
}

// fedPoints is fps as Points.
func fedPoints(fps []fedPoint) []Point {
	pts := make([]Point, len(fps))
	for i := range fps {
		pts[i] = fps[i].point()
	}
	return pts
}
