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
