package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/output/history"
)

var histT0 = time.Date(2026, 11, 26, 5, 0, 0, 0, time.UTC)

// historyStore opens a store holding adsb:4CA1FA (120 points near 51°N
// 1°W, one a second) and rid:SER (60 points near 40°N 20°E).
func historyStore(t *testing.T) *history.Store {
	t.Helper()
	st, err := history.Open(filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	var pts []history.Point
	for i := 0; i < 120; i++ {
		alt := 300.0 + float64(i)
		pts = append(pts, history.Point{TrackID: "adsb:4CA1FA", Protocol: "adsb", Time: histT0.Add(time.Duration(i) * time.Second),
			Lat: 51 + float64(i)*1e-3, Lon: -1 + float64(i)*1e-3, AltM: &alt, AltKind: "barometric", Sensor: "rx1"})
	}
	for i := 0; i < 60; i++ {
		pts = append(pts, history.Point{TrackID: "rid:SER", Protocol: "remoteid", Time: histT0.Add(time.Duration(i) * time.Second),
			Lat: 40, Lon: 20 + float64(i)*1e-4, Sensor: "rx2"})
	}
	if _, err := st.Insert(context.Background(), pts); err != nil {
		t.Fatal(err)
	}
	return st
}

func histURL(path string, kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	if len(v) == 0 {
		return testBase + path
	}
	return testBase + path + "?" + v.Encode()
}

func TestTrackHistoryFormats(t *testing.T) {
	h := newTestServer(t, Deps{History: historyStore(t)})
	for _, c := range []struct{ format, ctype string }{
		{"json", "application/json"}, {"geojson", "application/geo+json"},
		{"kml", "application/vnd.google-earth.kml+xml"}, {"csv", "text/csv; charset=utf-8; header=present"},
	} {
		t.Run(c.format, func(t *testing.T) {
			rec := do(t, h, "GET", histURL("/v1/tracks/adsb:4CA1FA/history", "format", c.format), nil)
			if rec.Code != 200 || rec.Header().Get("Content-Type") != c.ctype {
				t.Fatalf("%d %s: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
			}
			want := `attachment; filename="adsb_4CA1FA-history.` + c.format + `"`
			if got := rec.Header().Get("Content-Disposition"); got != want {
				t.Fatalf("Content-Disposition %q, want %q", got, want)
			}
			if !strings.Contains(rec.Body.String(), "51.119") { // the last point's latitude
				t.Fatalf("body lacks the last point: %.300s", rec.Body.String())
			}
		})
	}
}

func TestTrackHistoryAccept(t *testing.T) {
	h := newTestServer(t, Deps{History: historyStore(t)})
	req := httptest.NewRequest("GET", histURL("/v1/tracks/adsb:4CA1FA/history"), nil)
	req.Header.Set("Accept", "application/vnd.google-earth.kml+xml")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	checkOpenAPI(t, req, rec)
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/vnd.google-earth.kml+xml") {
		t.Fatalf("%d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
}

type trackHistoryJSON struct {
	TrackID string `json:"track_id"`
	Points  []struct {
		Time string  `json:"time"`
		Lat  float64 `json:"lat"`
	} `json:"points"`
	Count int `json:"count"`
}

func TestTrackHistoryWindowAndThinning(t *testing.T) {
	h := newTestServer(t, Deps{History: historyStore(t)})
	rec := do(t, h, "GET", histURL("/v1/tracks/adsb:4CA1FA/history",
		"from", "2026-11-26T05:00:10Z", "to", "2026-11-26T06:00:19.5+01:00"), nil) // 05:00:10 … 05:00:19.5 UTC
	var got trackHistoryJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Count != 10 || got.Points[0].Time != "2026-11-26T05:00:10Z" {
		t.Fatalf("window: %v %s", err, rec.Body.String())
	}
	rec = do(t, h, "GET", histURL("/v1/tracks/adsb:4CA1FA/history", "max_points", "5"), nil)
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Count != 5 ||
		got.Points[0].Time != "2026-11-26T05:00:00Z" || got.Points[4].Time != "2026-11-26T05:01:59Z" {
		t.Fatalf("thinned: %v %s", err, rec.Body.String())
	}
	// A known track with nothing in the window: an empty answer, not 404.
	rec = do(t, h, "GET", histURL("/v1/tracks/adsb:4CA1FA/history", "from", "2020-01-01T00:00:00Z", "to", "2020-01-02T00:00:00Z"), nil)
	if err := json.Unmarshal(rec.Body.Bytes(), &got); rec.Code != 200 || err != nil || got.Count != 0 || got.Points == nil {
		t.Fatalf("empty window: %d %s", rec.Code, rec.Body.String())
	}
}

func TestHistoryBadInput(t *testing.T) {
	h := newTestServer(t, Deps{History: historyStore(t)})
	track := "/v1/tracks/adsb:4CA1FA/history"
	for _, c := range []struct {
		name, path, field string
		kv                []string
	}{
		{"unparseable from", track, "from", []string{"from", "yesterday"}},
		{"unparseable to", track, "to", []string{"to", "2026-11-26 05:00"}},
		{"from after to", track, "from", []string{"from", "2026-11-26T06:00:00Z", "to", "2026-11-26T05:00:00Z"}},
		{"unknown format", track, "format", []string{"format", "gpx"}},
		{"max_points 1", track, "max_points", []string{"max_points", "1"}},
		{"unknown parameter", track, "bbox", []string{"bbox", "0,0,1,1"}},
		{"bbox three numbers", "/v1/history", "bbox", []string{"bbox", "1,2,3"}},
		{"bbox not numbers", "/v1/history", "bbox", []string{"bbox", "a,b,c,d"}},
		{"bbox out of range", "/v1/history", "bbox", []string{"bbox", "-200,0,10,10"}},
		{"bbox inverted", "/v1/history", "bbox", []string{"bbox", "10,10,5,5"}},
		{"bbox latitudes inverted", "/v1/history", "bbox", []string{"bbox", "0,10,5,5"}},
		{"bbox across the antimeridian out of range", "/v1/history", "bbox", []string{"bbox", "170,0,-190,10"}},
		{"area from after to", "/v1/history", "from", []string{"from", "2026-11-26T06:00:00Z", "to", "2026-11-26T05:00:00Z"}},
		{"area window too long", "/v1/history", "from", []string{"from", "2026-11-20T00:00:00Z", "to", "2026-11-26T00:00:00Z"}},
		{"area unknown format", "/v1/history", "format", []string{"format", "shp"}},
		{"area bad cursor", "/v1/history", "cursor", []string{"cursor", "not-a-cursor"}},
		{"area limit 0", "/v1/history", "limit", []string{"limit", "0"}},
		{"area unknown protocol", "/v1/history", "protocol", []string{"protocol", "lora"}},
		// Issue 32: times outside int64 nanoseconds overflowed into 200 with nothing.
		{"from before 1677", track, "from", []string{"from", "1600-01-01T00:00:00Z"}},
		{"to after 2262", track, "to", []string{"to", "2300-01-01T00:00:00Z"}},
		{"area from before 1677", "/v1/history", "from", []string{"from", "1677-09-20T23:00:00Z", "to", "1677-09-21T12:00:00Z"}},
		{"area to after 2262", "/v1/history", "to", []string{"from", "2262-04-11T23:00:00Z", "to", "2262-04-12T00:00:00Z"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := do(t, h, "GET", histURL(c.path, c.kv...), nil)
			var p Problem
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || rec.Code != 400 ||
				rec.Header().Get("Content-Type") != "application/problem+json" || len(p.Errors) == 0 || p.Errors[0].Field != c.field {
				t.Fatalf("%d %s %s, want a 400 problem naming %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String(), c.field)
			}
		})
	}
}

func TestTrackHistoryUnknownTrack(t *testing.T) {
	h := newTestServer(t, Deps{History: historyStore(t)})
	rec := do(t, h, "GET", histURL("/v1/tracks/adsb:ABCDEF/history"), nil)
	if rec.Code != 404 || !strings.Contains(rec.Body.String(), "adsb:ABCDEF") {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
}

// TestTrackHistoryOfALiveTrackNotYetRecorded: a track fusion holds whose
// first positions have not reached the recorder yet has an empty history
// (200), not none (404): the map asks as soon as a track is clicked.
func TestTrackHistoryOfALiveTrackNotYetRecorded(t *testing.T) {
	s := fusion.NewStore(fusion.Config{TTL: time.Minute})
	s.Apply(&decode.Observation{Protocol: decode.ADSB, Key: "ABCDEF", ICAO: "ABCDEF", TimeUnixNano: time.Now().UnixNano(), Sensor: "s"})
	h := newTestServer(t, Deps{History: historyStore(t), Tracks: s})
	if rec := do(t, h, "GET", histURL("/v1/tracks/adsb:ABCDEF/history"), nil); rec.Code != 200 {
		t.Fatalf("live track: %d %s", rec.Code, rec.Body.String())
	}
	if rec := do(t, h, "GET", histURL("/v1/tracks/adsb:123456/history"), nil); rec.Code != 404 {
		t.Fatalf("unknown track: %d %s", rec.Code, rec.Body.String())
	}
}

func TestHistoryUnavailable(t *testing.T) {
	closed := history.New(history.Config{Path: filepath.Join(t.TempDir(), "h.db")}) // not running: store closed
	for name, d := range map[string]Deps{"not wired": {}, "not running": {History: closed}} {
		t.Run(name, func(t *testing.T) {
			h := newTestServer(t, d)
			for _, p := range []string{"/v1/tracks/adsb:4CA1FA/history", "/v1/history"} {
				t.Run(p, func(t *testing.T) {
					if rec := do(t, h, "GET", histURL(p), nil); rec.Code != 503 {
						t.Fatalf("%s: %d %s, want 503", p, rec.Code, rec.Body.String())
					}
				})
			}
		})
	}
}

// bigTrack reports more points in every window than one answer holds.
type bigTrack struct{ *history.Store }

func (bigTrack) Count(context.Context, string, time.Time, time.Time) (int, error) {
	return MaxHistoryTrackPoints + 1, nil
}

func TestTrackHistoryTooLarge(t *testing.T) {
	h := newTestServer(t, Deps{History: bigTrack{historyStore(t)}})
	rec := do(t, h, "GET", histURL("/v1/tracks/adsb:4CA1FA/history"), nil)
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), fmt.Sprint(MaxHistoryTrackPoints)) {
		t.Fatalf("%d %s, want 400 naming the limit", rec.Code, rec.Body.String())
	}
	if rec := do(t, h, "GET", histURL("/v1/tracks/adsb:4CA1FA/history", "max_points", "1000"), nil); rec.Code != 200 {
		t.Fatalf("thinned: %d %s", rec.Code, rec.Body.String())
	}
}

type historyPageJSON struct {
	Tracks []struct {
		TrackID string `json:"track_id"`
		Points  []struct {
			Time string  `json:"time"`
			Lon  float64 `json:"lon"`
		} `json:"points"`
	} `json:"tracks"`
	Count      int    `json:"count"`
	Points     int    `json:"points"`
	NextCursor string `json:"next_cursor"`
}

func TestHistoryAreaBoxAndPages(t *testing.T) {
	h := newTestServer(t, Deps{History: historyStore(t)})
	from, to := "2026-11-26T05:00:00Z", "2026-11-26T05:10:00Z"
	// The box holds adsb:4CA1FA only, and only its first 50 points (lon ≤ −0.95).
	rec := do(t, h, "GET", histURL("/v1/history", "from", from, "to", to, "bbox", "-1.5,50.5,-0.95,52"), nil)
	var page historyPageJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || page.Count != 1 || page.Points != 51 || page.Tracks[0].TrackID != "adsb:4CA1FA" {
		t.Fatalf("box: %v %.400s", err, rec.Body.String())
	}
	rec = do(t, h, "GET", histURL("/v1/history", "from", from, "to", to, "protocol", "remoteid"), nil)
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || page.Count != 1 || page.Tracks[0].TrackID != "rid:SER" {
		t.Fatalf("protocol: %v %.400s", err, rec.Body.String())
	}
	// Follow the Link header through pages of 70 points: 180 points, each once.
	seen := map[string]bool{}
	next := histURL("/v1/history", "from", from, "to", to, "limit", "70")
	for pages := 0; next != ""; pages++ {
		if pages > 5 {
			t.Fatal("pages do not end")
		}
		rec := do(t, h, "GET", next, nil)
		if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || rec.Code != 200 {
			t.Fatalf("page %d: %d %v", pages, rec.Code, err)
		}
		for _, tr := range page.Tracks {
			for _, p := range tr.Points {
				k := tr.TrackID + p.Time
				if seen[k] {
					t.Fatalf("%s on two pages", k)
				}
				seen[k] = true
			}
		}
		next = ""
		if link := rec.Header().Get("Link"); link != "" {
			next = strings.TrimSuffix(strings.TrimPrefix(link, "<"), `>; rel="next"`)
			if page.NextCursor == "" || !strings.Contains(next, url.QueryEscape(page.NextCursor)) {
				t.Fatalf("Link %q and next_cursor %q disagree", link, page.NextCursor)
			}
		}
	}
	if len(seen) != 180 {
		t.Fatalf("pages held %d points, want 180", len(seen))
	}
}

func TestHistoryAreaFormats(t *testing.T) {
	h := newTestServer(t, Deps{History: historyStore(t)})
	for _, f := range historyFormats {
		rec := do(t, h, "GET", histURL("/v1/history", "from", "2026-11-26T05:00:00Z", "to", "2026-11-26T05:10:00Z", "format", f), nil)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Header().Get("Content-Disposition"), "history-20261126T050000Z."+f) {
			t.Fatalf("%s: %d %v", f, rec.Code, rec.Header())
		}
	}
}

func TestHistoryAreaBoxAcrossTheAntimeridian(t *testing.T) {
	h := newTestServer(t, Deps{History: historyStore(t)})
	from, to := "2026-11-26T05:00:00Z", "2026-11-26T05:10:00Z"
	// min_lon > max_lon: 170°E → 180 and -180 → 170°W (RFC 7946 §5.2). The
	// stored tracks near 1°W are outside it; read as -170…170 they would
	// be inside.
	rec := do(t, h, "GET", histURL("/v1/history", "from", from, "to", to, "bbox", "170,50,-170,52"), nil)
	var page historyPageJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &page); rec.Code != 200 || err != nil || page.Points != 0 {
		t.Fatalf("box across the antimeridian: %d %v %.400s", rec.Code, err, rec.Body.String())
	}
	// One that takes in the western side down to 2°W holds them.
	rec = do(t, h, "GET", histURL("/v1/history", "from", from, "to", to, "bbox", "170,50,-0.95,52"), nil)
	if err := json.Unmarshal(rec.Body.Bytes(), &page); rec.Code != 200 || err != nil || page.Points != 51 {
		t.Fatalf("box across the antimeridian to 0.95°W: %d %v %.400s", rec.Code, err, rec.Body.String())
	}
}
