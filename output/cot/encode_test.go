package cot

import (
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/output/cot/cottest"
	"github.com/cuasd/cuasd/reference"
)

var t0 = time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)

func f(v float64) *float64 { return &v }
func i64(v int64) *int64   { return &v }

func hdr(typ string) events.Header {
	return events.Header{V: events.Version, Type: typ, Time: t0, Instance: "site1"}
}

// Fixtures: one of each kind of track the map shows.
func airliner() *events.TrackEvent {
	return &events.TrackEvent{Header: hdr(events.TypeTrackUpdate), Track: events.Track{
		TrackID: "adsb:4CA1FA", Protocols: []string{"adsb"}, ICAO: "4CA1FA", Callsign: "RYR12AB", Category: "A3",
		Lat: f(52.30123), Lon: f(4.70456), AltM: f(3048), AltKind: "baro", SpeedMps: f(180.5), HeadingDeg: f(271.3),
		HAccuracyM: f(18.52), Sensors: []string{"rx1"},
	}, Assessment: &events.Assessment{Decision: "monitor", Lambda: 0.12, HumanDecision: true, Caps: []string{}, Class: "aircraft"}}
}

func droneAlert() *events.TrackEvent {
	return &events.TrackEvent{Header: hdr(events.TypeTrackUpdate), Track: events.Track{
		TrackID: "rid:1581F5BKD223Q00A0123", Protocols: []string{"remoteid"}, UASID: "1581F5BKD223Q00A0123",
		OperatorID: "NLD-OP-1", Category: "helicopter_or_multirotor",
		Lat: f(52.31), Lon: f(4.76), AltM: f(120.5), AltKind: "geo", SpeedMps: f(12.25), HeadingDeg: f(90),
		HAccuracyM: f(10), VAccuracyM: f(3), OperatorLat: f(52.305), OperatorLon: f(4.755), Sensors: []string{"wifi1", "ble2"},
	}, Assessment: &events.Assessment{Decision: "alert", Lambda: 0.62, HumanDecision: true, Geofence: "demo-site",
		GeofenceName: "Schiphol (demo)", DistanceM: f(850), Caps: []string{"hold"}, ReceiptIndex: i64(17), Class: "drone",
		TopAxes: []events.AxisSummary{{ID: "proximity", Name: "Proximity", Value: 0.91, Weight: 2}, {ID: "speed", Name: "Speed", Value: 0.4, Weight: 1}}}}
}

func mavIntercept() *events.TrackEvent {
	return &events.TrackEvent{Header: hdr(events.TypeTrackUpdate), Track: events.Track{
		TrackID: "mav:1-1@udp", Protocols: []string{"mavlink"}, Category: "MAV_TYPE_FIXED_WING",
		Lat: f(52.3), Lon: f(4.75), AltM: f(80), AltKind: "msl", Sensors: []string{"udp"},
	}, Assessment: &events.Assessment{Decision: "intercept-recommended", Lambda: 0.93, HumanDecision: true, Breach: true,
		Geofence: "demo-site", Caps: []string{}}}
}

func TestTypes(t *testing.T) {
	allow := &events.Assessment{Decision: "monitor", AllowListed: true}
	allied := &events.Assessment{Decision: "alert", Side: "allied"}
	advAlert := &events.Assessment{Decision: "alert", Side: "adversary"}
	for _, c := range []struct {
		name string
		tr   events.Track
		a    *events.Assessment
		want string
	}{
		{"airliner monitored", airliner().Track, airliner().Assessment, "a-u-A-C-F"},
		{"not evaluated", airliner().Track, nil, "a-p-A-C-F"},
		{"rotorcraft A7", events.Track{ICAO: "3C0001", Category: "A7", Protocols: []string{"adsb"}}, nil, "a-p-A-C-H"},
		{"high performance A6", events.Track{ICAO: "3C0001", Category: "A6", Protocols: []string{"adsb"}}, allow, "a-f-A-M-F"},
		{"UAV on ADS-B B6", events.Track{ICAO: "3C0001", Category: "B6", Protocols: []string{"adsb"}}, advAlert, "a-h-A-M-F-Q"},
		{"Remote ID multirotor alert", droneAlert().Track, droneAlert().Assessment, "a-s-A-M-H-Q"},
		{"MAVLink fixed wing intercept", mavIntercept().Track, mavIntercept().Assessment, "a-h-A-M-F-Q"},
		{"MAVLink quad allied", events.Track{Protocols: []string{"mavlink"}, Category: "MAV_TYPE_QUADROTOR"}, allied, "a-a-A-M-H-Q"},
		{"drone with unknown airframe", events.Track{Protocols: []string{"remoteid"}}, &events.Assessment{Decision: "monitor"}, "a-u-A-M-F-Q"},
		{"surface vehicle", events.Track{ICAO: "3C0001", Category: "C1", Protocols: []string{"adsb"}}, nil, "a-p-G-E-V"},
	} {
		if got := Type(&c.tr, c.a); got != c.want {
			t.Errorf("%s: type %s, want %s", c.name, got, c.want)
		}
	}
}

