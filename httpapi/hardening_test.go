package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/gate/board"
	"github.com/cuasd/cuasd/ingest"
)

// hardFakePublisher acknowledges every frame without storing it.
type hardFakePublisher struct{ err error }

func (p *hardFakePublisher) PublishFrames(_ context.Context, _, protocol, sensor string, frames []ingest.Frame) (ingest.Result, error) {
	if p.err != nil {
		return ingest.Result{}, p.err
	}
	return ingest.Result{Accepted: len(frames), Subject: "cuas.raw." + protocol + "." + sensor}, nil
}

// hardServer is a server with every write route's dependency present, so
// that a request reaches the body decoder of each.
func hardServer(t *testing.T) http.Handler {
	t.Helper()
	return newTestServer(t, Deps{
		Zones:     newFakeZones(),
		Ledger:    &gateFakeLedger{},
		Publisher: &hardFakePublisher{},
	})
}

// TestWriteRoutesRejectNonObjectBodies PUTs or POSTs every JSON type that
// is not an object at every write route (issue 23, item 6): each must be a
// 400 problem, never a 2xx that acts on a zero value (PUT /v1/allowlist
// with null used to empty the allow list).
func TestWriteRoutesRejectNonObjectBodies(t *testing.T) {
	routes := []struct{ method, path string }{
		{"POST", "/v1/ads-b/decode"},
		{"POST", "/v1/remote-id/decode"},
		{"POST", "/v1/mavlink/parse"},
		{"POST", "/v1/counter-uas/evaluate"},
		{"POST", "/v1/swarm/topology"},
		{"PUT", "/v1/geofences/z1"},
		{"PUT", "/v1/allowlist"},
		{"POST", "/v1/ingest/adsb"},
		{"POST", "/v1/receipt/emit"},
	}
	bodies := []string{`null`, ` null `, `true`, `false`, `0`, `-1.5e3`, `"text"`, `""`, `[]`, `[{}]`, `[null]`}
	h := hardServer(t)
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			for _, b := range bodies {
				rec := do(t, h, rt.method, testBase+rt.path, b)
				if rec.Code != http.StatusBadRequest {
					t.Errorf("%s %s with body %s: %d %s, want 400", rt.method, rt.path, b, rec.Code, rec.Body)
					continue
				}
				assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), http.StatusBadRequest)
			}
		})
	}
}

// TestIngestRecvTimeBounds: a receive time far in the future used to be
// accepted and made a track last_seen in 2262 (issue 23, item 7).
func TestIngestRecvTimeBounds(t *testing.T) {
	h := hardServer(t)
	now := time.Now()
	for _, c := range []struct {
		name string
		ns   int64
		want int
	}{
		{"now", now.UnixNano(), http.StatusAccepted},
		{"default", 0, http.StatusAccepted},
		{"a minute ahead", now.Add(time.Minute).UnixNano(), http.StatusAccepted},
		{"an hour old", now.Add(-time.Hour).UnixNano(), http.StatusAccepted},
		{"year 2262", math.MaxInt64, http.StatusUnprocessableEntity},
		{"an hour ahead", now.Add(time.Hour).UnixNano(), http.StatusUnprocessableEntity},
		{"two days old", now.Add(-48 * time.Hour).UnixNano(), http.StatusUnprocessableEntity},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := fmt.Sprintf(`{"frames":["8D406B902015A678D4D220AA4BDA"],"recv_time_unix_ns":%d}`, c.ns)
			rec := do(t, h, "POST", testBase+"/v1/ingest/adsb", body)
			if rec.Code != c.want {
				t.Errorf("%s: %d %s, want %d", c.name, rec.Code, rec.Body, c.want)
			}
			if c.want == http.StatusUnprocessableEntity && !strings.Contains(rec.Body.String(), "recv_time_unix_ns") {
				t.Errorf("%s: the problem does not name the field: %s", c.name, rec.Body)
			}
		})
	}
}

