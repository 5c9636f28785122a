package gate

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// polyFromRings makes a polygon geofence of the given rings.
func polyFromRings(rings ...[][]float64) Geofence {
	return Geofence{Polygon: &Polygon{Type: "Polygon", Coordinates: rings}}
}

// starRing is a closed ring of n corners around c at distances in
// [minM, maxM] (a star-shaped, possibly very spiky polygon). With dup > 0
// that share of the corners is repeated, exactly or moved by 1e-12°,
// making the zero and near-zero edges whose rounding the index must bound.
func starRing(rng *rand.Rand, c Point, n int, minM, maxM, dup float64) [][]float64 {
	ring := make([][]float64, 0, n+1)
	for k := range n {
		p := Destination(c, minM+rng.Float64()*(maxM-minM), float64(k)*360/float64(n))
		ring = append(ring, []float64{p.Lon, p.Lat})
		if rng.Float64() < dup {
			d := 0.0
			if rng.IntN(2) == 0 {
				d = 1e-12
			}
			ring = append(ring, []float64{p.Lon + d, p.Lat})
		}
	}
	return append(ring, ring[0])
}

// probes are points to measure a polygon against: random ones around c
// out to reachM and, for about 100 edges of each ring, a corner, the
// edge's midpoint and points a hair either side of it, and points on the parallels of corners (where the
// ray test meets vertices).
func probes(rng *rand.Rand, c Point, reachM float64, rings [][][]float64) []Point {
	var ps []Point
	for range 200 {
		ps = append(ps, Destination(c, rng.Float64()*reachM, rng.Float64()*360))
	}
	for _, ring := range rings {
		step := max(1, len(ring)/100)
		for i := 1 + rng.IntN(step); i < len(ring); i += step {
			a, b := Point{ring[i-1][1], ring[i-1][0]}, Point{ring[i][1], ring[i][0]}
			m := Destination(a, Distance(a, b)/2, Bearing(a, b))
			ps = append(ps, a, m, Destination(m, 1e-3, Bearing(a, b)+90), Destination(m, 1e-3, Bearing(a, b)-90),
				Point{a.Lat, c.Lon + (rng.Float64()-0.5)*0.2})
		}
	}
	return ps
}

// linear is g with its index ignored: the plain scan of every edge.
func linear(g Geofence) Geofence {
	g.shape = nil
	return g
}

// sameDistances fails t unless the prepared g answers polygonSignedDistance
// bit for bit as the plain scan does at every point of ps.
func sameDistances(t testing.TB, g Geofence, ps []Point) {
	t.Helper()
	plain := linear(g)
	g.Prepare()
	for _, p := range ps {
		want, got := plain.polygonSignedDistance(p), g.polygonSignedDistance(p)
		if math.Float64bits(want) != math.Float64bits(got) {
			t.Fatalf("at %v: indexed %v (%x), linear %v (%x)", p, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
	if c1, c2 := plain.Centre(), g.Centre(); c1 != c2 {
		t.Fatalf("centre %v, linear %v", c2, c1)
	}
	if s1, s2 := plain.ScaleM(), g.ScaleM(); math.Float64bits(s1) != math.Float64bits(s2) {
		t.Fatalf("scale %v, linear %v", s2, s1)
	}
}

// TestPolygonIndexMatchesLinearScan compares the index with the plain
// scan on random star polygons (smooth, spiky, with holes, with repeated
// and nearly repeated corners, tiny and 1,000 km wide) at random points,
// corners, edge midpoints and points 1 mm either side of them.
func TestPolygonIndexMatchesLinearScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 1))
	for i := range 60 {
		c := Point{Lat: rng.Float64()*170 - 85, Lon: rng.Float64()*360 - 180}
		size := []float64{50, 2000, 50_000, 900_000}[i%4]
		n := 32 + rng.IntN(1500)
		spike := []float64{0.99, 0.5, 0.05}[i%3]
		rings := [][][]float64{starRing(rng, c, n, size*spike, size, []float64{0, 0, 0.2}[i%3])}
		if i%2 == 0 {
			rings = append(rings, starRing(rng, c, 32+rng.IntN(200), size*spike*0.3, size*spike*0.6, 0))
		}
		g := polyFromRings(rings...)
		g.Prepare()
		if g.shape.ring(0) == nil {
			t.Fatalf("polygon %d (%d corners, %.0f m) was not indexed", i, n, size)
		}
		t.Run(fmt.Sprintf("%d_%dcorners_%.0fm", i, n, size), func(t *testing.T) {
			sameDistances(t, linear(g), probes(rng, c, 3*size, rings))
		})
	}
}

