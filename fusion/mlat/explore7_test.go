package mlat

import (
	"math"
	"math/rand"
	"testing"
)

func TestExploreVerify2(t *testing.T) {
	sens := loadSensors(t)
	rng := rand.New(rand.NewSource(2))
	for _, set := range refSets {
		rows := loadSet(t, set)
		sv := NewSolver(SolverConfig{Sigma: 100e-9})
		hon := map[Status]int{}
		dis := map[Status]int{}
		var v Verification
		for _, r := range rows {
			p := Problem{AltSigma: 100, Alt: r.baro}
			for i, s := range r.sensors {
				p.M = append(p.M, Measurement{Sensor: sens[s].pos, T: float64(r.ns[i]-r.ns[0]) * 1e-9})
			}
			sv.Verify(&p, ECEF(r.lat, r.lon, r.baro), VerifyConfig{}, &v)
			hon[v.Status]++
			for k := 0; k < 20; k++ {
				az := rng.Float64() * 2 * math.Pi
				e, n, _ := enuAt(r.lat, r.lon)
				P := ECEF(r.lat, r.lon, r.baro).add(e.scale(1000 * math.Sin(az))).add(n.scale(1000 * math.Cos(az)))
				sv.Verify(&p, P, VerifyConfig{}, &v)
				dis[v.Status]++
			}
		}
		t.Logf("%s honest %v displaced %v", set, hon, dis)
	}
}
