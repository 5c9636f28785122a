package gate

import (
	"fmt"
	"testing"
)

// TestDwellNearWithinMatchesDwellNear: the bounded scan gives the same
// seconds as the full one, for paths inside, near and far from a polygon.
func TestDwellNearWithinMatchesDwellNear(t *testing.T) {
	ring := [][]float64{}
	for k := range 40 {
		p := Destination(Point{Lat: 52, Lon: 4}, 1000+float64(k%3)*100, float64(k)*9)
		ring = append(ring, []float64{p.Lon, p.Lat})
	}
	ring = append(ring, ring[0])
	g := Geofence{ID: "p", Polygon: &Polygon{Type: "Polygon", Coordinates: [][][]float64{ring}}}
	for _, startM := range []float64{0, 900, 1500, 2500, 50_000} {
		t.Run(fmt.Sprintf("start %gm", startM), func(t *testing.T) {
			var samples []Sample
			for k := range 32 {
				p := Destination(Point{Lat: 52, Lon: 4}, startM+float64(k)*40, 45)
				samples = append(samples, Sample{UnixNano: int64(k) * 1e9, Lat: p.Lat, Lon: p.Lon})
			}
			want := DwellNear(samples, &g, 500)
			if got := DwellNearWithin(samples, &g, 500, g.Centre(), g.ScaleM()); got != want {
				t.Errorf("path from %g m: %g s, want %g s", startM, got, want)
			}
		})
	}
}
