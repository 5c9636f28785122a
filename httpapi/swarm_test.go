package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/fusion/swarm"
	"github.com/cuasd/cuasd/gate"
)

type gateSwarmAnswer struct {
	Components []struct {
		ID      string   `json:"id"`
		Members []string `json:"members"`
		Size    int      `json:"size"`
		Swarm   bool     `json:"swarm"`
		RadiusM float64  `json:"radius_m"`
	} `json:"components"`
	Edges []struct {
		A, B      string
		DistanceM float64 `json:"distance_m"`
	} `json:"edges"`
	EdgeCount  int      `json:"edge_count"`
	Singletons []string `json:"singletons"`
	Swarms     int      `json:"swarms"`
}

const gateSwarmPath = testBase + "/v1/swarm/topology"

// gateRing returns n tracks spaced around a 40 m circle: one tight group.
func gateRing(prefix string, c gate.Point, n int) []map[string]any {
	var out []map[string]any
	for i := range n {
		p := gate.Destination(c, 40, float64(i)*360/float64(n))
		out = append(out, map[string]any{"id": fmt.Sprintf("%s%d", prefix, i), "lat": p.Lat, "lon": p.Lon, "alt_m": 50})
	}
	return out
}

func TestSwarmTopologyPost(t *testing.T) {
	h := newTestServer(t, Deps{})
	tracks := gateRing("a", gate.Point{Lat: 51.5, Lon: -0.12}, 5)
	tracks = append(tracks, gateRing("b", gate.Point{Lat: 51.6, Lon: -0.12}, 2)...)
	tracks = append(tracks, map[string]any{"id": "z", "lat": -33.9, "lon": 151.2})
	rec := do(t, h, "POST", gateSwarmPath, map[string]any{"tracks": tracks})
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	var a gateSwarmAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	if len(a.Components) != 2 || a.Components[0].ID != "grp-a0" || a.Components[0].Size != 5 || !a.Components[0].Swarm ||
		a.Components[1].Size != 2 || a.Components[1].Swarm || a.Swarms != 1 {
		t.Errorf("components %+v", a.Components)
	}
	if !slices.Equal(a.Singletons, []string{"z"}) || a.EdgeCount != 10+1 || len(a.Edges) != 11 {
		t.Errorf("singletons %v edges %d/%d", a.Singletons, a.EdgeCount, len(a.Edges))
	}

	// min_size 2 makes the pair a swarm; edges=false drops the list.
	rec = do(t, h, "POST", gateSwarmPath, map[string]any{"tracks": tracks, "min_size": 2, "edges": false, "link_m": 100})
	_ = json.Unmarshal(rec.Body.Bytes(), &a)
	if a.Swarms != 2 || len(a.Edges) != 0 || a.EdgeCount != 11 {
		t.Errorf("min_size 2: swarms %d edges %d/%d", a.Swarms, len(a.Edges), a.EdgeCount)
	}
}

func TestSwarmTopologyValidation(t *testing.T) {
	h := newTestServer(t, Deps{})
	tests := []struct {
		name   string
		body   string
		fields []string
	}{
		{"no tracks", `{}`, []string{"tracks"}},
		{"missing fields", `{"tracks":[{"lat":0}]}`, []string{"tracks[0].track_id", "tracks[0].lon"}},
		{"duplicate and range", `{"tracks":[{"id":"a","lat":0,"lon":0},{"id":"a","lat":91,"lon":0}]}`, []string{"tracks[1].id", "tracks[1].lat"}},
		{"options", `{"tracks":[],"link_m":0,"min_size":1,"max_alt_diff_m":-1}`, []string{"link_m", "min_size"}},
		{"link too long", `{"tracks":[],"link_m":50001}`, []string{"link_m"}},
		{"negative alt diff", `{"tracks":[],"max_alt_diff_m":-1}`, []string{"max_alt_diff_m"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(t, h, "POST", gateSwarmPath, tc.body)
			p := assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), http.StatusBadRequest)
			var got []string
			for _, e := range p.Errors {
				got = append(got, e.Field)
			}
			for _, f := range tc.fields {
				if !slices.Contains(got, f) {
					t.Errorf("%s: field %q not named in %v", tc.name, f, got)
				}
			}
		})
	}
}

