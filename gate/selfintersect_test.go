package gate

import (
	"math"
	"testing"
)

func TestSelfIntersection(t *testing.T) {
	for _, c := range []struct {
		name  string
		rings [][][]float64
		bad   bool
		a, b  string
	}{
		{"square", [][][]float64{{{0, 0}, {1, 0}, {1, 1}, {0, 1}, {0, 0}}}, false, "", ""},
		{"square with a repeated corner", [][][]float64{{{0, 0}, {1, 0}, {1, 0}, {1, 1}, {0, 1}, {0, 0}}}, false, "", ""},
		{"bow tie", [][][]float64{{{0, 0}, {1, 1}, {1, 0}, {0, 1}, {0, 0}}}, true, "coordinates[0][0]", "coordinates[0][2]"},
		{"figure eight touching at a point", [][][]float64{{{0, 0}, {1, 1}, {2, 0}, {2, 2}, {1, 1}, {0, 2}, {0, 0}}}, true, "", ""},
		{"hole inside", [][][]float64{{{0, 0}, {4, 0}, {4, 4}, {0, 4}, {0, 0}}, {{1, 1}, {2, 1}, {2, 2}, {1, 1}}}, false, "", ""},
		{"hole crossing the exterior", [][][]float64{{{0, 0}, {4, 0}, {4, 4}, {0, 4}, {0, 0}}, {{3, 1}, {5, 1}, {5, 2}, {3, 1}}}, true, "", ""},
		{"across the antimeridian", [][][]float64{{{179.5, 0}, {-179.5, 0}, {-179.5, 1}, {179.5, 1}, {179.5, 0}}}, false, "", ""},
		{"bow tie across the antimeridian", [][][]float64{{{179.5, 0}, {-179.5, 1}, {-179.5, 0}, {179.5, 1}, {179.5, 0}}}, true, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b, bad := SelfIntersection(&Polygon{Type: "Polygon", Coordinates: c.rings})
			if bad != c.bad || (c.a != "" && (a != c.a || b != c.b)) {
				t.Errorf("%s: %q %q %v, want %v %q %q", c.name, a, b, bad, c.bad, c.a, c.b)
			}
			g := Geofence{ID: "x", Polygon: &Polygon{Type: "Polygon", Coordinates: c.rings}}
			if err := g.Validate(); (err != nil) != c.bad {
				t.Errorf("%s: Validate %v", c.name, err)
			}
		})
	}
}

// FuzzSelfIntersection: any closed ring of the extent Validate allows
// (here within 10° of the origin) is answered without a panic, and the
// answer does not depend on where the ring starts.
func FuzzSelfIntersection(f *testing.F) {
	f.Add(0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0)
	f.Add(0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0)
	f.Fuzz(func(t *testing.T, x1, y1, x2, y2, x3, y3, x4, y4 float64) {
		pts := [][]float64{{x1, y1}, {x2, y2}, {x3, y3}, {x4, y4}}
		for _, p := range pts {
			if !(math.Abs(p[0]) <= 10 && math.Abs(p[1]) <= 10) {
				return
			}
		}
		ring := func(start int) [][]float64 {
			var r [][]float64
			for k := range 5 {
				r = append(r, pts[(start+k)%4])
			}
			return r
		}
		_, _, b0 := SelfIntersection(&Polygon{Type: "Polygon", Coordinates: [][][]float64{ring(0)}})
		_, _, b1 := SelfIntersection(&Polygon{Type: "Polygon", Coordinates: [][][]float64{ring(1)}})
		if b0 != b1 {
			t.Fatalf("start 0: %v, start 1: %v for %v", b0, b1, pts)
		}
	})
}
