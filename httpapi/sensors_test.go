package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/ingest/sensors"
)

// TestSensorEndpoints: a configured sensor is listed with its position
// and shown as down until heard; an unknown id is a 404 problem; both
// answers match the OpenAPI document (checked by do).
func TestSensorEndpoints(t *testing.T) {
	reg := sensors.NewRegistry(time.Minute)
	reg.Configure("kit-1", "wardragon", &sensors.Position{Lat: 51.47, Lon: -0.45}, 0)
	h := newTestServer(t, Deps{Sensors: reg})
	rec := do(t, h, http.MethodGet, testBase+"/v1/sensors", nil)
	var list struct {
		Sensors []sensors.Sensor `json:"sensors"`
		Count   int              `json:"count"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if list.Count != 1 || list.Sensors[0].ID != "kit-1" || !list.Sensors[0].Down || list.Sensors[0].Position.Source != "configured" {
		t.Errorf("%+v", list)
	}
	if rec := do(t, h, http.MethodGet, testBase+"/v1/sensors/kit-1", nil); rec.Code != 200 {
		t.Errorf("get: %d %s", rec.Code, rec.Body)
	}
	if rec := do(t, h, http.MethodGet, testBase+"/v1/sensors/nope", nil); rec.Code != 404 {
		t.Errorf("unknown: %d %s", rec.Code, rec.Body)
	}
	if rec := do(t, newTestServer(t, Deps{}), http.MethodGet, testBase+"/v1/sensors", nil); rec.Code != 200 {
		t.Errorf("no registry: %d %s", rec.Code, rec.Body)
	}
}

// TestSensorEndpointsRefuseUnknownParameters: the sensor endpoints and
// the one-track endpoint take no query parameters, and say so (a 400
// problem naming the parameter) as every other endpoint does, rather
// than answering 200 as if a filter such as ?kind=modes had been applied.
func TestSensorEndpointsRefuseUnknownParameters(t *testing.T) {
	reg := sensors.NewRegistry(time.Minute)
	reg.Configure("kit-1", "wardragon", &sensors.Position{Lat: 51.47, Lon: -0.45}, 0)
	st := fusion.NewStore(fusion.Config{TTL: time.Minute})
	st.Apply(&decode.Observation{Protocol: decode.ADSB, Key: "ABCDEF", ICAO: "ABCDEF", TimeUnixNano: time.Now().UnixNano(), Sensor: "s"})
	h := newTestServer(t, Deps{Sensors: reg, Tracks: st})
	if rec := do(t, h, http.MethodGet, testBase+"/v1/tracks/adsb:ABCDEF", nil); rec.Code != http.StatusOK {
		t.Fatalf("the track: %d %s", rec.Code, rec.Body)
	}
	for _, path := range []string{"/v1/sensors?kind=modes", "/v1/sensors/kit-1?verbose=1", "/v1/tracks/adsb:ABCDEF?history=0"} {
		rec := do(t, h, http.MethodGet, testBase+path, nil)
		var p struct {
			Status int    `json:"status"`
			Detail string `json:"detail"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &p)
		if rec.Code != http.StatusBadRequest || rec.Header().Get("Content-Type") != "application/problem+json" ||
			!strings.Contains(p.Detail, "unknown query parameter") {
			t.Errorf("%s: %d %s %s, want a 400 problem naming the unknown parameter", path, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
	}
}