// TestAirframeFromProductClaim: a drone whose broadcast does not state its
// airframe (Remote ID UA type "none", DJI DroneID) takes the one of the
// drone-database record its product claim matched; a stated airframe wins.
func TestAirframeFromProductClaim(t *testing.T) {
	db, err := reference.Default()
	if err != nil {
		t.Fatal(err)
	}
	e := Encoder{RotaryByReference: RotaryAirframes(db)}
	mavic := &events.Product{Claim: "M30", MatchedBy: "dji_product_type", ReferenceID: "dji-matrice-30"}
	raven := &events.Product{Claim: "RQ-11 Raven", MatchedBy: "model_name", ReferenceID: "aerovironment-rq-11-raven"}
	unknown := &events.Product{Claim: "Homebuilt", MatchedBy: "unknown"}
	mon := &events.Assessment{Decision: "monitor"}
	for _, c := range []struct {
		name string
		tr   events.Track
		want string
	}{
		{"DJI DroneID, product in the database", events.Track{Protocols: []string{"dji"}, Product: mavic}, "a-u-A-M-H-Q"},
		{"DJI DroneID, product unknown", events.Track{Protocols: []string{"dji"}, Product: unknown}, "a-u-A-M-F-Q"},
		{"Remote ID UA type none, rotary product", events.Track{Protocols: []string{"remoteid"}, Category: "none", Product: mavic}, "a-u-A-M-H-Q"},
		{"Remote ID UA type none, fixed-wing product", events.Track{Protocols: []string{"remoteid"}, Category: "none", Product: raven}, "a-u-A-M-F-Q"},
		{"stated aeroplane beats a rotary product", events.Track{Protocols: []string{"remoteid"}, Category: "aeroplane", Product: mavic}, "a-u-A-M-F-Q"},
		{"stated MAV_TYPE quad beats a fixed-wing product", events.Track{Protocols: []string{"mavlink"}, Category: "MAV_TYPE_QUADROTOR", Product: raven}, "a-u-A-M-H-Q"},
		{"MAV_TYPE_GENERIC, rotary product", events.Track{Protocols: []string{"mavlink"}, Category: "MAV_TYPE_GENERIC", Product: mavic}, "a-u-A-M-H-Q"},
	} {
		if got := string(e.appendType(nil, &c.tr, mon)); got != c.want {
			t.Errorf("%s: type %s, want %s", c.name, got, c.want)
		}
	}
	// Without the database the product says nothing.
	if got := Type(&events.Track{Protocols: []string{"dji"}, Product: mavic}, mon); got != "a-u-A-M-F-Q" {
		t.Errorf("without the database: %s", got)
	}
	if r, ok := e.RotaryByReference["dji-aeroscope"]; ok {
		t.Errorf("a ground system has an airframe: %v", r)
	}
}

