package mlat

import (
	"math"
	"math/rand"
	"testing"
)

// displaced returns pos moved d metres horizontally at azimuth az.
func displaced(lat, lon, h, d, az float64) Vec {
	e, n, _ := enuAt(lat, lon)
	return ECEF(lat, lon, h).add(e.scale(d * math.Sin(az))).add(n.scale(d * math.Cos(az)))
}

// TestReferenceVerification checks every reference row's own position
// claim (honest) and the same claim moved 1–5 km in a random direction
// (displaced) against the row's GPS-timed receptions, on a network
// calibrated from the other sets (calibrated). Targets, on every set and
// over the four: displaced contradicted ≥ 99 %, honest contradicted
// ≤ 0.5 %, and a displaced claim never "verified" more than 0.5 % of the
// time.
func TestReferenceVerification(t *testing.T) {
	sens := loadSensors(t)
	rng := rand.New(rand.NewSource(31))
	var hon, dis [3]int
	for _, set := range refSets {
		rows := loadSet(t, set)
		nw := calibrated(t, sens, set)
		sv := NewSolver(SolverConfig{})
		var h, d [3]int
		var p Problem
		var v Verification
		for i := range rows {
			r := &rows[i]
			p.Alt, p.AltSigma = r.baro, baroSigma
			if err := nw.Build(rowReceptions(r, gpsClock), &p); err != nil {
				t.Fatalf("%s row %d: %v", set, r.id, err)
			}
			sv.Verify(&p, ECEF(r.lat, r.lon, r.baro), VerifyConfig{}, &v)
			h[v.Status]++
			for k := 0; k < 10; k++ {
				sv.Verify(&p, displaced(r.lat, r.lon, r.baro, 1000+4000*rng.Float64(), 2*math.Pi*rng.Float64()), VerifyConfig{}, &v)
				d[v.Status]++
			}
		}
		t.Logf("%s honest: %d verified, %d contradicted (%.2f %%), %d unverifiable; displaced 1–5 km: %d contradicted (%.2f %%), %d verified, %d unverifiable",
			set, h[Verified], h[Contradicted], pct(h[Contradicted], h), h[Unverifiable], d[Contradicted], pct(d[Contradicted], d), d[Verified], d[Unverifiable])
		if c := pct(h[Contradicted], h); c > 0.5 {
			t.Errorf("%s: honest claims contradicted %.2f %%, want ≤ 0.5 %%", set, c)
		}
		if c := pct(d[Contradicted], d); c < 99 {
			t.Errorf("%s: displaced claims contradicted %.2f %%, want ≥ 99 %%", set, c)
		}
		for s := range hon {
			hon[s] += h[s]
			dis[s] += d[s]
		}
	}
	if c := pct(dis[Contradicted], dis); c < 99 {
		t.Errorf("displaced claims contradicted %.2f %%, want ≥ 99 %%", c)
	}
	if c := pct(hon[Contradicted], hon); c > 0.5 {
		t.Errorf("honest claims contradicted %.2f %%, want ≤ 0.5 %%", c)
	}
	if c := pct(dis[Verified], dis); c > 0.5 {
		t.Errorf("displaced claims verified %.2f %%, want ≤ 0.5 %%", c)
	}
}

func pct(n int, all [3]int) float64 {
	return 100 * float64(n) / float64(all[0]+all[1]+all[2])
}

// TestVerifySynthetic: a transmitter inside a square of four sensors,
// exact times; its true claim is verified, a claim 2 km away
// contradicted, and with the sensors all on one line (no geometry)
// nothing is contradicted.
func TestVerifySynthetic(t *testing.T) {
	lat, lon := 47.0, 8.0
	truth := ECEF(lat+0.1, lon+0.05, 9000)
	line := []Vec{ECEF(lat, lon, 400), ECEF(lat+0.0001, lon+0.0001, 400), ECEF(lat+0.0002, lon+0.0002, 400), ECEF(lat+0.0003, lon+0.0003, 400)}
	sv := NewSolver(SolverConfig{})
	var v Verification
	for _, c := range []struct {
		name    string
		sensors []Vec
		claim   Vec
		want    Status
	}{
		{"true claim", squareSensors(lat, lon), truth, Verified},
		{"2 km off", squareSensors(lat, lon), displaced(lat+0.1, lon+0.05, 9000, 2000, 1), Contradicted},
		{"collinear sensors", line, displaced(lat+0.1, lon+0.05, 9000, 2000, 1), Unverifiable},
	} {
		p := exactProblem(c.sensors, truth, 0)
		sv.Verify(&p, c.claim, VerifyConfig{}, &v)
		if v.Status != c.want {
			t.Errorf("%s: %v (reason %v, distance %.0f m, σ %.0f m), want %v", c.name, v.Status, v.Reason, v.DistanceM, v.SigmaM, c.want)
		}
	}
}

// squareSensors are four sensors on the corners of a 0.5° × 0.7° box at
// (lat, lon) and one in its middle.
func squareSensors(lat, lon float64) []Vec {
	return []Vec{ECEF(lat, lon, 400), ECEF(lat+0.5, lon, 500), ECEF(lat, lon+0.7, 300), ECEF(lat+0.5, lon+0.7, 600), ECEF(lat+0.25, lon+0.35, 450)}
}

// exactProblem is a transmission from truth heard by sensors at exact
// times, the last one delayS late, with a 9,000 m altitude.
func exactProblem(sensors []Vec, truth Vec, delayS float64) Problem {
	p := Problem{Alt: 9000, AltSigma: baroSigma}
	for _, s := range sensors {
		p.M = append(p.M, Measurement{Sensor: s, T: dist(truth, s) / CAir})
	}
	p.M[len(p.M)-1].T += delayS
	return p
}

// TestLateAloneExcusesOnlyALateReception: the rule that keeps a
// reflection at one sensor from calling an honest claim false (Verify
// gives no verdict, one_reception) excuses a true claim whose one
// reception is 3 µs late, but not one 3 µs early (no reflection arrives
// early), nor a claim 2 km off with exact times, nor a true claim with
// exact times (nothing to excuse).
func TestLateAloneExcusesOnlyALateReception(t *testing.T) {
	lat, lon := 47.0, 8.0
	truth := ECEF(lat+0.1, lon+0.05, 9000)
	sv := NewSolver(SolverConfig{})
	for _, c := range []struct {
		name   string
		claim  Vec
		delayS float64
		want   bool
	}{
		{"true claim, one reception 3 µs late", truth, 3e-6, true},
		{"true claim, one reception 3 µs early", truth, -3e-6, false},
		{"claim 2 km off, exact times", displaced(lat+0.1, lon+0.05, 9000, 2000, 1), 0, false},
		{"true claim, exact times", truth, 0, false},
	} {
		p := exactProblem(squareSensors(lat, lon), truth, c.delayS)
		if got := sv.lateAlone(&p, c.claim); got != c.want {
			t.Errorf("%s: lateAlone %v, want %v", c.name, got, c.want)
		}
	}
}
