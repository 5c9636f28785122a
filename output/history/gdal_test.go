package history

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// requireOGR returns the path of GDAL's ogr2ogr and ogrinfo; it skips
// without them, except under CI=true (CI installs gdal-bin).
func requireOGR(t *testing.T) (ogr2ogr, ogrinfo string) {
	t.Helper()
	var err error
	if ogr2ogr, err = exec.LookPath("ogr2ogr"); err == nil {
		ogrinfo, err = exec.LookPath("ogrinfo")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("GDAL is required under CI (apt-get install gdal-bin): %v", err)
		}
		t.Skipf("GDAL not installed (apt-get install gdal-bin); skipping the GIS import test: %v", err)
	}
	return ogr2ogr, ogrinfo
}

// gisPoints are the export tracks with what GIS imports trip over: a
// track crossing the antimeridian, heights known and unknown, a position
// repeated at later times, a decision and Λ on some fixes only.
func gisPoints() []Point {
	pts := exportPoints()
	pts[1].Lambda, pts[2].Lambda = f64(0.25), f64(0.5)
	pts[3].Lat, pts[3].Lon = pts[2].Lat, pts[2].Lon // a repeat at a later time
	return append(pts, pacificTrack()...)
}

// ogrColumn matches one field line of ogrinfo -so: "name: Type (w.p)".
var ogrColumn = regexp.MustCompile(`(?m)^(\w+): (\w+(?:\(\w+\))?) \(`)

// TestExportsImportIntoGeoPackage runs GDAL's ogr2ogr, as a QGIS user
// would, on each export format into a GeoPackage: it must import without
// a warning (issue 34: per-point lists became strings with a warning) and
// give typed columns; the KML placemarks carry the track's ExtendedData;
// the CSV is read as points by GDAL's defaults (its WKT column), with the
// .csvt sidecar for types.
func TestExportsImportIntoGeoPackage(t *testing.T) {
	ogr2ogr, ogrinfo := requireOGR(t)
	pts := gisPoints()
	dir := t.TempDir()
	for _, tc := range []struct {
		f    Format
		want map[string]string // column → ogrinfo type
	}{
		{GeoJSON, map[string]string{"track_id": "String", "count": "Integer", "start": "DateTime", "time": "DateTime",
			"alt_m": "Real", "alt_kind": "String", "lambda": "Real", "decision": "String", "lat": "Real"}},
		{KML, map[string]string{"track_id": "String", "protocol": "String", "decision": "String", "lambda": "Real",
			"count": "Integer", "begin": "DateTime", "end": "DateTime"}},
		{CSV, map[string]string{"track_id": "String", "time": "DateTime", "lat": "Real", "lon": "Real", "alt_m": "Real", "lambda": "Real"}},
	} {
		t.Run(string(tc.f), func(t *testing.T) {
			src := filepath.Join(dir, "history."+tc.f.Ext())
			if err := os.WriteFile(src, encode(t, tc.f, false, pts, ""), 0o600); err != nil {
				t.Fatal(err)
			}
			if tc.f == CSV {
				_ = os.WriteFile(filepath.Join(dir, "history.csvt"), encode(t, CSVT, false, pts, ""), 0o600)
			}
			dst := filepath.Join(dir, string(tc.f)+".gpkg")
			out, err := exec.Command(ogr2ogr, "-f", "GPKG", dst, src).CombinedOutput()
			if err != nil || len(bytes.TrimSpace(out)) > 0 {
				t.Fatalf("ogr2ogr -f GPKG %s: %v, want no error and no warning:\n%s", filepath.Base(src), err, out)
			}
			info, err := exec.Command(ogrinfo, "-so", "-al", dst).CombinedOutput()
			if err != nil {
				t.Fatalf("ogrinfo: %v\n%s", err, info)
			}
			cols := map[string]string{}
			for _, m := range ogrColumn.FindAllStringSubmatch(string(info), -1) {
				cols[m[1]] = m[2]
			}
			for col, typ := range tc.want {
				if cols[col] != typ {
					t.Errorf("column %s is %q, want %s (all: %v)", col, cols[col], typ, cols)
				}
			}
			checkOGRFeatures(t, ogrinfo, dst, tc.f, pts)
		})
	}
}

// checkOGRFeatures reads the GeoPackage back: the CSV's rows are points,
// every track's line or placemark names its track, and the KML
// placemark of the alerting track carries its decision and Λ.
func checkOGRFeatures(t *testing.T, ogrinfo, gpkg string, f Format, pts []Point) {
	t.Helper()
	out, err := exec.Command(ogrinfo, "-al", "-q", gpkg).CombinedOutput()
	if err != nil {
		t.Fatalf("ogrinfo: %v\n%s", err, out)
	}
	s := string(out)
	switch f {
	case CSV:
		if n := strings.Count(s, "\n  POINT ("); n != len(pts) {
			t.Fatalf("%d POINT geometries, want one per row (%d):\n%s", n, len(pts), s)
		}
	case KML:
		for _, want := range []string{"track_id (String) = adsb:4CA1FA", "decision (String) = alert", "lambda (Real) = 0.5",
			"count (Integer) = 5", "track_id (String) = adsb:PAC1", "MULTILINESTRING"} {
			if !strings.Contains(s, want) {
				t.Fatalf("the KML import lacks %q:\n%s", want, s)
			}
		}
	case GeoJSON:
		for _, want := range []string{"feature (String) = track", "feature (String) = point", "MULTILINESTRING", "alt_kind (String) = " + pts[0].AltKind} {
			if !strings.Contains(s, want) {
				t.Fatalf("the GeoJSON import lacks %q:\n%s", want, s)
			}
		}
	}
}

// TestCSVTypesNameEveryColumn: the .csvt sidecar has one type per CSV
// column, else GDAL ignores it.
func TestCSVTypesNameEveryColumn(t *testing.T) {
	types := strings.Split(strings.TrimSpace(string(encode(t, CSVT, false, exportPoints(), ""))), ",")
	if len(types) != len(csvHeader) || types[len(types)-1] != "WKT" || csvHeader[len(csvHeader)-1] != "WKT" {
		t.Fatalf("%d types %v for %d columns %v", len(types), types, len(csvHeader), csvHeader)
	}
}

// TestKMLDropsOnlyTrueRepeats: a gx:Track keeps a vertex at the same place
// at a later time (its <when> is information) and leaves out one equal in
// place and time.
func TestKMLDropsOnlyTrueRepeats(t *testing.T) {
	pts := track("adsb:4CA1FA", "adsb", t0, time.Second, 4, 52.3, 4.76)
	pts[2].Lat, pts[2].Lon = pts[1].Lat, pts[1].Lon // same place, later
	dup := pts[3]
	pts = append(pts, dup) // same place, same time
	var doc kmlDoc
	if err := xml.Unmarshal(encode(t, KML, true, pts, ""), &doc); err != nil {
		t.Fatal(err)
	}
	tr := doc.Document.Placemarks[0].Track
	if len(tr.When) != 4 || len(tr.Coord) != 4 {
		t.Fatalf("%d when, %d coord; want 4: the later repeat kept, the exact one left out", len(tr.When), len(tr.Coord))
	}
}
