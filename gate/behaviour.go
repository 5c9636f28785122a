package gate

import "math"

// Sample is one timestamped position of a track's history.
type Sample struct {
	UnixNano int64
	Lat, Lon float64
}

// Behaviour holds the features of a track's recent path that the
// behaviour and signal-integrity axes read. Features computes them from
// history; DwellNearS is left to DwellNear because it needs the zone.
type Behaviour struct {
	// Samples is the number of positions the features were computed from.
	Samples int `json:"samples"`
	// DurationS is the time from the first to the last sample.
	DurationS float64 `json:"duration_s"`
	// PathM is the length of the path through every sample; NetM the
	// distance from the first to the last.
	PathM float64 `json:"path_m"`
	NetM  float64 `json:"net_m"`
	// GyrationM is the radius of gyration: the root-mean-square distance
	// of the samples from their centroid.
	GyrationM float64 `json:"gyration_m"`
	// NetTurnDeg is the signed sum of heading changes (positive clockwise);
	// a full circle adds ±360.
	NetTurnDeg float64 `json:"net_turn_deg"`
	// AbsTurnRateDegS is the sum of absolute heading changes over DurationS.
	AbsTurnRateDegS float64 `json:"abs_turn_rate_deg_s"`
	// MaxImpliedSpeedMps is the highest speed implied by two consecutive
	// samples.
	MaxImpliedSpeedMps float64 `json:"max_implied_speed_mps"`
	// Jumps counts consecutive samples whose implied speed exceeds
	// JumpSpeedMps, or that move more than JumpMinM with no time between
	// them: the position jumps typical of spoofing or a bad decode.
	Jumps int `json:"jumps"`
	// DwellNearS is the time spent inside or within a buffer of the zone
	// (see DwellNear); Features leaves it 0.
	DwellNearS float64 `json:"dwell_near_s"`
}

// Thresholds of Features.
const (
	// JumpSpeedMps is an implied speed no tracked object plausibly reaches
	// near the ground (about Mach 1).
	JumpSpeedMps = 350.0
	// JumpMinM is the displacement that counts as a jump when two samples
	// share a timestamp (smaller ones are receiver disagreement).
	JumpMinM = 50.0
	// TurnMinSegmentM is the shortest step whose heading counts toward the
	// turn features: a hovering drone's position noise must not look like
	// frantic turning.
	TurnMinSegmentM = 5.0
)

// Features computes the behaviour features of a path. Samples must be in
// time order; segments that go back in time are ignored for speed. Fewer
// than two samples give zero features. Features does not allocate.
func Features(samples []Sample) Behaviour {
	b := Behaviour{Samples: len(samples)}
	if len(samples) < 2 {
		return b
	}
	first, last := samples[0], samples[len(samples)-1]
	b.DurationS = float64(last.UnixNano-first.UnixNano) / 1e9
	b.NetM = Distance(Point{first.Lat, first.Lon}, Point{last.Lat, last.Lon})

	// Gyration in a local plane about the first sample (metres east and
	// north), with Welford's running variance: a track's history spans
	// kilometres at most, where the plane is exact to far below a metre.
	cφ0 := math.Cos(first.Lat * deg)
	var mx, my, m2 float64

	var w turnWalk
	var prev vec
	for i, s := range samples {
		sφ, cφ := math.Sincos(s.Lat * deg)
		sλ, cλ := math.Sincos(s.Lon * deg)
		v := vec{cφ * cλ, cφ * sλ, sφ}

		x := EarthRadiusM * angleDiff(s.Lon, first.Lon) * deg * cφ0
		y := EarthRadiusM * (s.Lat - first.Lat) * deg
		n := float64(i + 1)
		dx, dy := x-mx, y-my
		mx, my = mx+dx/n, my+dy/n
		m2 += dx*(x-mx) + dy*(y-my)

		if i > 0 {
			d := EarthRadiusM * angle(prev, v)
			b.PathM += d
			b.countStep(d, float64(s.UnixNano-samples[i-1].UnixNano)/1e9)
			w.step(&b, v, d)
		}
		prev = v
		w.prevE, w.prevN = vec{-sλ, cλ, 0}, vec{-sφ * cλ, -sφ * sλ, cφ}
	}
	absTurn := w.absTurn
	if b.DurationS > 0 {
		b.AbsTurnRateDegS = absTurn / b.DurationS
	}
	b.GyrationM = math.Sqrt(math.Max(0, m2) / float64(len(samples)))
	return b
}

