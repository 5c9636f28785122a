package httpapi

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzRequestBodies sends arbitrary bodies to the endpoints that parse
// JSON without a backing service: the answer is always a 2xx, a 4xx or a
// 503/501 problem — never a 500 or a panic.
func FuzzRequestBodies(f *testing.F) {
	for _, s := range []string{`{"hex":"8D406B902015A678D4D220AA4BDA"}`, `{"frames":["8D"]}`, `{"tracks":[{"id":"a","lat":1,"lon":2}]}`,
		`{"track":{"lat":1,"lon":2},"geofence":{"center":[1,2],"radius_m":5}}`, `[[[[`, `{"hex":"` + strings.Repeat("0", 50) + `"}`} {
		f.Add(s)
	}
	h := newTestServer(f, Deps{})
	paths := []string{"/v1/ads-b/decode", "/v1/remote-id/decode", "/v1/mavlink/parse", "/v1/swarm/topology",
		"/v1/counter-uas/evaluate", "/v1/ingest/adsb", "/v1/receipt/emit"}
	f.Fuzz(func(t *testing.T, body string) {
		for _, p := range paths {
			req := httptest.NewRequest("POST", testBase+p, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code >= 500 && rec.Code != 501 && rec.Code != 503 {
				t.Fatalf("%s with %q: %d %s", p, body, rec.Code, rec.Body)
			}
		}
	})
}
