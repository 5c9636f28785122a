package gate_test

import (
	"fmt"

	"github.com/cuasd/cuasd/gate"
)

// A drone hovering 1 km inside a 5 km airport zone, heard by one sensor:
// Λ reaches the intercept band but the corroboration cap holds the
// decision at alert, because one unauthenticated source never suffices.
func ExampleEvaluate() {
	zone := gate.Geofence{Name: "Heathrow", Class: gate.ClassAirport,
		Center: []float64{51.4700, -0.4543}, RadiusM: 5000}
	pos := gate.Destination(gate.Point{Lat: 51.4700, Lon: -0.4543}, 4000, 45)
	in := gate.Input{
		Lat: pos.Lat, Lon: pos.Lon, AltM: 60, HasAlt: true,
		SpeedMps: 0, HasSpeed: true, HeadingDeg: 0, HasHeading: true,
		Side: gate.SideAdversary, HasIdentity: true, Allow: gate.AllowNotListed,
		HasIntegrity: true, Sensors: 1, Protocols: 1, HasCorroboration: true,
		EvidenceAgeS: 1, HasEvidenceAge: true,
	}
	r := gate.Evaluate(in, zone, gate.Policy{})
	fmt.Printf("breach %v, %.0f m inside, bearing %.0f°\n", r.Breach, -r.DistanceToBoundaryM, r.BearingDeg)
	fmt.Printf("Λ %.2f band %s → decision %s\n", r.Lambda.Score, r.Lambda.Band, r.Decision)
	for _, c := range r.Lambda.Applied() {
		fmt.Printf("cap %s (binding %v)\n", c.ID, c.Binding)
	}
	fmt.Println("human decision required:", r.HumanDecisionRequired)
	// Output:
	// breach true, 1000 m inside, bearing 45°
	// Λ 0.75 band intercept-recommended → decision alert
	// cap corroboration (binding true)
	// human decision required: true
}

// Features turns a track's history into the behaviour inputs: here a
// drone circling a point twice in two minutes.
func ExampleFeatures() {
	var hist []gate.Sample
	centre := gate.Point{Lat: 47, Lon: 8}
	for i := 0; i <= 72; i++ {
		p := gate.Destination(centre, 100, float64(i)*10)
		hist = append(hist, gate.Sample{UnixNano: int64(i) * 1_666_666_667, Lat: p.Lat, Lon: p.Lon})
	}
	b := gate.Features(hist)
	fmt.Printf("%.0f s, net turn %.0f°, gyration %.0f m, jumps %d\n", b.DurationS, b.NetTurnDeg, b.GyrationM, b.Jumps)
	// Output:
	// 120 s, net turn 710°, gyration 100 m, jumps 0
}
