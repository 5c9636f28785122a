package mlat

import (
	"math"
	"math/rand"
	"testing"
)

// TestSyncRecoversLinearClocks: two free-running clocks with an offset
// and drift each; points from a known transmitter; converting b's time to
// a's clock must land within the noise of the true value, in both
// directions of the pair.
func TestSyncRecoversLinearClocks(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, c := range []struct {
		a, b       SensorID
		offA, offB float64
		drA, drB   float64
	}{{1, 2, 5e12, 9e13, 20e-6, -35e-6}, {7, 3, 1e9, 4e14, -50e-6, 50e-6}} {
		s := NewSync(SyncConfig{})
		clkA := func(ns float64) int64 { return int64(ns*(1+c.drA) + c.offA) }
		clkB := func(ns float64) int64 { return int64(ns*(1+c.drB) + c.offB) }
		for i := 0; i < 40; i++ {
			tt := 1e9 * float64(i) // true arrival at a, ns
			pred := rng.Float64()*2e5 - 1e5
			noise := rng.NormFloat64() * 30
			s.Observe(c.a, c.b, clkA(tt), clkB(tt+pred+noise), pred)
		}
		tt := 41e9
		got, _, ok := s.Convert(c.a, c.b, clkB(tt))
		if !ok {
			t.Fatalf("%+v: not synced", c)
		}
		if d := float64(got - clkA(tt)); math.Abs(d) > 100 {
			t.Errorf("%+v: a's time off by %.0f ns", c, d)
		}
		got, _, ok = s.Convert(c.b, c.a, clkA(tt))
		if !ok {
			t.Fatalf("%+v: reverse not synced", c)
		}
		if d := float64(got - clkB(tt)); math.Abs(d) > 100 {
			t.Errorf("%+v: b's time off by %.0f ns", c, d)
		}
	}
}

// TestSyncConvertsFarFromItsPoints: two crystals 100 ppm apart, a sync
// point every 20 s for 13 minutes (a sparse network), converted up to
// 200 s after the newest point in both directions of the pair: within the
// noise, and the pair judged good from either sensor's clock. (Taking
// the first clock as the second's less the current offset was off by
// drift² × 200 s = 2 µs; judging "good" on the other sensor's clock
// compared times a day apart.)
func TestSyncConvertsFarFromItsPoints(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	const drA, drB, offA, offB = -50e-6, 50e-6, 3e13, 7e13
	clkA := func(ns float64) int64 { return int64(ns*(1+drA) + offA) }
	clkB := func(ns float64) int64 { return int64(ns*(1+drB) + offB) }
	s := NewSync(SyncConfig{MaxAgeNS: 600e9})
	const last = 780e9
	for tt := 0.0; tt <= last; tt += 20e9 {
		pred := rng.Float64()*2e5 - 1e5
		s.Observe(3, 8, clkA(tt), clkB(tt+pred+rng.NormFloat64()*30), pred)
	}
	for _, gap := range []float64{1e9, 60e9, 200e9} {
		tt := last + gap
		if got, _, ok := s.Convert(3, 8, clkB(tt)); !ok || math.Abs(float64(got-clkA(tt))) > 100 {
			t.Errorf("%.0f s after the last point: a's time off by %d ns (ok %v)", gap/1e9, got-clkA(tt), ok)
		}
		if got, _, ok := s.Convert(8, 3, clkA(tt)); !ok || math.Abs(float64(got-clkB(tt))) > 100 {
			t.Errorf("%.0f s after the last point: b's time off by %d ns (ok %v)", gap/1e9, got-clkB(tt), ok)
		}
		if !s.Good(3, 8, clkA(tt)) || !s.Good(8, 3, clkB(tt)) {
			t.Errorf("%.0f s after the last point: good from a's clock %v, from b's %v", gap/1e9, s.Good(3, 8, clkA(tt)), s.Good(8, 3, clkB(tt)))
		}
	}
}

// TestBuildConvertsThroughAThirdSensor: five free-running sensors where
// sensor 4 has never heard an aircraft together with sensor 0 (the
// group's reference, the best connected) but is synced with 1 and 2:
// its time reaches sensor 0's clock through one of them, within the
// noise, and the five receptions locate the transmitter.
func TestBuildConvertsThroughAThirdSensor(t *testing.T) {
	nw, truth := squareNetwork(Clock12MHz)
	rng := rand.New(rand.NewSource(3))
	off := [5]float64{1e12, 5e13, 2e13, 7e13, 4e12}
	drift := [5]float64{20e-6, -35e-6, 45e-6, -10e-6, 30e-6}
	heard := func(id int, pos Vec, emitNS float64) Reception {
		tt := emitNS + dist(pos, nw.Sensors[id].Pos)/CAir*1e9
		return Reception{Sensor: SensorID(id), T: int64(tt*(1+drift[id]) + off[id] + rng.NormFloat64()*20)}
	}
	for k := 0; k < 20; k++ {
		pos := ECEF(46.9+0.7*rng.Float64(), 7.9+0.9*rng.Float64(), 10000)
		emit := float64(k) * 5e9
		for _, pair := range [][2]int{{0, 1}, {0, 2}, {0, 3}, {1, 4}, {2, 4}} {
			nw.Learn([]Reception{heard(pair[0], pos, emit), heard(pair[1], pos, emit)}, pos)
		}
	}
	var rx []Reception
	for id := 0; id < 5; id++ {
		rx = append(rx, heard(id, truth, 100e9))
	}
	p := Problem{Alt: 9000, AltSigma: baroSigma}
	if err := nw.Build(rx, &p); err != nil || len(p.M) != 5 {
		t.Fatalf("build: %v, %d receptions, want 5", err, len(p.M))
	}
	for i := 1; i < 5; i++ {
		want := (dist(truth, p.M[i].Sensor) - dist(truth, p.M[0].Sensor)) / CAir
		if d := (p.M[i].T - p.M[0].T - want) * 1e9; math.Abs(d) > 100 {
			t.Errorf("reception %d: %.0f ns off its true time difference", i, d)
		}
	}
	var f Fix
	if err := NewSolver(SolverConfig{}).Solve(&p, &f); err != nil || Horizontal(truth, f.Pos) > 100 {
		t.Errorf("fix %v, %.0f m from the truth", err, Horizontal(truth, f.Pos))
	}
}
