package history

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// exportPoints are two tracks whose longitudes (120…) are not valid
// latitudes, so that a swapped coordinate order cannot pass.
func exportPoints() []Point {
	a := track("adsb:4CA1FA", "adsb", t0.Add(123456789), 500*time.Millisecond, 5, 30.25, 120.5)
	a[2].Decision = "alert"
	b := track("rid:SER-1", "remoteid", t0, time.Second, 3, -33.5, 151.25)
	for i := range b {
		b[i].Sensor = `rx1,"roof"` // needs RFC 4180 quoting
		b[i].AltM = nil            // heights unknown
		b[i].Decision = ""
	}
	return append(a, b...)
}

func encode(t *testing.T, f Format, single bool, pts []Point, next string) []byte {
	t.Helper()
	var buf bytes.Buffer
	e := NewEncoder(&buf, f, single)
	id := ""
	if single {
		id = pts[0].TrackID
	}
	if err := e.Begin(id); err != nil {
		t.Fatal(err)
	}
	for i := range pts {
		if err := e.Add(&pts[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.End(next); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// kmlDoc is the part of KML 2.2 (with the gx extension) we write, read by
// encoding/xml with namespace-qualified names: an element in the wrong
// namespace does not match.
type kmlDoc struct {
	XMLName  xml.Name `xml:"http://www.opengis.net/kml/2.2 kml"`
	Document struct {
		Styles []struct {
			ID string `xml:"id,attr"`
		} `xml:"http://www.opengis.net/kml/2.2 Style"`
		Placemarks []struct {
			Name     string `xml:"http://www.opengis.net/kml/2.2 name"`
			StyleURL string `xml:"http://www.opengis.net/kml/2.2 styleUrl"`
			Track    struct {
				AltitudeMode string   `xml:"http://www.opengis.net/kml/2.2 altitudeMode"`
				When         []string `xml:"http://www.opengis.net/kml/2.2 when"`
				Coord        []string `xml:"http://www.google.com/kml/ext/2.2 coord"`
			} `xml:"http://www.google.com/kml/ext/2.2 Track"`
		} `xml:"http://www.opengis.net/kml/2.2 Placemark"`
	} `xml:"http://www.opengis.net/kml/2.2 Document"`
}

func TestKMLParsesAsKML22(t *testing.T) {
	pts := exportPoints()
	var doc kmlDoc
	if err := xml.Unmarshal(encode(t, KML, false, pts, ""), &doc); err != nil {
		t.Fatal(err)
	}
	styles := map[string]bool{}
	for _, s := range doc.Document.Styles {
		styles["#"+s.ID] = true
	}
	pm := doc.Document.Placemarks
	if len(pm) != 2 || pm[0].Name != "adsb:4CA1FA" || pm[1].Name != "rid:SER-1" {
		t.Fatalf("placemarks %+v, want one per track", pm)
	}
	if pm[0].StyleURL != "#decision-alert" || !styles[pm[0].StyleURL] || !styles[pm[1].StyleURL] {
		t.Fatalf("styles %q %q (defined %v): want the worst decision, defined", pm[0].StyleURL, pm[1].StyleURL, styles)
	}
	if pm[0].Track.AltitudeMode != "absolute" || pm[1].Track.AltitudeMode != "clampToGround" {
		t.Fatalf("altitude modes %q %q", pm[0].Track.AltitudeMode, pm[1].Track.AltitudeMode)
	}
	for i, want := range [][]Point{pts[:5], pts[5:]} {
		tr := pm[i].Track
		if len(tr.When) != len(want) || len(tr.Coord) != len(want) {
			t.Fatalf("placemark %d: %d when, %d coord, want %d each", i, len(tr.When), len(tr.Coord), len(want))
		}
		for j, p := range want {
			when, err := time.Parse(time.RFC3339Nano, tr.When[j])
			if err != nil || !when.Equal(p.Time) {
				t.Fatalf("when %q, want %s (%v)", tr.When[j], p.Time, err)
			}
			f := strings.Fields(tr.Coord[j]) // "lon lat alt"
			lon, _ := strconv.ParseFloat(f[0], 64)
			lat, _ := strconv.ParseFloat(f[1], 64)
			if len(f) != 3 || lon != p.Lon || lat != p.Lat {
				t.Fatalf("gx:coord %q, want %g %g alt", tr.Coord[j], p.Lon, p.Lat)
			}
		}
	}
}

func TestKMLEscapesNames(t *testing.T) {
	pts := track(`mav:1-1@<rx&"1">`, "mavlink", t0, time.Second, 2, 0, 0)
	var doc kmlDoc
	if err := xml.Unmarshal(encode(t, KML, true, pts, ""), &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Document.Placemarks[0].Name; got != pts[0].TrackID {
		t.Fatalf("name %q, want %q", got, pts[0].TrackID)
	}
}

// geoFeature is one Feature as the GeoJSON export writes it.
type geoFeature struct {
	Type     string `json:"type"`
	ID       string `json:"id"`
	Geometry struct {
		Type        string          `json:"type"`
		Coordinates json.RawMessage `json:"coordinates"`
	} `json:"geometry"`
	Properties map[string]any `json:"properties"`
}

// geoCollection decodes a GeoJSON export: the FeatureCollection's line
// feature and point features of each track, in order.
func geoCollection(t *testing.T, raw []byte) (lines []geoFeature, points map[string][]geoFeature, next any) {
	t.Helper()
	var fc struct {
		Type     string       `json:"type"`
		Features []geoFeature `json:"features"`
		Next     any          `json:"next_cursor"`
	}
	if err := json.Unmarshal(raw, &fc); err != nil || fc.Type != "FeatureCollection" {
		t.Fatalf("not a FeatureCollection (%v): %s", err, raw)
	}
	points = map[string][]geoFeature{}
	for _, f := range fc.Features {
		if f.Type != "Feature" {
			t.Fatalf("type %q, want Feature", f.Type)
		}
		switch f.Properties["feature"] {
		case "track":
			lines = append(lines, f)
		case "point":
			id := f.Properties["track_id"].(string)
			points[id] = append(points[id], f)
		default:
			t.Fatalf("feature kind %v, want track or point", f.Properties["feature"])
		}
	}
	return lines, points, fc.Next
}

// checkGeoJSONTrack checks one track's features against RFC 7946 (§3.1.2,
// §3.1.4, §3.2), against the points they must hold, and against what GIS
// tools read as typed columns: every property a scalar.
func checkGeoJSONTrack(t *testing.T, line geoFeature, pts []geoFeature, want []Point) {
	t.Helper()
	var coords [][]float64
	if err := json.Unmarshal(line.Geometry.Coordinates, &coords); err != nil || line.Geometry.Type != "LineString" || len(coords) < 2 {
		t.Fatalf("geometry %s %s; a LineString needs two or more positions (%v)", line.Geometry.Type, line.Geometry.Coordinates, err)
	}
	if line.ID != want[0].TrackID || line.Properties["track_id"] != want[0].TrackID || line.Properties["count"] != float64(len(want)) {
		t.Fatalf("line %s properties %v, want track %s of %d points", line.ID, line.Properties, want[0].TrackID, len(want))
	}
	for i, pos := range coords {
		if len(pos) != 2 || pos[0] != want[i].Lon || pos[1] != want[i].Lat {
			t.Fatalf("position %d is %v, want [%g, %g] (no z: the altitudes are not ellipsoidal)", i, pos, want[i].Lon, want[i].Lat)
		}
	}
	if len(pts) != len(want) {
		t.Fatalf("%d point features, want one per recorded point (%d)", len(pts), len(want))
	}
	for i, f := range pts {
		var pos []float64
		_ = json.Unmarshal(f.Geometry.Coordinates, &pos)
		ts, err := time.Parse(time.RFC3339Nano, fmt.Sprint(f.Properties["time"]))
		if f.Geometry.Type != "Point" || len(pos) != 2 || pos[0] != want[i].Lon || pos[1] != want[i].Lat || err != nil || !ts.Equal(want[i].Time) {
			t.Fatalf("point %d: %s %v at %v, want [%g, %g] at %s", i, f.Geometry.Type, pos, f.Properties["time"], want[i].Lon, want[i].Lat, want[i].Time)
		}
		if want[i].AltM != nil && (f.Properties["alt_m"] != *want[i].AltM || f.Properties["alt_kind"] != want[i].AltKind) {
			t.Fatalf("point %d: alt %v %v, want %g %s", i, f.Properties["alt_m"], f.Properties["alt_kind"], *want[i].AltM, want[i].AltKind)
		}
	}
	for _, f := range append(pts, line) {
		for k, v := range f.Properties {
			switch v.(type) {
			case []any, map[string]any:
				t.Fatalf("property %s is %T: GIS tools read lists as strings with a warning", k, v)
			}
		}
	}
}

func TestGeoJSONFollowsRFC7946(t *testing.T) {
	pts := exportPoints()
	lines, points, next := geoCollection(t, encode(t, GeoJSON, false, pts, "CUR"))
	if len(lines) != 2 || next != "CUR" {
		t.Fatalf("%d track lines, cursor %v; want 2, CUR", len(lines), next)
	}
	checkGeoJSONTrack(t, lines[0], points[lines[0].ID], pts[:5])
	checkGeoJSONTrack(t, lines[1], points[lines[1].ID], pts[5:])
	if lines[0].Properties["decision"] != "alert" {
		t.Fatalf("decision %v, want the worst (alert)", lines[0].Properties["decision"])
	}

	lines, points, _ = geoCollection(t, encode(t, GeoJSON, true, pts[:5], ""))
	if len(lines) != 1 {
		t.Fatalf("%d lines for one track", len(lines))
	}
	checkGeoJSONTrack(t, lines[0], points[lines[0].ID], pts[:5])
}

func TestGeoJSONSinglePositionIsAPoint(t *testing.T) {
	lines, _, _ := geoCollection(t, encode(t, GeoJSON, true, exportPoints()[:1], ""))
	var pos []float64
	_ = json.Unmarshal(lines[0].Geometry.Coordinates, &pos)
	if lines[0].Geometry.Type != "Point" || len(pos) != 2 {
		t.Fatalf("one position as %s %v", lines[0].Geometry.Type, pos)
	}
}

// TestGeoJSONLineHasNoRepeatedVertex: a track that stays in place for a
// while (ADS-B repeats the last position between position messages) draws
// each place once; every fix keeps its time on its Point feature.
func TestGeoJSONLineHasNoRepeatedVertex(t *testing.T) {
	pts := track("adsb:4CA1FA", "adsb", t0, time.Second, 6, 52.3, 4.76)
	pts[2].Lat, pts[2].Lon = pts[1].Lat, pts[1].Lon
	pts[3].Lat, pts[3].Lon = pts[1].Lat, pts[1].Lon
	lines, points, _ := geoCollection(t, encode(t, GeoJSON, true, pts, ""))
	var coords [][]float64
	_ = json.Unmarshal(lines[0].Geometry.Coordinates, &coords)
	if len(coords) != len(pts)-2 {
		t.Fatalf("%d vertices %v, want %d: the two repeats left out", len(coords), coords, len(pts)-2)
	}
	for i := 1; i < len(coords); i++ {
		if coords[i][0] == coords[i-1][0] && coords[i][1] == coords[i-1][1] {
			t.Fatalf("vertex %d repeats the one before: %v", i, coords)
		}
	}
	if len(points["adsb:4CA1FA"]) != len(pts) {
		t.Fatalf("%d points, want every fix with its time (%d)", len(points["adsb:4CA1FA"]), len(pts))
	}
}

func TestCSVIsRFC4180(t *testing.T) {
	pts := exportPoints()
	raw := encode(t, CSV, false, pts, "")
	if !bytes.Contains(raw, []byte("\r\n")) || !bytes.Contains(raw, []byte(`"rx1,""roof"""`)) {
		t.Fatalf("not RFC 4180 (CRLF, quoted field with doubled quotes):\n%s", raw)
	}
	r := csv.NewReader(bytes.NewReader(raw))
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(pts)+1 {
		t.Fatalf("%d rows, want a header and %d points", len(rows), len(pts))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for i, p := range pts {
		row := rows[i+1]
		lat, _ := strconv.ParseFloat(row[col["lat"]], 64)
		lon, _ := strconv.ParseFloat(row[col["lon"]], 64)
		ts, err := time.Parse(time.RFC3339Nano, row[col["time"]])
		if row[col["track_id"]] != p.TrackID || lat != p.Lat || lon != p.Lon || err != nil || !ts.Equal(p.Time) || row[col["sensor"]] != p.Sensor {
			t.Fatalf("row %d %v, want %+v", i+1, row, p)
		}
	}
}

// TestCSVEscapesFormulas (issue 32, item 4): a text cell that begins
// with = + - @ (a sensor named `=HYPERLINK("x")`) would run as a formula
// in a spreadsheet; it is written with a leading apostrophe. Numeric cells
// are untouched: a negative longitude stays a number.
func TestCSVEscapesFormulas(t *testing.T) {
	pts := exportPoints()[:1]
	p := &pts[0]
	p.Sensor, p.Decision, p.AltKind, p.TrackID = `=HYPERLINK("http://x","y")`, "+1", "@SUM(A1)", "-2+3"
	p.Lon, p.Lat = -0.5, -33.25
	rows, err := csv.NewReader(bytes.NewReader(encode(t, CSV, false, pts, ""))).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatal(rows, err)
	}
	col := map[string]string{}
	for i, h := range rows[0] {
		col[h] = rows[1][i]
	}
	for name, want := range map[string]string{"sensor": `'=HYPERLINK("http://x","y")`, "decision": "'+1", "alt_kind": "'@SUM(A1)",
		"track_id": "'-2+3", "lon": "-0.5", "lat": "-33.25", "protocol": p.Protocol} {
		if col[name] != want {
			t.Errorf("%s cell %q, want %q", name, col[name], want)
		}
	}
}

func TestJSONShapes(t *testing.T) {
	pts := exportPoints()
	var one struct {
		TrackID string `json:"track_id"`
		Points  []struct {
			Time string  `json:"time"`
			Lat  float64 `json:"lat"`
		} `json:"points"`
		Count int `json:"count"`
	}
	if err := json.Unmarshal(encode(t, JSON, true, pts[:5], ""), &one); err != nil {
		t.Fatal(err)
	}
	if one.TrackID != "adsb:4CA1FA" || one.Count != 5 || len(one.Points) != 5 || one.Points[0].Time != "2026-11-26T05:00:00.123456789Z" {
		t.Fatalf("single-track JSON %+v", one)
	}
	var page struct {
		Tracks []struct {
			TrackID string `json:"track_id"`
			Count   int    `json:"count"`
		} `json:"tracks"`
		Count  int    `json:"count"`
		Points int    `json:"points"`
		Next   string `json:"next_cursor"`
	}
	if err := json.Unmarshal(encode(t, JSON, false, pts, "N"), &page); err != nil {
		t.Fatal(err)
	}
	if page.Count != 2 || page.Points != 8 || page.Next != "N" || page.Tracks[1].TrackID != "rid:SER-1" || page.Tracks[1].Count != 3 {
		t.Fatalf("page JSON %+v", page)
	}
}

func TestEmptyAnswersAreValid(t *testing.T) {
	for _, f := range Formats {
		for _, single := range []bool{true, false} {
			var buf bytes.Buffer
			e := NewEncoder(&buf, f, single)
			if err := e.Begin("adsb:ABC123"); err != nil {
				t.Fatal(err)
			}
			if err := e.End(""); err != nil {
				t.Fatal(err)
			}
			var err error
			switch f {
			case KML:
				err = xml.Unmarshal(buf.Bytes(), new(kmlDoc))
			case CSV:
				_, err = csv.NewReader(&buf).ReadAll()
			default:
				err = json.Unmarshal(buf.Bytes(), new(map[string]any))
			}
			if err != nil {
				t.Errorf("%s single=%v: %v in %q", f, single, err, buf.String())
			}
		}
	}
}

func TestFormatForAccept(t *testing.T) {
	for accept, want := range map[string]Format{
		"": JSON, "*/*": JSON, "application/geo+json": GeoJSON, "text/html, application/vnd.google-earth.kml+xml;q=0.9": KML,
		"text/csv": CSV, "application/json": JSON,
	} {
		if got := FormatForAccept(accept); got != want {
			t.Errorf("Accept %q → %s, want %s", accept, got, want)
		}
	}
}

// TestPointJSONMatchesEncodingJSON: the hand-written point encoder writes
// what encoding/json writes for pointJSON, for plain and awkward values.
func TestPointJSONMatchesEncodingJSON(t *testing.T) {
	pts := exportPoints()
	odd := pts[0]
	odd.Sensor, odd.AltKind, odd.Decision = "rx \"1\"\\\n\u00e9<>&", "", "alert"
	odd.Lat, odd.Lon, odd.SpeedMps, odd.Lambda = -89.123456789, 1e-7, f64(123456789.5), f64(0)
	for i, p := range append(pts, odd) {
		got := appendPointJSON(nil, &p)
		var a, b map[string]any
		want, _ := json.Marshal(pointJSONOf(&p))
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("point %d: %v in %s", i, err, got)
		}
		_ = json.Unmarshal(want, &b)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("point %d:\n got %s\nwant %s", i, got, want)
		}
	}
}
