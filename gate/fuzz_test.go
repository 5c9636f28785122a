package gate

import (
	"encoding/json"
	"math"
	"testing"
)

// FuzzGeofence feeds arbitrary JSON to the geofence decoder and validator;
// whatever validation accepts must evaluate to finite, consistent numbers
// without panicking, and the same prepared (Geofence.Prepare) as plain.
func FuzzGeofence(f *testing.F) {
	f.Add([]byte(`{"center":[51.47,-0.45],"radius_m":5000,"class":"airport"}`), 51.5, -0.4, 100.0)
	f.Add([]byte(`{"polygon":{"type":"Polygon","coordinates":[[[0,0],[0.01,0],[0.01,0.01],[0,0]]]}}`), 0.005, 0.002, 0.0)
	f.Fuzz(func(t *testing.T, data []byte, lat, lon, alt float64) {
		var g Geofence
		if json.Unmarshal(data, &g) != nil || g.Validate() != nil {
			return
		}
		if !(finite(lat) && finite(lon) && lat >= -90 && lat <= 90 && lon >= -180 && lon <= 180) {
			return
		}
		in := Input{Lat: lat, Lon: lon}
		if finite(alt) {
			in.AltM, in.HasAlt = alt, true
		}
		r := Evaluate(in, g, Policy{})
		if !finite(r.DistanceM) || !finite(r.DistanceToBoundaryM) || !finite(r.BearingDeg) ||
			!(r.Lambda.Score >= 0 && r.Lambda.Score <= 1) {
			t.Fatalf("non-finite result for %s at %v,%v: %+v", data, lat, lon, r)
		}
		if r.Breach && r.DistanceToBoundaryM > 0 {
			t.Fatalf("breach outside: %v", r.DistanceToBoundaryM)
		}
		if math.Abs(g.SignedDistance(in.Position())-r.DistanceToBoundaryM) > 1e-6 {
			t.Fatal("SignedDistance disagrees with Evaluate")
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatal(err)
		}
		prepared := g
		prepared.Prepare()
		if a, b := prepared.SignedDistance(in.Position()), g.SignedDistance(in.Position()); math.Float64bits(a) != math.Float64bits(b) {
			t.Fatalf("prepared %v, plain %v", a, b)
		}
	})
}
