package mlat

import (
	"math"
	"math/rand"
	"sort"
	"testing"
)

// flight is a synthetic aircraft on a straight track at constant height.
type flight struct {
	lat0, lon0, h   float64
	speed, trackDeg float64
	latency         float64
}

// at is the flight's position and velocity t seconds after its start.
func (f *flight) at(t float64) (Vec, Vec) {
	const r = 6371e3
	s, c := math.Sincos(f.trackDeg * math.Pi / 180)
	lat := f.lat0 + f.speed*c*t/r*180/math.Pi
	lon := f.lon0 + f.speed*s*t/(r*math.Cos(f.lat0*math.Pi/180))*180/math.Pi
	return ECEF(lat, lon, f.h), GroundVelocity(lat, lon, f.speed, f.trackDeg)
}

// TestLatencyFitRecoversTheLag: GPS-timed receptions of aircraft whose
// claimed positions lag them by a known latency give that latency back
// within the fit's own stated standard deviation (at most 3σ for ≥ 97 %
// of 400 transmissions, and the z-scores' spread about 1).
func TestLatencyFitRecoversTheLag(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	nw, _ := squareNetwork(ClockGPS)
	var zs []float64
	for k := 0; k < 400; k++ {
		f := flight{lat0: 46.9 + 0.7*rng.Float64(), lon0: 7.9 + 0.9*rng.Float64(), h: 9000, speed: 150 + 100*rng.Float64(),
			trackDeg: 360 * rng.Float64(), latency: rng.Float64()}
		truth, _ := f.at(0)
		claim, vel := f.at(-f.latency)
		rx := exactRx(nw, truth, 1e9)
		for i := range rx {
			rx[i].T += int64(math.Round(20 * rng.NormFloat64()))
		}
		var p Problem
		if err := nw.Build(rx, &p); err != nil {
			t.Fatal(err)
		}
		for i := range p.M {
			p.M[i].Sigma = 20e-9
		}
		tau, sigma, ok := LatencyFit(&p, claim, vel)
		if !ok {
			t.Fatalf("transmission %d: no fit", k)
		}
		zs = append(zs, (tau-f.latency)/sigma)
	}
	within := 0
	for _, z := range zs {
		if math.Abs(z) <= 3 {
			within++
		}
	}
	sort.Float64s(zs)
	spread := (zs[len(zs)*84/100] - zs[len(zs)*16/100]) / 2
	if within < len(zs)*97/100 || spread < 0.7 || spread > 1.3 {
		t.Errorf("%d of %d latencies within 3σ of the truth, z spread %.2f; want ≥ 97 %% and about 1", within, len(zs), spread)
	}
	if _, _, ok := LatencyFit(&Problem{M: make([]Measurement, 2)}, ECEF(47, 8, 9000), Vec{100}); ok {
		t.Error("a fit from two receptions")
	}
}

// TestLearnMovingSyncsPastTheLag: free-running sensors synced from ADS-B
// aircraft that each claim positions 0.1–0.5 s old, fed to one network
// through LearnMoving and to another through Learn, with Mode S-only
// transmissions located through both networks' syncs.
//
//   - crossing: aircraft over the sensors on every heading. The lags push
//     the pairs' lines every way and mostly cancel, so both networks
//     locate alike (within 15 %); LearnMoving must recover each aircraft's
//     latency (median error ≤ 0.04 s; 0.007–0.021 s over six seeds).
//   - airway: every aircraft north of the sensors, eastbound. The lags
//     push each pair's line the same way, Learn's sync carries that bias
//     and its fixes err by it; LearnMoving's must be at least 10 % closer
//     (15–29 % over six seeds), its latencies nearer the truth than
//     Learn's implicit zero (median error ≤ 0.75 × the latencies' median;
//     0.1–0.6 over six seeds: a latency common to the traffic is barely
//     observable on free-running clocks when it all flies one way).
//
// With LearnMoving doing what Learn does, crossing fails on the
// latencies and airway on both counts.
func TestLearnMovingSyncsPastTheLag(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		lat0, latSpan, trk0, trk float64
		// maxTauErr bounds the latencies' median error, s, or as a
		// fraction of their median (Learn's implicit error) when < 0
		maxTauErr, minGain float64
	}{
		{"crossing", 46.7, 0.9, 0, 360, 0.04, -0.15},
		{"airway", 47.6, 0.3, 80, 20, -0.75, 0.10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(8))
			flights := make([]flight, 24)
			for i := range flights {
				flights[i] = flight{lat0: tc.lat0 + tc.latSpan*rng.Float64(), lon0: 7.6 + 1.1*rng.Float64(), h: 8000 + 3000*rng.Float64(),
					speed: 180 + 80*rng.Float64(), trackDeg: tc.trk0 + tc.trk*rng.Float64(), latency: 0.1 + 0.4*rng.Float64()}
			}
			moving, plain, tauErr := syncThroughLag(t, rng, flights)
			mt, mm, mp := percentile(tauErr, .5), percentile(moving, .5), percentile(plain, .5)
			t.Logf("latency error median %.3f s; Mode S fixes: LearnMoving %d, median %.1f m; Learn %d, median %.1f m", mt, len(moving), mm, len(plain), mp)
			want := tc.maxTauErr
			if want < 0 {
				lat := make([]float64, len(flights))
				for i := range flights {
					lat[i] = flights[i].latency
				}
				want = -want * percentile(lat, .5)
			}
			if mt > want {
				t.Errorf("latencies recovered within %.3f s (median); want ≤ %.3f s", mt, want)
			}
			if len(moving) < 250 || mm > mp*(1-tc.minGain) {
				t.Errorf("LearnMoving: %d fixes, median %.1f m; Learn: median %.1f m; want ≥ 250 fixes and a median ≤ %.2f × Learn's", len(moving), mm, mp, 1-tc.minGain)
			}
		})
	}
}