// countStep adds one step of d metres in dt seconds to the implied speed
// and the jumps.
func (b *Behaviour) countStep(d, dt float64) {
	switch {
	case dt > 0:
		sp := d / dt
		b.MaxImpliedSpeedMps = math.Max(b.MaxImpliedSpeedMps, sp)
		if sp > JumpSpeedMps {
			b.Jumps++
		}
	case dt == 0 && d > JumpMinM:
		b.Jumps++
	}
}

// turnWalk follows the heading of a path from step to step.
type turnWalk struct {
	prevE, prevN vec // east and north at the previous sample
	prevHeading  float64
	haveHeading  bool
	absTurn      float64
}

// step adds the turn into the step of d metres ending at v. Steps shorter
// than TurnMinSegmentM have no heading that counts.
func (w *turnWalk) step(b *Behaviour, v vec, d float64) {
	if d < TurnMinSegmentM {
		return
	}
	// Initial bearing of the step, from the tangent plane at its start.
	h := math.Atan2(v.dot(w.prevE), v.dot(w.prevN)) * rad
	if w.haveHeading {
		t := angleDiff(h, w.prevHeading)
		b.NetTurnDeg += t
		w.absTurn += math.Abs(t)
	}
	w.prevHeading, w.haveHeading = h, true
}

// DwellBufferM is the distance from a zone's edge within which time counts
// as dwelling near it, where the API computes DwellNear for a history it
// is given.
const DwellBufferM = 500.0

// DwellNearWithin is DwellNear for a zone whose every point lies within
// reachM of centre (Geofence.Centre and ScaleM): a sample farther than
// reachM + bufferM from the centre cannot be near the zone, and skips the
// edge scan that costs O(positions) (issue 23: a sweep spent 90% of its
// time measuring every history sample against every edge). Callers that
// evaluate a zone often compute centre and reach once.
func DwellNearWithin(samples []Sample, g *Geofence, bufferM float64, centre Point, reachM float64) float64 {
	var t float64
	far := reachM + bufferM + BoundaryToleranceM
	for i := 1; i < len(samples); i++ {
		s := samples[i-1]
		dt := float64(samples[i].UnixNano-s.UnixNano) / 1e9
		p := Point{s.Lat, s.Lon}
		if dt > 0 && Distance(centre, p) <= far && g.SignedDistance(p) <= bufferM {
			t += dt
		}
	}
	return t
}

// DwellNear returns the seconds of the path spent inside the geofence or
// within bufferM of its edge: the sum of the time steps that start at such
// a position. It does not allocate.
func DwellNear(samples []Sample, g *Geofence, bufferM float64) float64 {
	var t float64
	for i := 1; i < len(samples); i++ {
		s := samples[i-1]
		dt := float64(samples[i].UnixNano-s.UnixNano) / 1e9
		if dt > 0 && g.SignedDistance(Point{s.Lat, s.Lon}) <= bufferM {
			t += dt
		}
	}
	return t
}

// The behaviour sub-scores, each in [0, 1]; the axis takes the largest.
// Each is named for the pattern it detects and saturates at a documented
// scale.
const (
	loiterFullS    = 120.0 // a stationary or wandering track this long loiters fully
	loiterMinPathM = 10.0  // below this path length the track is stationary
	circleFullDeg  = 720.0 // two full turns
	erraticFullDeg = 45.0  // mean absolute turn rate, degrees per second
	dwellFullS     = 300.0 // five minutes around the zone
)

func (b *Behaviour) loiter() float64 {
	straight := 0.0
	if b.PathM >= loiterMinPathM {
		straight = b.NetM / b.PathM
	}
	return clamp01((1 - straight) * math.Min(1, b.DurationS/loiterFullS))
}

func (b *Behaviour) circling() float64 { return clamp01(math.Abs(b.NetTurnDeg) / circleFullDeg) }
func (b *Behaviour) erratic() float64  { return clamp01(b.AbsTurnRateDegS / erraticFullDeg) }
func (b *Behaviour) dwell() float64    { return clamp01(b.DwellNearS / dwellFullS) }

func clamp01(v float64) float64 {
	switch {
	case v > 1:
		return 1
	case v >= 0:
		return v
	}
	return 0 // negative and NaN
}