// TestThreatsUnknownGeofence: filtering the board by a geofence that does
// not exist used to answer 200 with an empty list (issue 23, item 7).
func TestThreatsUnknownGeofence(t *testing.T) {
	b, s := testBoard(t)
	z := newFakeZones()
	z.fences["z"] = gate.Geofence{ID: "z", Center: []float64{52, 4}, RadiusM: 500}
	h := newTestServer(t, Deps{Threats: b, Tracks: s, Zones: z})
	rec := do(t, h, "GET", testBase+"/v1/threats/active?geofence=z", nil)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"geofence":"z"`) {
		t.Fatalf("known geofence: %d %s", rec.Code, rec.Body)
	}
	for _, path := range []string{"/v1/threats/active?geofence=nope", "/v1/threats/stream?geofence=nope"} {
		t.Run(path, func(t *testing.T) {
			// The request's context is already over, so a stream that wrongly
			// starts ends at once instead of hanging the test.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			req := httptest.NewRequestWithContext(ctx, "GET", testBase+path, nil)
			rec = httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			checkOpenAPI(t, req, rec)
			if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), `nope`) {
				t.Errorf("%s: %d %s, want 404 naming the zone", path, rec.Code, rec.Body)
			}
		})
	}
}

// TestPathIDsAreDecoded: /v1/drones/{id} (and the geofence routes) used to
// look up and echo the still percent-encoded path segment (issue 23,
// item 7).
func TestPathIDsAreDecoded(t *testing.T) {
	h := refServer(t)
	rec := do(t, h, "GET", testBase+"/v1/drones/%67eneral-atomics-mq-9-reaper", nil)
	if rec.Code != http.StatusOK {
		t.Errorf("escaped known id: %d %s", rec.Code, rec.Body)
	}
	rec = do(t, h, "GET", testBase+"/v1/drones/no%20such", nil)
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), `no such`) || strings.Contains(rec.Body.String(), "%20") {
		t.Errorf("escaped unknown id: %d %s, want the decoded id in the 404", rec.Code, rec.Body)
	}
	z := newFakeZones()
	z.fences["z-1"] = gate.Geofence{ID: "z-1", Center: []float64{52, 4}, RadiusM: 500}
	rec = do(t, newTestServer(t, Deps{Zones: z}), "GET", testBase+"/v1/geofences/z%2D1", nil)
	if rec.Code != http.StatusOK {
		t.Errorf("escaped geofence id: %d %s", rec.Code, rec.Body)
	}
}

// TestHugeRequestLineIsProblem: a request line over the header limit used
// to get net/http's plain-text 431 (issue 23, item 7).
func TestHugeRequestLineIsProblem(t *testing.T) {
	srv := httptest.NewUnstartedServer(hardServer(t))
	srv.Config.MaxHeaderBytes = ServerMaxHeaderBytes
	srv.Start()
	defer srv.Close()
	for name, mod := range map[string]func(*http.Request){
		"long query": func(r *http.Request) { r.URL.RawQuery = "q=" + strings.Repeat("a", 100<<10) },
		"big header": func(r *http.Request) { r.Header.Set("X-Big", strings.Repeat("b", 100<<10)) },
	} {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", srv.URL+testBase+"/v1/geofences", nil)
			mod(req)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
				t.Errorf("%s: %d, want 431", name, resp.StatusCode)
				return
			}
			assertProblem(t, resp.Header.Get("Content-Type"), body, http.StatusRequestHeaderFieldsTooLarge)
		})
	}
}

// TestThreatsActiveMarksStaleBoard: a board that fell minutes behind used
// to be served as if current (issue 23, item 5).
func TestThreatsActiveMarksStaleBoard(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	s := fusion.NewStore(fusion.Config{TTL: time.Minute})
	o := decode.Observation{Protocol: decode.RemoteID, Key: "U1", UASID: "U1", TimeUnixNano: now.UnixNano(),
		HasPosition: true, Lat: 52, Lon: 4, Sensor: "s"}
	s.Apply(&o)
	b := board.New(board.Config{Store: s, Now: clock}, nil)
	b.Sweep(context.Background())
	h := newTestServer(t, Deps{Threats: b})
	var out struct {
		Stale bool    `json:"stale"`
		LagS  float64 `json:"lag_s"`
	}
	rec := do(t, h, "GET", testBase+"/v1/threats/active", nil)
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Stale || !strings.Contains(rec.Body.String(), `"stale":false`) {
		t.Fatalf("fresh board: %d %s", rec.Code, rec.Body)
	}
	now = now.Add(3 * time.Minute)
	rec = do(t, h, "GET", testBase+"/v1/threats/active", nil)
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || !out.Stale || out.LagS != 180 {
		t.Errorf("3 min old board: %d %s, want stale with lag_s 180", rec.Code, rec.Body)
	}
}

// gateCirclePolygon is a closed ring of n+1 positions around (lat, lon).
func gateCirclePolygon(lat, lon float64, n int) map[string]any {
	ring := make([][]float64, 0, n+1)
	for i := range n {
		p := gate.Destination(gate.Point{Lat: lat, Lon: lon}, 2000, float64(i)*360/float64(n))
		ring = append(ring, []float64{p.Lon, p.Lat})
	}
	ring = append(ring, ring[0])
	return map[string]any{"polygon": map[string]any{"type": "Polygon", "coordinates": [][][]float64{ring}}}
}

// TestGeofenceLimits: a 9,999-vertex polygon used to be stored (and then
// broke every receipt near it), a self-intersecting polygon was accepted,
// and the number of zones was unbounded (issue 23, item 4).
func TestGeofenceLimits(t *testing.T) {
	z := newFakeZones()
	h := newTestServer(t, Deps{Zones: z})
	if rec := do(t, h, "PUT", gateFencePath+"/ok", gateCirclePolygon(52, 4, 999)); rec.Code != http.StatusCreated {
		t.Fatalf("1,000 positions: %d %.300s", rec.Code, rec.Body)
	}
	rec := do(t, h, "PUT", gateFencePath+"/big", gateCirclePolygon(52, 4, 9998))
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "9999 positions") {
		t.Errorf("9,999 positions: %d %.300s, want 422", rec.Code, rec.Body)
	}
	bowTie := `{"polygon":{"type":"Polygon","coordinates":[[[4,52],[4.01,52.01],[4.01,52],[4,52.01],[4,52]]]}}`
	rec = do(t, h, "PUT", gateFencePath+"/bowtie", bowTie)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "intersects itself") {
		t.Errorf("bow tie: %d %.300s, want 400", rec.Code, rec.Body)
	}
	for i := len(z.fences); i < MaxZones; i++ {
		z.fences[fmt.Sprintf("c%03d", i)] = gate.Geofence{ID: fmt.Sprintf("c%03d", i), Center: []float64{52, 4}, RadiusM: 100}
	}
	circle := `{"center":[52,4],"radius_m":100}`
	if rec = do(t, h, "PUT", gateFencePath+"/one-too-many", circle); rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("zone %d: %d %.300s, want 422", MaxZones+1, rec.Code, rec.Body)
	}
	if rec = do(t, h, "PUT", gateFencePath+"/c001", circle); rec.Code != http.StatusOK {
		t.Errorf("replacing a zone at the limit: %d %.300s", rec.Code, rec.Body)
	}
}

// TestGeofencesPaged: GET /v1/geofences answered every zone at once (77 MB
// with large polygons); now a page of at most limit (issue 23, item 4).
func TestGeofencesPaged(t *testing.T) {
	z := newFakeZones()
	for i := range 250 {
		id := fmt.Sprintf("z%03d", i)
		z.fences[id] = gate.Geofence{ID: id, Center: []float64{52, 4}, RadiusM: 100}
	}
	h := newTestServer(t, Deps{Zones: z})
	var ids []string
	cursor, pages := "", 0
	for {
		path := gateFencePath
		if cursor != "" {
			path += "?cursor=" + cursor
		}
		rec := do(t, h, "GET", path, nil)
		var page struct {
			Geofences    []gate.Geofence
			Count, Total int
			NextCursor   string `json:"next_cursor"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || rec.Code != 200 {
			t.Fatalf("%d %.300s", rec.Code, rec.Body)
		}
		if page.Count > 100 || page.Total != 250 {
			t.Fatalf("page of %d of %d", page.Count, page.Total)
		}
		for _, g := range page.Geofences {
			ids = append(ids, g.ID)
		}
		pages++
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if len(ids) != 250 || pages != 3 || ids[0] != "z000" || ids[249] != "z249" {
		t.Errorf("%d ids over %d pages", len(ids), pages)
	}
	for _, bad := range []string{"?limit=0", "?limit=1001", "?cursor=!!!", "?page=2"} {
		t.Run(bad, func(t *testing.T) {
			if rec := do(t, h, "GET", gateFencePath+bad, nil); rec.Code != http.StatusBadRequest {
				t.Errorf("%s: %d", bad, rec.Code)
			}
		})
	}
}

// TestIngestWhileInputsStopped: HTTP ingest is an input (issue 17); a
// request while the inputs are not running stores nothing and says so
// with a 503 and Retry-After, for the ingest route and a decode route's
// publish option alike.
func TestIngestWhileInputsStopped(t *testing.T) {
	h := newTestServer(t, Deps{Publisher: &hardFakePublisher{err: ingest.ErrNotRunning}})
	for _, c := range []struct{ path, body string }{
		{"/v1/ingest/adsb", `{"frames":["8D406B902015A678D4D220AA4BDA"],"sensor":"rx1"}`},
		{"/v1/ads-b/decode", `{"hex":"8D406B902015A678D4D220AA4BDA","publish":true,"sensor":"rx1"}`},
	} {
		t.Run(c.path, func(t *testing.T) {
			rec := do(t, h, "POST", testBase+c.path, c.body)
			if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" ||
				!strings.Contains(rec.Body.String(), "starting or stopping") {
				t.Fatalf("%d %q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
			}
			assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), http.StatusServiceUnavailable)
		})
	}
}
