package httpapi

import (
	"context"
	"net/http"
	"testing"

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
		for _, b := range bodies {
			rec := do(t, h, rt.method, testBase+rt.path, b)
			if rec.Code != http.StatusBadRequest {
				t.Errorf("%s %s with body %s: %d %s, want 400", rt.method, rt.path, b, rec.Code, rec.Body)
				continue
			}
			assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), http.StatusBadRequest)
		}
	}
}
