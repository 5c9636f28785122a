package mlat

import (
	"math/rand"
	"testing"
)

// TestBancroftFindsTheTransmitter: exact times from five sensors give the
// transmitter as one of the (at most two) closed-form solutions.
func TestBancroftFindsTheTransmitter(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	for k := 0; k < 200; k++ {
		lat, lon := -60+120*rng.Float64(), -180+360*rng.Float64()
		truth := ECEF(lat+rng.Float64()*2-0.5, lon+rng.Float64()*2-0.5, 300+12000*rng.Float64())
		emit := rng.Float64() * 1e-3
		var p Problem
		for i := 0; i < 5; i++ {
			s := ECEF(lat+rng.Float64(), lon+rng.Float64(), 500*rng.Float64())
			p.M = append(p.M, Measurement{Sensor: s, T: emit + dist(truth, s)/CAir})
		}
		sol, n := bancroft(&p)
		best := 1e18
		for i := 0; i < n; i++ {
			best = min(best, dist(sol[i], truth))
		}
		if best > 1 {
			t.Fatalf("case %d: nearest of %d solutions %.3f m from the transmitter", k, n, best)
		}
	}
}
