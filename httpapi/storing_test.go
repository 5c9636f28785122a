package httpapi

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

// TestStoringRoutesRefuseWhileLow: every route that stores something
// answers 503 with Retry-After and the reason while Deps.Storage reports a
// store below its low mark, instead of accepting what it could not keep
// (issue 32); reads are served.
func TestStoringRoutesRefuseWhileLow(t *testing.T) {
	low := errors.New("data directory /d: 1.0 MiB free, below the low mark of 64.0 MiB: writes that could not be kept are refused")
	h := newTestServer(t, Deps{Storage: func() error { return low }})
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodPost, "/v1/ingest/adsb", `{"frames":["8D4840D6202CC371C32CE0576098"]}`},
		{http.MethodPut, "/v1/geofences/z1", `{"name":"Z","class":"airport","center":[52.3,4.7],"radius_m":500}`},
		{http.MethodDelete, "/v1/geofences/z1", ""},
		{http.MethodPut, "/v1/allowlist", `{"uas_ids":[]}`},
		{http.MethodPost, "/v1/receipt/emit", `{"subject":"s","payload":{}}`},
		{http.MethodPost, "/v1/counter-uas/evaluate", `{"lat":52.3,"lon":4.7}`},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			rec := do(t, h, tc.method, testBase+tc.path, body)
			if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" ||
				!strings.Contains(rec.Body.String(), "below the low mark") {
				t.Fatalf("%d, Retry-After %q: %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
			}
		})
	}
	if rec := do(t, h, http.MethodGet, testBase+"/v1/lambda", nil); rec.Code != http.StatusOK {
		t.Fatalf("a read while low: %d", rec.Code)
	}
}
