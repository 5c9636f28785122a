package gate

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

func ptr(v float64) *float64 { return &v }

func circle(lat, lon, r float64) Geofence {
	return Geofence{Center: []float64{lat, lon}, RadiusM: r}
}

// The Lyon–Paris distance published by mapado/haversine
// (tests/geo_ressources.py, mean radius 6371.0088 km) places Paris exactly
// on a circle of that radius around Lyon.
const lyonParisM = 392217.2595593981

func TestCircleInsideOnOutside(t *testing.T) {
	lyon, paris := Point{45.7597, 4.8422}, Point{48.8567, 2.3508}
	tests := []struct {
		name       string
		radius     float64
		wantBreach bool
		wantDist   float64
	}{
		{"on the boundary", lyonParisM, true, 0},
		{"1 m inside", lyonParisM + 1, true, -1},
		{"1 m outside", lyonParisM - 1, false, 1},
		{"1 cm outside", lyonParisM - 0.01, false, 0.01},
		{"far inside", 1_000_000, true, lyonParisM - 1_000_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := circle(lyon.Lat, lyon.Lon, tc.radius)
			if err := g.Validate(); err != nil {
				t.Fatal(err)
			}
			r := Evaluate(Input{Lat: paris.Lat, Lon: paris.Lon}, g, Policy{})
			if r.Breach != tc.wantBreach {
				t.Errorf("breach = %v, want %v", r.Breach, tc.wantBreach)
			}
			if math.Abs(r.DistanceToBoundaryM-tc.wantDist) > 2e-3 {
				t.Errorf("distance to boundary = %.6f, want %.6f", r.DistanceToBoundaryM, tc.wantDist)
			}
			if math.Abs(r.DistanceM-lyonParisM) > 1e-3 {
				t.Errorf("distance to centre = %.6f, want %.6f", r.DistanceM, lyonParisM)
			}
			if g.SignedDistance(paris) != r.DistanceToBoundaryM {
				t.Errorf("SignedDistance %v disagrees with Evaluate %v", g.SignedDistance(paris), r.DistanceToBoundaryM)
			}
		})
	}
}

// vTriangle uses the path of Chris Veness's published cross-track example
// (geodesy test/latlon-spherical-tests.js) as one edge of a triangle; the
// published point lies 307.5 m (R = 6371e3 m) to the left (north) of it,
// with its foot on the edge.
func vTriangle(apexLat float64) Geofence {
	return Geofence{Polygon: &Polygon{Type: "Polygon", Coordinates: [][][]float64{{
		{-1.7297, 53.3206}, {0.1334, 53.1887}, {-0.8, apexLat}, {-1.7297, 53.3206},
	}}}}
}

