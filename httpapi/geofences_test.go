package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/fusion/zones"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/internal/natstest"
)

// The JetStream store is the production ZoneStore.
var _ ZoneStore = (*zones.Store)(nil)

const gateFencePath = testBase + "/v1/geofences"

func TestGeofencesCRUD(t *testing.T) {
	for name, store := range map[string]func(t *testing.T) ZoneStore{
		"fake":      func(t *testing.T) ZoneStore { return newFakeZones() },
		"jetstream": gateRealZones,
	} {
		t.Run(name, func(t *testing.T) {
			h := newTestServer(t, Deps{Zones: store(t)})
			rec := do(t, h, "GET", gateFencePath, nil)
			if rec.Code != 200 || rec.Body.String() != "{\"geofences\":[],\"count\":0,\"total\":0}\n" {
				t.Fatalf("empty list: %d %s", rec.Code, rec.Body)
			}
			body := `{"name":"Heathrow","class":"airport","center":[51.47,-0.4543],"radius_m":5000,"floor_m":0,"ceiling_m":150}`
			rec = do(t, h, "PUT", gateFencePath+"/egll", body)
			if rec.Code != http.StatusCreated || rec.Header().Get("Location") != gateFencePath+"/egll" {
				t.Fatalf("create: %d %s", rec.Code, rec.Body)
			}
			rec = do(t, h, "PUT", gateFencePath+"/egll", `{"id":"egll","center":[51.47,-0.4543],"radius_m":8000}`)
			if rec.Code != http.StatusOK {
				t.Fatalf("replace: %d %s", rec.Code, rec.Body)
			}
			rec = do(t, h, "GET", gateFencePath+"/egll", nil)
			var g gate.Geofence
			if err := json.Unmarshal(rec.Body.Bytes(), &g); err != nil || g.RadiusM != 8000 || g.ID != "egll" {
				t.Fatalf("get: %d %s", rec.Code, rec.Body)
			}
			poly := `{"polygon":{"type":"Polygon","coordinates":[[[0,0],[0.01,0],[0.01,0.01],[0,0]]]}}`
			if rec = do(t, h, "PUT", gateFencePath+"/p1", poly); rec.Code != http.StatusCreated {
				t.Fatalf("polygon: %d %s", rec.Code, rec.Body)
			}
			rec = do(t, h, "GET", gateFencePath, nil)
			var list struct{ Geofences []gate.Geofence }
			_ = json.Unmarshal(rec.Body.Bytes(), &list)
			if len(list.Geofences) != 2 || list.Geofences[0].ID != "egll" || list.Geofences[1].ID != "p1" {
				t.Errorf("list %s", rec.Body)
			}
			if rec = do(t, h, "DELETE", gateFencePath+"/p1", nil); rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
				t.Errorf("delete: %d %s", rec.Code, rec.Body)
			}
			for _, m := range []string{"GET", "DELETE"} {
				t.Run(m, func(t *testing.T) {
					rec = do(t, h, m, gateFencePath+"/p1", nil)
					assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), http.StatusNotFound)
				})
			}

			// Validation names every field; nothing is stored.
			for _, tc := range []struct {
				path, body string
				fields     []string
			}{
				{"/x", `{"center":[95,0],"radius_m":-1,"class":"mall"}`, []string{"center[0]", "radius_m", "class"}},
				{"/x", `{"id":"y","center":[0,0],"radius_m":1}`, []string{"id"}},
				{"/bad%20id", `{"center":[0,0],"radius_m":1}`, []string{"id"}},
				{"/x", `{"polygon":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}}`, []string{"polygon.coordinates[0]"}},
				{"/x", `{"center":[0,0],"radius_m":1,"extra":true}`, []string{"extra"}},
			} {
				t.Run(tc.path, func(t *testing.T) {
					rec = do(t, h, "PUT", gateFencePath+tc.path, tc.body)
					p := assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), http.StatusBadRequest)
					var got []string
					for _, e := range p.Errors {
						got = append(got, e.Field)
					}
					for _, f := range tc.fields {
						if !slices.Contains(got, f) {
							t.Errorf("PUT %s %s: field %q not named in %v", tc.path, tc.body, f, got)
						}
					}
				})
			}
			if rec = do(t, h, "GET", gateFencePath+"/x", nil); rec.Code != http.StatusNotFound {
				t.Error("an invalid geofence was stored")
			}
		})
	}
}

