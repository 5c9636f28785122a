package gate

import (
	"fmt"
	"math"
	"testing"

	"github.com/cuasd/cuasd/internal/cputime"
)

// Published great-circle distances, each from a source independent of this
// code. Where the source used another Earth radius, the expected value is
// rescaled by EarthRadiusM/R: the central angle the haversine formula
// computes does not depend on the radius.
func TestDistancePublished(t *testing.T) {
	tests := []struct {
		name   string
		a, b   Point
		wantM  float64
		tolM   float64
		source string
	}{
		{
			// mapado/haversine tests/geo_ressources.py EXPECTED_LYON_PARIS,
			// computed with _AVG_EARTH_RADIUS_KM = 6371.0088 (the same mean
			// radius); also the README example "392.2172595594006 km".
			name: "Lyon-Paris", a: Point{45.7597, 4.8422}, b: Point{48.8567, 2.3508},
			wantM: 392217.2595593981, tolM: 1e-3,
			source: "https://github.com/mapado/haversine tests/geo_ressources.py",
		},
		{
			name: "Lyon-New York", a: Point{45.7597, 4.8422}, b: Point{40.7033962, -74.2351462},
			wantM: 6163436.38211, tolM: 0.01,
			source: "https://github.com/mapado/haversine tests/geo_ressources.py EXPECTED_LYON_NEW_YORK",
		},
		{
			name: "Paris-New York", a: Point{48.8567, 2.3508}, b: Point{40.7033962, -74.2351462},
			wantM: 5853328.98662, tolM: 0.01,
			source: "https://github.com/mapado/haversine tests/geo_ressources.py EXPECTED_PARIS_NEW_YORK",
		},
		{
			name: "London-Paris", a: Point{51.509865, -0.118092}, b: Point{48.8567, 2.3508},
			wantM: 343374.55271, tolM: 0.01,
			source: "https://github.com/mapado/haversine tests/geo_ressources.py EXPECTED_LONDON_PARIS",
		},
		{
			name: "London-New York", a: Point{51.509865, -0.118092}, b: Point{40.7033962, -74.2351462},
			wantM: 5586484.47423, tolM: 0.01,
			source: "https://github.com/mapado/haversine tests/geo_ressources.py EXPECTED_LONDON_NEW_YORK",
		},
		{
			// Rosetta Code "Haversine formula" task: BNA (36.12, -86.67) to
			// LAX (33.94, -118.40) is 2886.44444283798329974715782394574671655 km
			// with R = 6371.0 km.
			name: "Nashville BNA-Los Angeles LAX", a: Point{36.12, -86.67}, b: Point{33.94, -118.40},
			wantM: 2886444.44283798329974715782394574671655 * EarthRadiusM / 6371000, tolM: 1e-3,
			source: "https://rosettacode.org/wiki/Haversine_formula",
		},
		{
			// Chris Veness, geodesy test/latlon-spherical-tests.js:
			// Cambridge (52.205, 0.119) to Paris (48.857, 2.351) is 404279 m
			// (toFixed(), so ±0.5 m) with R = 6371e3 m.
			name: "Cambridge-Paris", a: Point{52.205, 0.119}, b: Point{48.857, 2.351},
			wantM: 404279 * EarthRadiusM / 6371e3, tolM: 0.5,
			source: "https://github.com/chrisveness/geodesy test/latlon-spherical-tests.js",
		},
		{
			name: "same point", a: Point{10, 20}, b: Point{10, 20}, wantM: 0, tolM: 0,
			source: "definition",
		},
		{
			// Half the circumference of the sphere: π R.
			name: "antipodes", a: Point{0, 0}, b: Point{0, 180}, wantM: math.Pi * EarthRadiusM, tolM: 1e-6,
			source: "definition: half a great circle is πR",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Distance(tc.a, tc.b)
			if math.Abs(got-tc.wantM) > tc.tolM {
				t.Errorf("Distance = %.6f m, want %.6f ± %g m (%s)", got, tc.wantM, tc.tolM, tc.source)
			}
			if back := Distance(tc.b, tc.a); math.Abs(back-got) > 1e-6 {
				t.Errorf("not symmetric: %.9f vs %.9f", got, back)
			}
		})
	}
}

func TestEarthRadiusIsMeanRadius(t *testing.T) {
	// R1 = (2a + b)/3 of WGS-84 (a = 6378137 m, 1/f = 298.257223563), the
	// IUGG mean radius, is 6371008.7714 m; the issue fixes 6371008.8 m.
	a := 6378137.0
	b := a * (1 - 1/298.257223563)
	if r1 := (2*a + b) / 3; math.Abs(r1-EarthRadiusM) > 0.05 {
		t.Fatalf("EarthRadiusM %.1f differs from WGS-84 R1 %.4f", EarthRadiusM, r1)
	}
}

