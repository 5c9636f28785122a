package board

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cuasd/cuasd/fusion/zones"
	"github.com/cuasd/cuasd/gate"
)

// benchZones are n polygon zones of the given positions, 2 km across,
// scattered over a 2° × 3° area; prepared, they carry their index as the
// zone store's do.
func benchZones(n, positions int, prepared bool) []gate.Geofence {
	rng := rand.New(rand.NewPCG(5, 6))
	out := make([]gate.Geofence, n)
	for i := range out {
		c := gate.Point{Lat: 51 + rng.Float64()*2, Lon: -1 + rng.Float64()*3}
		ring := make([][]float64, 0, positions)
		for k := range positions - 1 {
			p := gate.Destination(c, 1000, float64(k)*360/float64(positions-1))
			ring = append(ring, []float64{p.Lon, p.Lat})
		}
		ring = append(ring, ring[0])
		out[i] = gate.Geofence{ID: fmt.Sprintf("z%03d", i), Class: gate.ClassPrison,
			Polygon: &gate.Polygon{Type: "Polygon", Coordinates: [][][]float64{ring}}}
		if prepared {
			out[i].Prepare() // as the zone store does for every version it keeps
		}
	}
	return out
}

// BenchmarkSweepLargeZones is one sweep of 2,000 tracks, each with a
// 32-point history, against 200 zones of 1,000 positions (the stored-zone
// limits of issue 23). The issue measured 110 s for 200 zones of 9,999.
func BenchmarkSweepLargeZones(b *testing.B) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 2000 {
		lat, lon := 51+rng.Float64()*2, -1+rng.Float64()*3
		for k := range 32 {
			o := ridObs(fmt.Sprintf("D%04d", i), lat+float64(k)*1e-4, lon, c.t.Add(time.Duration(k)*time.Second).UnixNano())
			s.Apply(&o)
		}
	}
	c.t = c.t.Add(32 * time.Second)
	for _, prepared := range []bool{false, true} {
		snap := &zones.Snapshot{Geofences: benchZones(200, 1000, prepared), Allow: gate.NewAllowIndex(gate.AllowList{})}
		g := New(Config{Store: s, Zones: func() *zones.Snapshot { return snap }, Now: c.now}, nil)
		b.Run(fmt.Sprintf("prepared=%v", prepared), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				g.Sweep(context.Background())
			}
		})
	}
}