func TestAllowListEndpoints(t *testing.T) {
	h := newTestServer(t, Deps{Zones: newFakeZones()})
	rec := do(t, h, "GET", testBase+"/v1/allowlist", nil)
	if rec.Code != 200 || rec.Body.String() != "{\"uas_ids\":[],\"icao\":[],\"operator_ids\":[]}\n" {
		t.Fatalf("empty: %d %s", rec.Code, rec.Body)
	}
	rec = do(t, h, "PUT", testBase+"/v1/allowlist", `{"icao":["4ca2d1","406B90","4CA2D1"],"uas_ids":["1581F5FJD239C00DW22E"]}`)
	var a gate.AllowList
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || rec.Code != 200 {
		t.Fatalf("put: %d %s", rec.Code, rec.Body)
	}
	if !slices.Equal(a.ICAO, []string{"406B90", "4CA2D1"}) || len(a.OperatorIDs) != 0 {
		t.Errorf("canonical form %+v", a)
	}
	rec = do(t, h, "PUT", testBase+"/v1/allowlist", `{"icao":["nothex"],"operator_ids":[""]}`)
	p := assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), http.StatusBadRequest)
	if len(p.Errors) != 2 || p.Errors[0].Field != "icao[0]" || p.Errors[1].Field != "operator_ids[0]" {
		t.Errorf("errors %+v", p.Errors)
	}
}

func TestZonesUnavailable(t *testing.T) {
	h := newTestServer(t, Deps{})
	for _, c := range []struct{ method, path, body string }{
		{"GET", gateFencePath, ""}, {"GET", gateFencePath + "/a", ""}, {"PUT", gateFencePath + "/a", `{}`},
		{"DELETE", gateFencePath + "/a", ""}, {"GET", testBase + "/v1/allowlist", ""}, {"PUT", testBase + "/v1/allowlist", `{}`},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			var body any
			if c.body != "" {
				body = c.body
			}
			rec := do(t, h, c.method, c.path, body)
			assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), http.StatusServiceUnavailable)
		})
	}
	z := newFakeZones()
	z.err = errors.New("bucket gone")
	h = newTestServer(t, Deps{Zones: z})
	rec := do(t, h, "GET", gateFencePath, nil)
	assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), http.StatusServiceUnavailable)
}

// gateRealZones opens the JetStream store on an embedded server.
func gateRealZones(t *testing.T) ZoneStore {
	t.Helper()
	cfg := zones.Config{Logger: quietLogger()}
	kv, err := natstest.Start(t).JetStream().KeyValue(context.Background(), zones.BucketConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	s, err := zones.Open(context.Background(), kv, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestGeofenceVersions: a decision record names its zone by digest; GET
// /v1/geofences/versions/{sha256} answers that exact version after the
// zone was replaced and after it was deleted (issue 23, item 4: kept, but
// nothing served it).
func TestGeofenceVersions(t *testing.T) {
	h := newTestServer(t, Deps{Zones: gateRealZones(t)})
	first := gate.Geofence{ID: "egll", Center: []float64{51.47, -0.4543}, RadiusM: 5000}
	if rec := do(t, h, "PUT", gateFencePath+"/egll", first); rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	if rec := do(t, h, "PUT", gateFencePath+"/egll", gate.Geofence{ID: "egll", Center: []float64{51.47, -0.4543}, RadiusM: 8000}); rec.Code != http.StatusOK {
		t.Fatalf("replace: %d %s", rec.Code, rec.Body)
	}
	if rec := do(t, h, "DELETE", gateFencePath+"/egll", nil); rec.Code != http.StatusNoContent {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body)
	}
	rec := do(t, h, "GET", gateFencePath+"/versions/"+first.Digest(), nil)
	var g gate.Geofence
	if err := json.Unmarshal(rec.Body.Bytes(), &g); err != nil || rec.Code != 200 || g.RadiusM != 5000 || g.Digest() != first.Digest() {
		t.Fatalf("first version: %d %s", rec.Code, rec.Body)
	}
	for path, code := range map[string]int{
		"/versions/" + strings.Repeat("0", 64): http.StatusNotFound,
		"/versions/" + strings.Repeat("A", 64): http.StatusBadRequest,
		"/versions/abc":                        http.StatusBadRequest,
	} {
		rec := do(t, h, "GET", gateFencePath+path, nil)
		assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), code)
	}
	rec = do(t, newTestServer(t, Deps{}), "GET", gateFencePath+"/versions/"+first.Digest(), nil)
	assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), http.StatusServiceUnavailable)
}