func TestBearingPublished(t *testing.T) {
	// Chris Veness, geodesy test/latlon-spherical-tests.js: initial bearing
	// Cambridge→Paris 156.2°, Paris→Cambridge 337.9° (toFixed(1)).
	cambridge, paris := Point{52.205, 0.119}, Point{48.857, 2.351}
	for _, tc := range []struct {
		a, b Point
		want float64
	}{
		{cambridge, paris, 156.2},
		{paris, cambridge, 337.9},
		{Point{0, 0}, Point{1, 0}, 0},
		{Point{0, 0}, Point{0, 1}, 90},
		{Point{0, 0}, Point{-1, 0}, 180},
		{Point{0, 0}, Point{0, -1}, 270},
	} {
		t.Run(fmt.Sprintf("%v to %v", tc.a, tc.b), func(t *testing.T) {
			got := Bearing(tc.a, tc.b)
			if math.Abs(got-tc.want) > 0.05 {
				t.Errorf("Bearing(%v, %v) = %.4f, want %.1f", tc.a, tc.b, got, tc.want)
			}
		})
	}
	if got := Bearing(cambridge, cambridge); got != 0 {
		t.Errorf("coincident bearing = %v, want 0", got)
	}
}

func TestDestinationPublished(t *testing.T) {
	// Chris Veness, geodesy test/latlon-spherical-tests.js: from Greenwich
	// (51.47788, -0.00147), 7794 m on 300.7° reaches 51.5136°N, 000.0983°W
	// (4 decimals; the radius difference moves it by 0.01 mm).
	got := Destination(Point{51.47788, -0.00147}, 7794, 300.7)
	if math.Abs(got.Lat-51.5136) > 0.00005 || math.Abs(got.Lon-(-0.0983)) > 0.00005 {
		t.Errorf("Destination = %+v, want 51.5136, -0.0983", got)
	}
	// Round trip: distance and bearing back to the start.
	start := Point{-33.9, 151.2}
	for _, brg := range []float64{0, 45, 137, 270, 359} {
		t.Run(fmt.Sprintf("bearing %g", brg), func(t *testing.T) {
			end := Destination(start, 12345.6, brg)
			if d := Distance(start, end); math.Abs(d-12345.6) > 1e-6 {
				t.Errorf("bearing %v: distance back %.9f", brg, d)
			}
			if b := Bearing(start, end); math.Abs(angleDiff(b, brg)) > 1e-9 {
				t.Errorf("bearing %v: bearing back %.12f", brg, b)
			}
		})
	}
}

func TestCrossTrackPublished(t *testing.T) {
	// Chris Veness, geodesy test/latlon-spherical-tests.js: the distance of
	// (53.2611, -0.7972) from the path (53.3206, -1.7297) → (53.1887,
	// 0.1334) is -307.5 m (to the left) with R = 6371e3 m; its along-track
	// distance, 62331 m, lies on the segment, so the distance to the
	// segment is the same 307.5 m.
	p, a, b := Point{53.2611, -0.7972}, Point{53.3206, -1.7297}, Point{53.1887, 0.1334}
	want := -307.5 * EarthRadiusM / 6371e3
	if got := CrossTrackDistance(p, a, b); math.Abs(got-want) > 0.05 {
		t.Errorf("CrossTrackDistance = %.4f, want %.1f", got, want)
	}
	if got := DistanceToSegment(p, a, b); math.Abs(got-(-want)) > 0.05 {
		t.Errorf("DistanceToSegment = %.4f, want %.1f", got, -want)
	}
	// Beyond the ends the nearest point is an end.
	before := Destination(a, 1000, Bearing(b, a))
	if got, want := DistanceToSegment(before, a, b), Distance(before, a); math.Abs(got-want) > 1e-6 {
		t.Errorf("before a: %.6f, want %.6f", got, want)
	}
	after := Destination(b, 2500, Bearing(b, a)+180) // onward, past b
	if got, want := DistanceToSegment(after, a, b), Distance(after, b); math.Abs(got-want) > 1e-3 {
		t.Errorf("after b: %.6f, want %.6f", got, want)
	}
	if got := DistanceToSegment(p, a, a); math.Abs(got-Distance(p, a)) > 1e-9 {
		t.Errorf("degenerate segment: %v", got)
	}
}

func BenchmarkDistance(b *testing.B) {
	p, q := Point{45.7597, 4.8422}, Point{48.8567, 2.3508}
	b.ReportAllocs()
	var s float64
	c0 := cputime.Process()
	for b.Loop() {
		s += Distance(p, q)
	}
	b.ReportMetric(float64(cputime.Process()-c0)/float64(b.N), "cpu-ns/op")
	_ = s
}
