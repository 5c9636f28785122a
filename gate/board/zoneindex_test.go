package board

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cuasd/cuasd/gate"
)

// TestZoneIndexMatchesLinearScan: the index answers what the linear scan
// answers, for zones of every size, near the poles and across the
// antimeridian, at random points and at points near each zone.
func TestZoneIndexMatchesLinearScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var zs []gate.Geofence
	for i := range 300 {
		lat, lon := rng.Float64()*170-85, rng.Float64()*360-180
		if i%10 == 0 {
			lon = 179.9 - rng.Float64()*0.2 // by the antimeridian
		}
		if i%17 == 0 {
			lat = 88 - rng.Float64()*3 // by the pole
		}
		r := []float64{200, 2000, 20_000, 300_000}[i%4]
		zs = append(zs, gate.Geofence{ID: fmt.Sprint(i), Center: []float64{lat, lon}, RadiusM: r})
	}
	boxes := zoneBoxes(zs)
	idx := newZoneIndex(boxes)
	check := func(lat, lon float64) {
		want := candidateZones(boxes, zs, lat, lon)
		if got := idx.candidates(lat, lon); !slices.Equal(got, want) {
			t.Fatalf("(%g, %g): index %v, scan %v", lat, lon, got, want)
		}
	}
	for range 20_000 {
		check(rng.Float64()*180-90, rng.Float64()*360-180)
	}
	for _, z := range zs {
		for range 20 {
			p := gate.Destination(gate.Point{Lat: z.Center[0], Lon: z.Center[1]}, rng.Float64()*60_000, rng.Float64()*360)
			check(p.Lat, p.Lon)
		}
	}
	if len(idx.global) == 0 || len(idx.cells) == 0 {
		t.Errorf("%d global zones, %d cells: the test does not exercise both paths", len(idx.global), len(idx.cells))
	}
}

// benchCandidates places 500 zones (the stored-zone limit) over Europe and
// looks up 100,000 track positions spread over the same area: the
// prefilter's share of one sweep.
func benchCandidates(b *testing.B, lookup func(boxes []zoneBox, zs []gate.Geofence) func(lat, lon float64) []int) {
	rng := rand.New(rand.NewPCG(11, 12))
	zs := make([]gate.Geofence, 500)
	for i := range zs {
		zs[i] = gate.Geofence{ID: fmt.Sprint(i), Center: []float64{40 + rng.Float64()*20, -10 + rng.Float64()*40}, RadiusM: 1000 + rng.Float64()*4000}
	}
	pts := make([][2]float64, 100_000)
	for i := range pts {
		pts[i] = [2]float64{40 + rng.Float64()*20, -10 + rng.Float64()*40}
	}
	boxes := zoneBoxes(zs)
	b.ReportAllocs()
	for b.Loop() {
		f := lookup(boxes, zs)
		for _, p := range pts {
			f(p[0], p[1])
		}
	}
}

func BenchmarkCandidatesLinear(b *testing.B) {
	benchCandidates(b, func(boxes []zoneBox, zs []gate.Geofence) func(lat, lon float64) []int {
		return func(lat, lon float64) []int { return candidateZones(boxes, zs, lat, lon) }
	})
}

func BenchmarkCandidatesIndex(b *testing.B) {
	benchCandidates(b, func(boxes []zoneBox, _ []gate.Geofence) func(lat, lon float64) []int {
		return newZoneIndex(boxes).candidates
	})
}