// syncThroughLag runs flights' lagging claims through two 12 MHz
// networks (LearnMoving and Learn) for 600 s, four claims a second, and
// from the fifth minute locates a Mode S transmission a second through
// each. It returns both networks' horizontal errors and LearnMoving's
// latency errors per flight.
func syncThroughLag(t *testing.T, rng *rand.Rand, flights []flight) (moving, plain, tauErr []float64) {
	t.Helper()
	nwMoving, _ := squareNetwork(Clock12MHz)
	nwPlain, _ := squareNetwork(Clock12MHz)
	clock := randomClocks(rng)
	heard := func(pos Vec, at float64) []Reception {
		rx := make([]Reception, len(nwMoving.Sensors))
		for i, s := range nwMoving.Sensors {
			ns := at*1e9 + dist(pos, s.Pos)/CAir*1e9 + 20*rng.NormFloat64()
			rx[i] = Reception{Sensor: SensorID(i), T: clock(i, int64(ns))}
		}
		return rx
	}
	sv := NewSolver(SolverConfig{})
	for step := 0; step < 2400; step++ {
		now := 100 + float64(step)*0.25
		k := step % len(flights)
		f := &flights[k]
		truth, _ := f.at(now)
		claim, vel := f.at(now - f.latency)
		rx := heard(truth, now)
		nwMoving.LearnMoving(uint32(k), rx, claim, vel)
		nwPlain.Learn(rx, claim)
		if step < 1200 || step%4 != 0 {
			continue
		}
		target := ECEF(46.9+0.6*rng.Float64(), 7.9+0.8*rng.Float64(), 9000)
		rx = heard(target, now+0.1)
		for _, c := range []struct {
			nw   *Network
			errs *[]float64
		}{{nwMoving, &moving}, {nwPlain, &plain}} {
			p := Problem{Alt: 9000, AltSigma: baroSigma}
			var fix Fix
			if c.nw.Build(rx, &p) == nil && sv.Solve(&p, &fix) == nil {
				*c.errs = append(*c.errs, Horizontal(target, fix.Pos))
			}
		}
	}
	for k := range flights {
		tau, _ := nwMoving.LatencyS(uint32(k))
		tauErr = append(tauErr, math.Abs(tau-flights[k].latency))
	}
	return moving, plain, tauErr
}

// TestLatencyFitMatchesReferenceLag cross-checks LatencyFit on the
// reference sets' GPS-timed receptions (the network calibrated from the
// other sets), each row's velocity from its aircraft's previous row as a
// live network would have it, against the test's own measure of the
// same lag (referenceLatency: a search along the track through the
// aircraft's neighbouring rows, no solver). Per set, the fits' median
// must lie within 0.05 s of the reference measure's median over the same
// rows, and the two must agree row by row better than by chance
// (Spearman z ≥ 3).
func TestLatencyFitMatchesReferenceLag(t *testing.T) {
	sens := loadSensors(t)
	for _, set := range refSets {
		rows := loadSet(t, set)
		nw := calibrated(t, sens, set)
		track := trackVelocities(rows, 300)
		past := newPastVelocities()
		var fit, ref []float64
		var p Problem
		for i := range rows {
			vel := past.velocity(rows, i)
			if vel == (Vec{}) || !track[i].ok || track[i].speed() < 50 || nw.Build(rowReceptions(&rows[i], gpsClock), &p) != nil {
				continue
			}
			tau, sigma, ok := LatencyFit(&p, rows[i].truth(), vel)
			rt, rms := referenceLatency(sens, &rows[i], track[i])
			if ok && sigma <= latencyMaxSigmaS && rms < 100 {
				fit, ref = append(fit, tau), append(ref, rt)
			}
		}
		rho, z := spearmanZ(fit, ref)
		mf, mr := percentile(append([]float64(nil), fit...), .5), percentile(append([]float64(nil), ref...), .5)
		t.Logf("%s: %d rows, LatencyFit median %.3f s, reference measure %.3f s, Spearman ρ %.2f (z %.1f)", set, len(fit), mf, mr, rho, z)
		if math.Abs(mf-mr) > 0.05 || z < 3 {
			t.Errorf("%s: LatencyFit median %.3f s against %.3f s, z %.1f; want within 0.05 s and z ≥ 3", set, mf, mr, z)
		}
	}
}
