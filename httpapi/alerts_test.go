package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/cuasd/cuasd/output/alert"
)

type fakeAlerts struct {
	recs []alert.Record
	err  error
	got  alert.Filter
}

func (f *fakeAlerts) List(_ context.Context, fl alert.Filter) ([]alert.Record, error) {
	f.got = fl
	return f.recs, f.err
}

func (f *fakeAlerts) Get(_ context.Context, id string) (alert.Record, bool, error) {
	for _, r := range f.recs {
		if r.ID == id {
			return r, true, f.err
		}
	}
	return alert.Record{}, false, f.err
}

func TestAlertsEndpoints(t *testing.T) {
	rec := alert.Record{Message: alert.Message{ID: "al-01", State: "open", Seq: 1, Rule: "r", HumanDecision: true,
		Zone: alert.Zone{ID: "demo-site"}, Track: alert.Track{TrackID: "remoteid:X", Protocols: []string{"remoteid"}},
		Decision: "alert", AlertType: "uas_threat", Severity: "warning", Title: "Drone at demo-site", Message: "A drone."},
		Deliveries: []alert.Delivery{{Sink: "hook", Status: alert.Delivered, Seq: 1, Attempts: 3}}}
	fa := &fakeAlerts{recs: []alert.Record{rec}}
	h := newTestServer(t, Deps{Alerts: fa})
	for _, tc := range []struct {
		name, path string
		code       int
	}{
		{"list", "/v1/alerts?state=open&rule=r&zone=demo-site&limit=5", 200},
		{"one", "/v1/alerts/al-01", 200},
		{"unknown", "/v1/alerts/al-02", 404},
		{"bad state", "/v1/alerts?state=closed", 400},
		{"bad limit", "/v1/alerts?limit=0", 400},
		{"unknown parameter", "/v1/alerts?track=x", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, h, "GET", testBase+tc.path, nil)
			if r.Code != tc.code {
				t.Fatalf("%d %s", r.Code, r.Body)
			}
			if tc.code != 200 {
				assertProblem(t, r.Header().Get("Content-Type"), r.Body.Bytes(), tc.code)
			}
		})
	}
	if fa.got != (alert.Filter{State: "open", Rule: "r", Zone: "demo-site", Limit: 5}) {
		t.Errorf("filter %+v", fa.got)
	}
	r := do(t, h, "GET", testBase+"/v1/alerts/al-01", nil)
	var got map[string]any
	_ = json.Unmarshal(r.Body.Bytes(), &got)
	if d := got["deliveries"].([]any)[0].(map[string]any); d["status"] != "delivered" || d["attempts"] != 3.0 {
		t.Errorf("deliveries %v", got["deliveries"])
	}
	fa.err = errors.New("nats down")
	if r := do(t, h, "GET", testBase+"/v1/alerts", nil); r.Code != 503 {
		t.Errorf("store down: %d", r.Code)
	}
	off := newTestServer(t, Deps{})
	if r := do(t, off, "GET", testBase+"/v1/alerts", nil); r.Code != 200 || !json.Valid(r.Body.Bytes()) {
		t.Errorf("not configured: %d %s", r.Code, r.Body)
	}
}

// The alert list filters by geofence like /v1/threats/active; zone, its
// old name, stays as a deprecated alias (issue 24, item 10).
func TestAlertsGeofenceParameter(t *testing.T) {
	fa := &fakeAlerts{}
	h := newTestServer(t, Deps{Alerts: fa})
	for _, path := range []string{"/v1/alerts?geofence=demo-site", "/v1/alerts?zone=demo-site", "/v1/alerts?geofence=demo-site&zone=demo-site"} {
		fa.got = alert.Filter{}
		if r := do(t, h, "GET", testBase+path, nil); r.Code != 200 || fa.got.Zone != "demo-site" {
			t.Errorf("%s: %d, filter %+v", path, r.Code, fa.got)
		}
	}
	r := do(t, h, "GET", testBase+"/v1/alerts?geofence=demo-site&zone=other", nil)
	if r.Code != 400 {
		t.Fatalf("geofence and a different zone: %d %s", r.Code, r.Body)
	}
	assertProblem(t, r.Header().Get("Content-Type"), r.Body.Bytes(), 400)
}
