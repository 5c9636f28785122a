package history

import (
	"encoding/json"
	"encoding/xml"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pacificTrack crosses the antimeridian eastward (179.8 → -179.9, between
// points 1 and 2), then back westward (-179.7 → 179.9, between 3 and 4).
func pacificTrack() []Point {
	lons := []float64{179.6, 179.8, -179.9, -179.7, 179.9}
	pts := make([]Point, len(lons))
	for i, lon := range lons {
		pts[i] = Point{TrackID: "adsb:PAC1", Protocol: "adsb", Time: t0.Add(time.Duration(i) * 10 * time.Second),
			Lat: -17 + float64(i)*0.1, Lon: lon, AltM: f64(10000 + 100*float64(i))}
	}
	return pts
}

// checkParts checks lines of [lon, lat, ...] positions read by
// encoding/json: each part stays on one side of the antimeridian (all its
// longitudes of one sign, no step over 180°), consecutive parts meet at
// the antimeridian at the same latitude, and the parts hold every
// recorded position in order.
func checkParts(t *testing.T, parts [][][]float64, want []Point) {
	t.Helper()
	var got [][]float64
	for i, part := range parts {
		if len(part) < 2 {
			t.Fatalf("part %d has %d positions; a line needs two", i, len(part))
		}
		east := part[0][0] > 0 || part[0][0] == 180
		for _, pos := range part {
			if (pos[0] >= 0) != east && pos[0] != 0 {
				t.Fatalf("part %d %v has positions on both sides of the antimeridian", i, part)
			}
		}
		if i > 0 {
			end, start := parts[i-1][len(parts[i-1])-1], part[0]
			if (end[0] != 180 && end[0] != -180) || end[0] != -start[0] || end[1] != start[1] {
				t.Fatalf("parts %d and %d meet at %v and %v, want ±180 at one latitude", i-1, i, end, start)
			}
			if end[1] <= parts[i-1][len(parts[i-1])-2][1] || end[1] >= part[1][1] {
				t.Fatalf("crossing latitude %g is not between its neighbours", end[1])
			}
			got = got[:len(got)-1] // the interpolated end
			part = part[1:]        // the interpolated start
		}
		got = append(got, part...)
	}
	if len(got) != len(want) {
		t.Fatalf("%d recorded positions in the parts, want %d", len(got), len(want))
	}
	for i, pos := range got {
		if pos[0] != want[i].Lon || pos[1] != want[i].Lat {
			t.Fatalf("position %d is %v, want [%g, %g]", i, pos, want[i].Lon, want[i].Lat)
		}
	}
}

func TestGeoJSONCutsAtTheAntimeridian(t *testing.T) {
	pts := pacificTrack()
	lines, points, _ := geoCollection(t, encode(t, GeoJSON, true, pts, ""))
	var coords [][][]float64
	_ = json.Unmarshal(lines[0].Geometry.Coordinates, &coords)
	if lines[0].Geometry.Type != "MultiLineString" || len(coords) != 3 {
		t.Fatalf("geometry %s of %d lines, want a MultiLineString of 3", lines[0].Geometry.Type, len(coords))
	}
	checkParts(t, coords, pts)
	if n := len(points["adsb:PAC1"]); n != len(pts) {
		t.Fatalf("%d point features, want one per recorded point (%d)", n, len(pts))
	}
}

func TestGeoJSONLineNotCrossingStaysALineString(t *testing.T) {
	// From 170°E to 10°W passes the prime meridian the long way round only
	// in longitude steps under 180°: it does not cross the antimeridian.
	pts := pacificTrack()[:2]
	pts = append(pts, Point{TrackID: "adsb:PAC1", Time: t0.Add(time.Minute), Lat: -16, Lon: 10},
		Point{TrackID: "adsb:PAC1", Time: t0.Add(2 * time.Minute), Lat: -15, Lon: -10})
	lines, _, _ := geoCollection(t, encode(t, GeoJSON, true, pts, ""))
	if lines[0].Geometry.Type != "LineString" {
		t.Fatalf("geometry %s, want LineString", lines[0].Geometry.Type)
	}
}

// kmlMulti is a Placemark holding a gx:MultiTrack, read by encoding/xml
// against the KML 2.2 and gx namespaces.
type kmlMulti struct {
	Document struct {
		Placemarks []struct {
			Multi struct {
				Interpolate string `xml:"http://www.google.com/kml/ext/2.2 interpolate"`
				Tracks      []struct {
					When  []string `xml:"http://www.opengis.net/kml/2.2 when"`
					Coord []string `xml:"http://www.google.com/kml/ext/2.2 coord"`
				} `xml:"http://www.google.com/kml/ext/2.2 Track"`
			} `xml:"http://www.google.com/kml/ext/2.2 MultiTrack"`
		} `xml:"http://www.opengis.net/kml/2.2 Placemark"`
	} `xml:"http://www.opengis.net/kml/2.2 Document"`
}

func TestKMLCutsAtTheAntimeridian(t *testing.T) {
	pts := pacificTrack()
	var doc kmlMulti
	if err := xml.Unmarshal(encode(t, KML, true, pts, ""), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Document.Placemarks) != 1 {
		t.Fatalf("%d placemarks", len(doc.Document.Placemarks))
	}
	m := doc.Document.Placemarks[0].Multi
	if len(m.Tracks) != 3 || m.Interpolate != "0" {
		t.Fatalf("%d gx:Tracks (interpolate %q), want 3 not joined", len(m.Tracks), m.Interpolate)
	}
	var parts [][][]float64
	var last time.Time
	for i, tr := range m.Tracks {
		if len(tr.When) != len(tr.Coord) {
			t.Fatalf("track %d: %d <when> for %d coords", i, len(tr.When), len(tr.Coord))
		}
		var part [][]float64
		for j, c := range tr.Coord {
			var pos []float64
			for _, s := range strings.Fields(c) {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil {
					t.Fatal(err)
				}
				pos = append(pos, v)
			}
			part = append(part, pos)
			ts, err := time.Parse(time.RFC3339Nano, tr.When[j])
			if err != nil || ts.Before(last) {
				t.Fatalf("when %q out of order", tr.When[j])
			}
			last = ts
		}
		parts = append(parts, part)
	}
	checkParts(t, parts, pts)
}

func TestAreaBoxAcrossTheAntimeridian(t *testing.T) {
	st, _ := openTemp(t)
	insert(t, st, pacificTrack())
	insert(t, st, track("adsb:GREENWICH", "adsb", t0, time.Second, 10, -17, 0)) // inside 179…-179 only if the box were read as -179…179
	box := &BBox{179.7, -20, -179.8, -10}                                       // 179.7 → 180 and -180 → -179.8
	got := collectArea(t, st, AreaQuery{From: t0, To: t0.Add(time.Hour), BBox: box, Limit: 1000})
	if len(got) != 3 {
		t.Fatalf("%d points, want the 3 of adsb:PAC1 at 179.8, -179.9, 179.9", len(got))
	}
	for _, p := range got {
		if p.TrackID != "adsb:PAC1" || (p.Lon < 179.7 && p.Lon > -179.8) {
			t.Fatalf("point %s at %g is outside the box", p.TrackID, p.Lon)
		}
	}
}