func TestPolygonInsideOnOutside(t *testing.T) {
	p := Point{53.2611, -0.7972}
	xt := 307.5 * EarthRadiusM / 6371e3
	north, south := vTriangle(54.5), vTriangle(52.0)
	for _, g := range []Geofence{north, south} {
		if err := g.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	if d := north.SignedDistance(p); math.Abs(d-(-xt)) > 0.05 {
		t.Errorf("apex north: point should be inside %.1f m from the edge, got %.4f", xt, d)
	}
	if d := south.SignedDistance(p); math.Abs(d-xt) > 0.05 {
		t.Errorf("apex south: point should be outside %.1f m from the edge, got %.4f", xt, d)
	}
	if r := Evaluate(Input{Lat: p.Lat, Lon: p.Lon}, north, Policy{}); !r.Breach {
		t.Error("inside the north triangle: no breach")
	}
	if r := Evaluate(Input{Lat: p.Lat, Lon: p.Lon}, south, Policy{}); r.Breach {
		t.Error("outside the south triangle: breach")
	}

	// Points on the boundary: the corners, and the foot of the
	// perpendicular from p (along the edge).
	a := Point{53.3206, -1.7297}
	foot := Destination(a, 62331*EarthRadiusM/6371e3, Bearing(a, Point{53.1887, 0.1334}))
	for _, q := range []Point{a, {53.1887, 0.1334}, {54.5, -0.8}} {
		if d := north.SignedDistance(q); d != 0 {
			t.Errorf("corner %v: signed distance %v, want 0 (on the boundary)", q, d)
		}
		if r := Evaluate(Input{Lat: q.Lat, Lon: q.Lon}, north, Policy{}); !r.Breach {
			t.Errorf("corner %v: on the boundary must count as a breach", q)
		}
	}
	// The published along-track distance is rounded to a metre.
	if d := north.SignedDistance(foot); math.Abs(d) > 1 {
		t.Errorf("foot of the perpendicular: %v m from the edge, want within 1 m", d)
	}
}

func TestPolygonHoleAndSquare(t *testing.T) {
	// A 0.02° square with a 0.01° hole, around (0, 0).
	g := Geofence{Polygon: &Polygon{Type: "Polygon", Coordinates: [][][]float64{
		{{-0.01, -0.01}, {0.01, -0.01}, {0.01, 0.01}, {-0.01, 0.01}, {-0.01, -0.01}},
		{{-0.005, -0.005}, {-0.005, 0.005}, {0.005, 0.005}, {0.005, -0.005}, {-0.005, -0.005}},
	}}}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	degM := EarthRadiusM * deg // one degree of a great circle
	tests := []struct {
		name string
		p    Point
		want float64 // signed distance
	}{
		{"in the ring", Point{0, 0.0075}, -0.0025 * degM},
		{"in the hole", Point{0, 0}, 0.005 * degM},
		{"outside", Point{0, 0.02}, 0.01 * degM},
		{"on the outer edge", Point{0, 0.01}, 0},
		{"on the hole's edge", Point{0, 0.005}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := g.SignedDistance(tc.p); math.Abs(d-tc.want) > 0.01 {
				t.Errorf("%s: signed distance %.4f, want %.4f", tc.name, d, tc.want)
			}
		})
	}
	c := g.Centre()
	if math.Abs(c.Lat) > 1e-12 || math.Abs(c.Lon) > 1e-12 {
		t.Errorf("centroid %+v, want 0,0", c)
	}
}

func TestPolygonAcrossAntimeridian(t *testing.T) {
	g := Geofence{Polygon: &Polygon{Type: "Polygon", Coordinates: [][][]float64{
		{{179.9, -0.1}, {-179.9, -0.1}, {-179.9, 0.1}, {179.9, 0.1}, {179.9, -0.1}},
	}}}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p      Point
		inside bool
	}{{Point{0, 180}, true}, {Point{0, -180}, true}, {Point{0, 179.95}, true}, {Point{0, 179.8}, false}, {Point{0, 0}, false}} {
		t.Run(fmt.Sprintf("lat %g lon %g", tc.p.Lat, tc.p.Lon), func(t *testing.T) {
			if got := g.SignedDistance(tc.p) <= 0; got != tc.inside {
				t.Errorf("%v: inside = %v, want %v", tc.p, got, tc.inside)
			}
		})
	}
	s, w, n, e := g.Bounds()
	if w != -180 || e != 180 || s > -0.1 || n < 0.1 {
		t.Errorf("bounds %v %v %v %v should span all longitudes", s, w, n, e)
	}
}

func TestBoundsContainCircle(t *testing.T) {
	g := circle(60, 10, 50_000)
	s, w, n, e := g.Bounds()
	for brg := 0.0; brg < 360; brg += 5 {
		q := Destination(Point{60, 10}, 50_000, brg)
		if q.Lat < s-1e-9 || q.Lat > n+1e-9 || q.Lon < w-1e-9 || q.Lon > e+1e-9 {
			t.Errorf("edge point %v outside bounds %v %v %v %v", q, s, w, n, e)
		}
	}
}