type gateFakeLive struct {
	tracks []swarm.Track
	err    error
}

func (f gateFakeLive) LivePositions(context.Context) ([]swarm.Track, error) { return f.tracks, f.err }

func TestSwarmTopologyGet(t *testing.T) {
	rec := do(t, newTestServer(t, Deps{}), "GET", gateSwarmPath, nil)
	assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), http.StatusServiceUnavailable)

	var live []swarm.Track
	for i := range 4 {
		p := gate.Destination(gate.Point{Lat: 10, Lon: 10}, float64(i)*100, 90)
		live = append(live, swarm.Track{ID: fmt.Sprint("t", i), Lat: p.Lat, Lon: p.Lon})
	}
	h := newTestServer(t, Deps{Live: gateFakeLive{tracks: live}})
	rec = do(t, h, "GET", gateSwarmPath, nil)
	var a gateSwarmAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if len(a.Components) != 1 || a.Components[0].Size != 4 || a.EdgeCount != 3 {
		t.Errorf("chain at 100 m: %+v", a)
	}
	rec = do(t, h, "GET", gateSwarmPath+"?link_m=50", nil)
	_ = json.Unmarshal(rec.Body.Bytes(), &a)
	if len(a.Components) != 0 || len(a.Singletons) != 4 {
		t.Errorf("link 50 m: %+v", a)
	}
	for _, q := range []string{"?link_m=-3", "?min_size=1", "?edges=maybe", "?colour=red", "?link_m=abc"} {
		t.Run(q, func(t *testing.T) {
			rec = do(t, h, "GET", gateSwarmPath+q, nil)
			assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), http.StatusBadRequest)
		})
	}
	// Bad live data is our fault, not the caller's.
	bad := newTestServer(t, Deps{Live: gateFakeLive{tracks: []swarm.Track{{ID: "x", Lat: 100}}}})
	rec = do(t, bad, "GET", gateSwarmPath, nil)
	assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), http.StatusInternalServerError)
	down := newTestServer(t, Deps{Live: gateFakeLive{err: errors.New("store closed")}})
	rec = do(t, down, "GET", gateSwarmPath, nil)
	assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), http.StatusServiceUnavailable)
}

// A track is track_id in every request and answer; id stays a deprecated
// alias for one release, and the two may not disagree (issue 24, item 10).
func TestTrackIDInRequests(t *testing.T) {
	h := newTestServer(t, Deps{})
	two := func(a, b string) string {
		return `{"tracks":[{` + a + `,"lat":50,"lon":4},{` + b + `,"lat":50.0001,"lon":4.0001}]}`
	}
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"track_id", two(`"track_id":"a"`, `"track_id":"b"`), http.StatusOK},
		{"deprecated id", two(`"id":"a"`, `"id":"b"`), http.StatusOK},
		{"both equal", two(`"track_id":"a","id":"a"`, `"track_id":"b"`), http.StatusOK},
		{"both differ", two(`"track_id":"a","id":"x"`, `"track_id":"b"`), http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(t, h, "POST", gateSwarmPath, tc.body)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body.String())
			}
			if tc.status == http.StatusOK && !strings.Contains(rec.Body.String(), `"a"`) {
				t.Errorf("the track ids are not in the answer: %s", rec.Body.String())
			}
		})
	}
	fl := &gateFakeLedger{}
	he := newTestServer(t, Deps{Ledger: fl})
	gateEvaluate(t, he, `{"track":{"track_id":"t-1","lat":50,"lon":4},"geofence":{"center":[50,4],"radius_m":100}}`)
	if got := fl.last(t).subject; got != "track:t-1" {
		t.Errorf("receipt subject %q, want track:t-1", got)
	}
	rec := do(t, he, "POST", gateEvalPath, `{"track":{"track_id":"t-1","id":"t-2","lat":50,"lon":4},"geofence":{"center":[50,4],"radius_m":100}}`)
	if rec.Code != http.StatusBadRequest {
		t.Errorf("evaluate with differing track_id and id: %d", rec.Code)
	}
}
