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