func TestUID(t *testing.T) {
	for _, c := range [][3]string{
		{"default", "adsb:4CA1FA", "cuasd.default.adsb-4CA1FA"},
		{"a", "rid:mac:AA:BB", "cuasd.a.rid-mac:AA:BB"},
		{"a", "rid:mac-AA:BB", "cuasd.a.rid-mac-AA:BB"},
	} {
		if got := UID(c[0], c[1]); got != c[2] {
			t.Errorf("UID(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

// wellFormed fails unless b is one well-formed XML document with an
// <event> root.
func wellFormed(t testing.TB, b []byte) {
	t.Helper()
	if err := checkXML(b); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
}

func checkXML(b []byte) error {
	d := xml.NewDecoder(strings.NewReader(string(b)))
	depth, roots := 0, 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				if tk.Name.Local != "event" {
					return errors.New("root is " + tk.Name.Local)
				}
			}
			depth++
		case xml.EndElement:
			depth--
		}
	}
	if roots != 1 {
		return errors.New("not exactly one root element")
	}
	return nil
}

// encodeAll returns the documents of the fixtures, in a fixed order.
func encodeAll(t *testing.T) [][]byte {
	var e Encoder
	var docs [][]byte
	add := func(b []byte, ok bool) {
		t.Helper()
		if !ok {
			t.Fatal("fixture not encoded")
		}
		wellFormed(t, b)
		docs = append(docs, b)
	}
	add(e.AppendTrack(nil, airliner()))
	add(e.AppendTrack(nil, droneAlert()))
	add(e.AppendOperator(nil, droneAlert()))
	lost := mavIntercept()
	lost.Type = events.TypeTrackLost
	add(e.AppendTrack(nil, lost))
	add(e.AppendZone(nil, circleZone()))
	add(e.AppendZone(nil, polygonZone()))
	add(e.AppendZone(nil, &events.ZoneEvent{Header: hdr(events.TypeZoneDeleted), Zone: gate.Geofence{ID: "old"}}))
	hostile := droneAlert()
	hostile.Track.UASID = `</remarks><x a="1">&` + "\x00\x1b\xff"
	add(e.AppendTrack(nil, hostile))
	return docs
}

func circleZone() *events.ZoneEvent {
	return &events.ZoneEvent{Header: hdr(events.TypeZoneUpsert), Zone: gate.Geofence{ID: "demo-site", Name: "Schiphol (demo)",
		Class: gate.ClassAirport, Center: []float64{52.3086, 4.7639}, RadiusM: 5000, CeilingM: f(150)}}
}

func polygonZone() *events.ZoneEvent {
	return &events.ZoneEvent{Header: hdr(events.TypeZoneUpsert), Zone: gate.Geofence{ID: "prison", Class: gate.ClassPrison,
		Polygon: &gate.Polygon{Type: "Polygon", Coordinates: [][][]float64{{{4.0, 52.0}, {4.1, 52.0}, {4.1, 52.1}, {4.0, 52.1}, {4.0, 52.0}}}}}}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestNodeCoTReadsWhatWeWrite parses every kind of event with the npm
// package @tak-ps/node-cot, an independent CoT implementation with schema
// validation, and checks what it read against the events' own values.
func TestNodeCoTReadsWhatWeWrite(t *testing.T) {
	docs := encodeAll(t)
	got := cottest.Parse(t, docs)
	for i, g := range got {
		if g.Error != "" {
			t.Fatalf("node-cot rejected document %d: %s\n%s", i, g.Error, docs[i])
		}
	}
	checkAirliner(t, got[0])
	checkDrone(t, got[1], got[2])
	lost := got[3]
	if lost.Stale != lost.Time || lost.Type != "a-h-A-M-F-Q" || !lost.Hostile || lost.Callsign != "MAV 1-1@udp" {
		t.Errorf("lost track: %+v", lost)
	}
	checkZones(t, got[4], got[5], got[6])
	evil := got[7]
	if want := `</remarks><x a="1">&` + "\ufffd"; evil.Callsign != want {
		t.Errorf("hostile callsign read back as %q, want %q", evil.Callsign, want)
	}
	if !strings.Contains(evil.Remarks, "UNAUTHENTICATED") {
		t.Errorf("hostile track lost its caveat: %q", evil.Remarks)
	}
}

func checkAirliner(t *testing.T, g cottest.Parsed) {
	t.Helper()
	a := airliner().Track
	if g.UID != "cuasd.site1.adsb-4CA1FA" || g.Type != "a-u-A-C-F" || g.How != "m-g" || !g.Airborne {
		t.Errorf("airliner identity: %+v", g)
	}
	if g.Lat != *a.Lat || g.Lon != *a.Lon || g.Hae != *a.AltM || g.LE != Unknown {
		t.Errorf("airliner point %v %v %v le %v", g.Lat, g.Lon, g.Hae, g.LE)
	}
	// NACp-derived 18.52 m (95 %) is 7.57 m at 1 sigma.
	if !near(g.CE, 18.52/2.4477, 0.05) {
		t.Errorf("ce %v, want the 1-sigma of 18.52 m", g.CE)
	}
	if g.Callsign != "RYR12AB" || g.Course == nil || *g.Course != 271.3 || g.Speed == nil || *g.Speed != 180.5 {
		t.Errorf("airliner contact/track: %+v", g)
	}
	if g.Time != "2026-11-26T06:00:00.000Z" || g.Start != g.Time || g.Stale != "2026-11-26T06:00:20.000Z" {
		t.Errorf("times %s %s %s", g.Time, g.Start, g.Stale)
	}
	for _, want := range []string{"Aircraft: MONITOR", "barometric", "UNAUTHENTICATED", "rx1", "ICAO 4CA1FA"} {
		if !strings.Contains(g.Remarks, want) {
			t.Errorf("airliner remarks lack %q: %q", want, g.Remarks)
		}
	}
}

func checkDrone(t *testing.T, g, op cottest.Parsed) {
	t.Helper()
	if g.Type != "a-s-A-M-H-Q" || g.Callsign != "1581F5BKD223Q00A0123" || g.Hae != 120.5 {
		t.Errorf("drone: %+v", g)
	}
	if !near(g.CE, 10/2.4477, 0.05) || !near(g.LE, 3/1.96, 0.05) {
		t.Errorf("drone ce/le %v %v", g.CE, g.LE)
	}
	for _, want := range []string{"Drone: ALERT Λ 0.62", "Proximity 0.91", "protocols remoteid", "Schiphol (demo), 850 m", "receipt #17", "GNSS height above the WGS-84 ellipsoid", "wifi1, ble2", "UNAUTHENTICATED"} {
		if !strings.Contains(g.Remarks, want) {
			t.Errorf("drone remarks lack %q: %q", want, g.Remarks)
		}
	}
	if len(g.Links) != 1 || g.Links[0]["uid"] != op.UID || g.Links[0]["relation"] != "p-c" {
		t.Errorf("drone links %v, want one to %s", g.Links, op.UID)
	}
	if op.UID != g.UID+".operator" || op.Type != "a-s-G" || !op.Ground || op.Lat != 52.305 || op.Lon != 4.755 {
		t.Errorf("operator point: %+v", op)
	}
	if len(op.Links) != 1 || op.Links[0]["uid"] != g.UID || op.Links[0]["relation"] != "p-p" {
		t.Errorf("operator links %v, want one to the drone", op.Links)
	}
}

func checkZones(t *testing.T, circle, poly, del cottest.Parsed) {
	t.Helper()
	if circle.Type != "u-d-c-c" || circle.Geometry != "Polygon" || circle.Callsign != "Schiphol (demo)" ||
		circle.Lat != 52.3086 || circle.Stale != "2026-11-26T06:03:00.000Z" {
		t.Errorf("circle zone: %+v", circle)
	}
	if poly.Type != "u-d-f" || poly.Geometry != "Polygon" || poly.Vertices != 5 || poly.Stroke != "#FF0000" || poly.Fill != "#FF0000" {
		t.Errorf("polygon zone: %+v", poly)
	}
	if !near(poly.Lat, 52.05, 1e-9) || !near(poly.Lon, 4.05, 1e-9) {
		t.Errorf("polygon label at %v %v, want its centre", poly.Lat, poly.Lon)
	}
	if del.Type != "t-x-d-d" || len(del.Links) != 1 || del.Links[0]["uid"] != "cuasd.site1.zone-old" {
		t.Errorf("zone delete: %+v", del)
	}
}

func TestTrackWithoutPositionIsNotSent(t *testing.T) {
	ev := airliner()
	ev.Track.Lat = nil
	var e Encoder
	if b, ok := e.AppendTrack(nil, ev); ok || len(b) != 0 {
		t.Fatalf("encoded a track without a position: %s", b)
	}
	if _, ok := e.AppendOperator(nil, airliner()); ok {
		t.Fatal("encoded an operator point for a track that states none")
	}
}

func TestCompactFitsADatagram(t *testing.T) {
	ev := droneAlert()
	ev.Track.Sensors = make([]string, 200)
	for i := range ev.Track.Sensors {
		ev.Track.Sensors[i] = "a-sensor-with-a-long-name"
	}
	full, _ := (&Encoder{}).AppendTrack(nil, ev)
	short, _ := (&Encoder{Compact: true}).AppendTrack(nil, ev)
	if len(full) <= MaxDatagram || len(short) > MaxDatagram {
		t.Fatalf("full %d bytes, compact %d bytes (datagram limit %d)", len(full), len(short), MaxDatagram)
	}
	wellFormed(t, short)
	if !strings.Contains(string(short), "UNAUTHENTICATED") || !strings.Contains(string(short), "ALERT") {
		t.Fatalf("compact remarks lost the decision or the caveat: %s", short)
	}
}

// TestRemarksSayMultilateration: a contradicted ADS-B claim and a
// multilaterated position are said in the remarks (issue 31).
func TestRemarksSayMultilateration(t *testing.T) {
	ev := airliner()
	ev.Track.Verification = &events.Verification{Status: "contradicted", DistanceM: 1234.56, ResidualM: 401, Sensors: 5}
	var e Encoder
	got := string(e.appendRemarks(nil, ev, false))
	if !strings.Contains(got, "ADS-B POSITION CONTRADICTED by multilateration: the signal came from 1234.6 m away (residual 401.0 m, 5 sensors)") {
		t.Errorf("contradicted claim: %q", got)
	}
	ev.Track.Verification = nil
	ev.Track.PositionSource, ev.Track.MLAT = "mlat", &events.MLAT{Sensors: 4, ErrorM: 37.25}
	if got := string(e.appendRemarks(nil, ev, false)); !strings.Contains(got, "Position by multilateration: 4 sensors, error ±37.3 m") {
		t.Errorf("multilaterated position: %q", got)
	}
}
