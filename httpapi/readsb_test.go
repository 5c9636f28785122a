package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

type fakeReadsb map[string][]byte

func (f fakeReadsb) Document(name string) ([]byte, bool) { d, ok := f[name]; return d, ok }

func TestReadsbData(t *testing.T) {
	docs := fakeReadsb{"aircraft.json": []byte(`{"now":1,"messages":0,"aircraft":[]}`)}
	for _, c := range []struct {
		deps   ReadsbDocuments
		path   string
		status int
	}{
		{docs, "/api/cuas/data/aircraft.json", 200},
		{docs, "/api/cuas/data/history_3.json", 404},
		{docs, "/api/cuas/data/passwd", 404},
		{nil, "/api/cuas/data/aircraft.json", 501},
	} {
		t.Run(c.path, func(t *testing.T) {
			h := NewServer(Deps{BasePath: "/api/cuas", Readsb: c.deps})
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, c.path, nil)
			h.ServeHTTP(rec, req)
			checkOpenAPI(t, req, rec)
			if rec.Code != c.status {
				t.Errorf("%s: %d, want %d: %s", c.path, rec.Code, c.status, rec.Body)
			}
			if c.status == 200 && (rec.Header().Get("Access-Control-Allow-Origin") != "*" || rec.Body.String() != string(docs["aircraft.json"])) {
				t.Errorf("%s: headers %v body %s", c.path, rec.Header(), rec.Body)
			}
			if c.status != 200 && rec.Header().Get("Content-Type") != "application/problem+json" {
				t.Errorf("%s: %s is not a problem", c.path, rec.Header().Get("Content-Type"))
			}
		})
	}
}
