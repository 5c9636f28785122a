package mlat

import (
	"math"
	"math/rand"
	"testing"
)

// TestCalibrationLearnsSensorDelays: five GPS-timed sensors whose
// timestamps carry fixed delays (0, +60, −40, +25, −30 ns) and 15 ns of
// noise learn those delays (up to their common part, which the emission
// time absorbs) from 500 ADS-B positions, a fifth of them up to a second
// stale along a random track as real ones are; then a Mode S-only
// transmission is located from the delayed times at least three times
// closer to the truth than by a network that has not learnt. Free-running
// sensors learn no delay (their pair sync absorbs it).
func TestCalibrationLearnsSensorDelays(t *testing.T) {
	delays := [5]float64{0, 60, -40, 25, -30}
	rng := rand.New(rand.NewSource(31))
	nw, truth := squareNetwork(ClockGPS)
	fresh, _ := squareNetwork(ClockGPS)
	heard := func(pos Vec, emit int64, noise float64) []Reception {
		rx := exactRx(nw, pos, emit)
		for i := range rx {
			rx[i].T += int64(math.Round(delays[i] + noise*rng.NormFloat64()))
		}
		return rx
	}
	for k := 0; k < 500; k++ {
		lat, lon := 46.9+0.7*rng.Float64(), 7.9+0.9*rng.Float64()
		pos := ECEF(lat, lon, 9000+2000*rng.Float64())
		claim := pos
		if k%5 == 0 {
			claim = displaced(lat, lon, 9000, 230*rng.Float64(), 2*math.Pi*rng.Float64())
		}
		nw.Learn(heard(pos, int64(k)*1e9, 15), claim)
	}
	var mean, meanTrue float64
	for i := range delays {
		b, ok := nw.DelayNS(SensorID(i))
		if !ok {
			t.Fatalf("sensor %d: no delay learnt", i)
		}
		mean, meanTrue = mean+b/5, meanTrue+delays[i]/5
	}
	for i := range delays {
		b, _ := nw.DelayNS(SensorID(i))
		if got, want := b-mean, delays[i]-meanTrue; math.Abs(got-want) > 8 {
			t.Errorf("sensor %d: learnt %.1f ns relative to the others, want %.1f ± 8", i, got, want)
		}
	}
	rx := heard(truth, 600e9, 0)
	sv := NewSolver(SolverConfig{})
	errAt := func(nw *Network) float64 {
		p := Problem{Alt: 9000, AltSigma: baroSigma}
		var f Fix
		if err := nw.Build(rx, &p); err != nil {
			t.Fatal(err)
		}
		if err := sv.Solve(&p, &f); err != nil {
			t.Fatal(err)
		}
		return Horizontal(truth, f.Pos)
	}
	if cal, raw := errAt(nw), errAt(fresh); cal*3 > raw {
		t.Errorf("fix %.1f m from the truth after calibration, %.1f m without: want at least three times closer", cal, raw)
	}
	free, _ := squareNetwork(Clock12MHz)
	free.Learn(exactRx(free, truth, 0), truth)
	if _, ok := free.DelayNS(0); ok {
		t.Error("a free-running sensor learnt a delay")
	}
}