// TestPreparedPolygonReplaced: a copy of a prepared geofence given a new
// polygon does not answer from the old one's index.
func TestPreparedPolygonReplaced(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 2))
	c := Point{Lat: 51, Lon: 0}
	g := polyFromRings(starRing(rng, c, 100, 900, 1000, 0))
	g.Prepare()
	h := g
	h.Polygon = &Polygon{Type: "Polygon", Coordinates: [][][]float64{starRing(rng, Destination(c, 50_000, 90), 100, 900, 1000, 0)}}
	if d := h.SignedDistance(Destination(c, 50_000, 90)); d >= 0 {
		t.Fatalf("the new polygon's centre is %v m from its edge, want inside", d)
	}
	if h.Centre() == g.Centre() {
		t.Fatal("the new polygon kept the old centre")
	}
}

// FuzzPolygonIndex builds a ring from arbitrary bytes (two bytes of
// bearing jitter and two of distance per corner; a distance of 0xFFFF
// repeats the previous corner) and checks the index against the plain
// scan at an arbitrary point and at every corner.
func FuzzPolygonIndex(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4}, 51.0, 0.0, 900.0, 45.0)
	f.Add([]byte{0xff, 0xff, 0, 0, 0x80, 0, 0xff, 0xff}, -33.9, 151.2, 1500.0, 270.0)
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0xff, 0}, 89.5, 179.9, 1e6, 10.0)
	f.Fuzz(func(t *testing.T, data []byte, lat, lon, distM, bearing float64) {
		if !(finite(lat) && finite(lon) && finite(distM) && finite(bearing)) || math.Abs(lat) > 90 || math.Abs(lon) > 180 {
			return
		}
		c := Point{Lat: lat, Lon: lon}
		ring := fuzzRing(c, data)
		ps := []Point{Destination(c, math.Mod(math.Abs(distM), 5e6), bearing)}
		for _, pos := range ring {
			ps = append(ps, Point{pos[1], pos[0]})
		}
		sameDistances(t, polyFromRings(ring), ps)
	})
}

// fuzzRing is a closed ring of at least 40 corners about c read from data.
func fuzzRing(c Point, data []byte) [][]float64 {
	n := max(40, len(data)/4)
	ring := make([][]float64, 0, n+1)
	for k := range n {
		var jitter, dist uint16 = 0, 1000
		if o := 4 * k; o+4 <= len(data) {
			jitter, dist = binary.LittleEndian.Uint16(data[o:]), binary.LittleEndian.Uint16(data[o+2:])
		}
		if dist == 0xffff && k > 0 {
			ring = append(ring, ring[k-1])
			continue
		}
		p := Destination(c, float64(dist)*15, (float64(k)+float64(jitter)/65536)*360/float64(n))
		ring = append(ring, []float64{p.Lon, p.Lat})
	}
	return append(ring, ring[0])
}

// BenchmarkSignedDistance measures points out to 3 km from polygons of
// 100, 1,000 and 10,000 positions 2 km across, plainly and through the
// index: the plain cost grows with n, the indexed one about with log n.
func BenchmarkSignedDistance(b *testing.B) {
	rng := rand.New(rand.NewPCG(23, 3))
	c := Point{Lat: 51, Lon: 0}
	ps := probes(rng, c, 3000, nil)
	for _, n := range []int{100, 1000, 10_000} {
		g := polyFromRings(starRing(rng, c, n-1, 990, 1000, 0))
		for _, prepared := range []bool{false, true} {
			h := linear(g)
			if prepared {
				h.Prepare()
			}
			b.Run(fmt.Sprintf("n=%d/prepared=%v", n, prepared), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					h.SignedDistance(ps[i%len(ps)])
					i++
				}
			})
		}
	}
}