func TestGeofenceValidate(t *testing.T) {
	tests := []struct {
		name   string
		json   string
		fields []string // every field that must be named
	}{
		{"valid circle", `{"center":[51.47,-0.45],"radius_m":5000,"class":"airport","floor_m":0,"ceiling_m":150}`, nil},
		{"valid polygon", `{"polygon":{"type":"Polygon","coordinates":[[[0,0],[0.01,0],[0.01,0.01],[0,0]]]}}`, nil},
		{"nothing", `{}`, []string{"center", "radius_m"}},
		{"lat out of range", `{"center":[91,0],"radius_m":10}`, []string{"center[0]"}},
		{"lon out of range", `{"center":[0,-181],"radius_m":10}`, []string{"center[1]"}},
		{"short center", `{"center":[1],"radius_m":10}`, []string{"center"}},
		{"zero radius", `{"center":[0,0],"radius_m":0}`, []string{"radius_m"}},
		{"negative radius", `{"center":[0,0],"radius_m":-5}`, []string{"radius_m"}},
		{"huge radius", `{"center":[0,0],"radius_m":1000001}`, []string{"radius_m"}},
		{"max radius", `{"center":[0,0],"radius_m":1000000}`, nil},
		{"both shapes", `{"center":[0,0],"radius_m":5,"polygon":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}}`, []string{"polygon"}},
		{"bad class", `{"center":[0,0],"radius_m":5,"class":"mall"}`, []string{"class"}},
		{"bad sensitivity", `{"center":[0,0],"radius_m":5,"sensitivity":1.5}`, []string{"sensitivity"}},
		{"band upside down", `{"center":[0,0],"radius_m":5,"floor_m":100,"ceiling_m":50}`, []string{"ceiling_m"}},
		{"bad id", `{"id":"a b","center":[0,0],"radius_m":5}`, []string{"id"}},
		{"not a Polygon", `{"polygon":{"type":"Point","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}}`, []string{"polygon.type"}},
		{"open ring", `{"polygon":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}}`, []string{"polygon.coordinates[0]"}},
		{"short ring", `{"polygon":{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,0]]]}}`, []string{"polygon.coordinates[0]"}},
		{"degenerate ring", `{"polygon":{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,0],[1,0],[0,0]]]}}`, []string{"polygon.coordinates[0]"}},
		{"bad position", `{"polygon":{"type":"Polygon","coordinates":[[[0,0],[1],[1,1],[0,0]]]}}`, []string{"polygon.coordinates[0][1]"}},
		{"lat in position", `{"polygon":{"type":"Polygon","coordinates":[[[0,0],[1,95],[1,1],[0,0]]]}}`, []string{"polygon.coordinates[0][1][1]"}},
		{"too wide", `{"polygon":{"type":"Polygon","coordinates":[[[0,0],[20,0],[20,1],[0,0]]]}}`, []string{"polygon.coordinates[0][1]"}},
		{"no rings", `{"polygon":{"type":"Polygon","coordinates":[]}}`, []string{"polygon.coordinates"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var g Geofence
			if err := json.Unmarshal([]byte(tc.json), &g); err != nil {
				t.Fatal(err)
			}
			err := g.Validate()
			if tc.fields == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			ve, ok := err.(*Error)
			if !ok {
				t.Fatalf("want *Error, got %v", err)
			}
			for _, f := range tc.fields {
				found := false
				for _, fe := range ve.Fields {
					if fe.Field == f {
						found = true
					}
				}
				if !found {
					t.Errorf("field %q not named in %v", f, err)
				}
			}
			if !strings.HasPrefix(err.Error(), "gate: invalid input: ") {
				t.Errorf("error text %q", err)
			}
		})
	}
}

func TestValidateNaN(t *testing.T) {
	g := Geofence{Center: []float64{math.NaN(), math.Inf(1)}, RadiusM: math.NaN(), FloorM: ptr(math.Inf(-1))}
	err := g.Validate()
	if err == nil {
		t.Fatal("NaN geofence accepted")
	}
	n := len(err.(*Error).Fields)
	if n != 4 {
		t.Errorf("want 4 invalid fields (lat, lon, radius, floor), got %d: %v", n, err)
	}
}

func TestVerticalBand(t *testing.T) {
	g := circle(0, 0, 1000)
	g.FloorM, g.CeilingM = ptr(10), ptr(120)
	for _, tc := range []struct {
		alt, out float64
	}{{0, 10}, {10, 0}, {60, 0}, {120, 0}, {150, 30}} {
		t.Run(fmt.Sprintf("alt %gm", tc.alt), func(t *testing.T) {
			if got := g.VerticalOutsideM(tc.alt); got != tc.out {
				t.Errorf("alt %v: outside %v, want %v", tc.alt, got, tc.out)
			}
		})
	}
	in := Input{Lat: 0, Lon: 0, AltM: 150, HasAlt: true}
	if r := Evaluate(in, g, Policy{}); r.Breach {
		t.Error("above the ceiling must not breach")
	}
	in.AltM = 100
	if r := Evaluate(in, g, Policy{}); !r.Breach {
		t.Error("inside the band must breach")
	}
	in.HasAlt = false
	if r := Evaluate(in, g, Policy{}); !r.Breach {
		t.Error("altitude unknown: the breach is judged horizontally")
	}
}
