package board

import (
	"testing"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/reference"
)

// TestClassQueryReadsTheCategoryByItsKind: a category is read only in the
// scheme its kind names — an ADS-B emitter category, a Remote ID UA type, a
// MAVLink MAV_TYPE — never guessed from what the text looks like.
func TestClassQueryReadsTheCategoryByItsKind(t *testing.T) {
	uaTypes := map[string]int{"Helicopter (or Multirotor)": 2}
	mavTypes := map[string]int{"MAV_TYPE_QUADROTOR": 2}
	for _, tc := range []struct {
		name    string
		track   fusion.Track
		want    reference.Query
		claimed bool
	}{
		{"ADS-B emitter category", fusion.Track{ICAO: "ABCDEF", Category: "B6", CategoryKind: decode.CategoryEmitter},
			func() reference.Query { q := reference.NewQuery(); q.EmitterCategory = "B6"; return q }(), true},
		{"Remote ID UA type", fusion.Track{Category: "Helicopter (or Multirotor)", CategoryKind: decode.CategoryUAType},
			func() reference.Query { q := reference.NewQuery(); q.UAType = 2; return q }(), true},
		{"MAVLink MAV_TYPE", fusion.Track{SystemID: 1, Category: "MAV_TYPE_QUADROTOR", CategoryKind: decode.CategoryMAVType},
			func() reference.Query { q := reference.NewQuery(); q.MAVType = 2; return q }(), true},
		{"emitter-looking text of another kind", fusion.Track{ICAO: "ABCDEF", Category: "B6", CategoryKind: decode.CategoryUAType},
			reference.NewQuery(), false},
		{"a category without a kind", fusion.Track{ICAO: "ABCDEF", Category: "B6"}, reference.NewQuery(), false},
		{"unknown UA type name", fusion.Track{Category: "Rocket", CategoryKind: decode.CategoryUAType}, reference.NewQuery(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, claimed := classQuery(&tc.track, uaTypes, mavTypes)
			if claimed != tc.claimed || q != tc.want {
				t.Errorf("got %+v claimed=%v, want %+v claimed=%v", q, claimed, tc.want, tc.claimed)
			}
		})
	}
}

// TestClassifierUsesTheProductClaim (issue 25): a product claim that names
// a record narrows the side to that record's; one that contradicts the
// serial's manufacturer leaves the side unknown; an unknown product
// changes nothing.
func TestClassifierUsesTheProductClaim(t *testing.T) {
	db, err := reference.Default()
	if err != nil {
		t.Fatal(err)
	}
	c := Classifier(db)
	claim := func(text string) *fusion.ProductClaim {
		return &fusion.ProductClaim{Text: text, Match: db.MatchProduct(text, 0)}
	}
	for _, tc := range []struct {
		name  string
		track fusion.Track
		want  reference.Side
	}{
		{"DJI DroneID Mavic 3", fusion.Track{UASID: "3NZEXAMPLEDJI003", Protocols: []string{"dji"}, Product: claim("DJI Mavic 3")}, reference.SideDualUse},
		{"product alone", fusion.Track{Product: claim("Shahed-136")}, reference.SideAdversary},
		{"product against the serial's manufacturer", fusion.Track{UASID: "1581F5FKD229400B", Product: claim("Parrot ANAFI")}, reference.SideUnknown},
		{"unknown product, DJI serial", fusion.Track{UASID: "1581F5FKD229400B", Product: claim("DJI Mini 4 Pro")}, reference.SideDualUse},
		{"unknown product alone", fusion.Track{Product: claim("Survey flight")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := c(&tc.track); got != gate.Side(tc.want) {
				t.Errorf("side %q, want %q", got, tc.want)
			}
		})
	}
}

// TestClassOf (issue 33): what a track is, from its protocols, its ADS-B
// emitter category and its signal integrity.
func TestClassOf(t *testing.T) {
	pol := gate.DefaultPolicy()
	low := gate.Result{}
	low.Lambda.Axes[gate.AxisSignalIntegrity] = gate.Axis{Known: true, Value: 0.6}
	ok := gate.Result{}
	ok.Lambda.Axes[gate.AxisSignalIntegrity] = gate.Axis{Known: true, Value: 0.8}
	for _, tc := range []struct {
		name  string
		track fusion.Track
		res   *gate.Result
		want  gate.TrackClass
	}{
		{"Remote ID", fusion.Track{Protocols: []string{"remoteid"}}, &ok, gate.TrackDrone},
		{"DJI DroneID", fusion.Track{Protocols: []string{"dji"}}, &ok, gate.TrackDrone},
		{"MAVLink", fusion.Track{Protocols: []string{"mavlink"}}, &ok, gate.TrackDrone},
		{"ADS-B airliner", fusion.Track{Protocols: []string{"adsb"}, Category: "A3", CategoryKind: decode.CategoryEmitter}, &ok, gate.TrackAircraft},
		{"ADS-B without category", fusion.Track{Protocols: []string{"adsb"}}, &ok, gate.TrackAircraft},
		{"ADS-B UAV (B6)", fusion.Track{Protocols: []string{"adsb"}, Category: "B6", CategoryKind: decode.CategoryEmitter}, &ok, gate.TrackDrone},
		{"B6 text of another scheme", fusion.Track{Protocols: []string{"adsb"}, Category: "B6", CategoryKind: decode.CategoryUAType}, &ok, gate.TrackAircraft},
		{"ADS-B with low integrity", fusion.Track{Protocols: []string{"adsb"}, Category: "A3", CategoryKind: decode.CategoryEmitter}, &low, gate.TrackUnknown},
		{"Remote ID with low integrity", fusion.Track{Protocols: []string{"remoteid"}}, &low, gate.TrackUnknown},
		{"no claims", fusion.Track{}, &ok, gate.TrackUnknown},
		{"not scored (no zone)", fusion.Track{Protocols: []string{"adsb"}}, &gate.Result{}, gate.TrackAircraft},
	} {
		if got := classOf(&tc.track, tc.res, &pol); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
