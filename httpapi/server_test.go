package httpapi

import (
	"context"
	"encoding/json"
	"github.com/cuasd/cuasd/lifecycle"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestHealthAndAliases(t *testing.T) {
	h := newTestServer(t, Deps{})
	if rec := do(t, h, "GET", testBase+"/healthz", nil); rec.Code != 200 {
		t.Fatalf("healthz: %d", rec.Code)
	}
	if rec := do(t, h, "GET", "/api/vessels/healthz", nil); rec.Code != 200 {
		t.Fatalf("alias healthz: %d", rec.Code)
	}
	rec := do(t, h, "GET", "/api/vessels/v1/cuas-redirect", nil)
	if rec.Code != http.StatusPermanentRedirect || rec.Header().Get("Location") != testBase+"/" {
		t.Fatalf("redirect alias: %d %q", rec.Code, rec.Header().Get("Location"))
	}
}

func TestReadyz(t *testing.T) {
	comps := []lifecycle.ComponentStatus{{Name: "beast-connect radar:30005", Kind: lifecycle.Input, State: lifecycle.Retrying,
		LastError: "connection refused", Since: time.Unix(0, 0).UTC(), Retries: 3}}
	for _, tc := range []struct {
		name   string
		rd     Readiness
		code   int
		substr string
	}{
		{"not ready", Readiness{NotReady: []string{"nats: not connected"}, Components: comps}, 503, "nats: not connected"},
		{"ready", Readiness{}, 200, `"status":"ready"`},
		{"degraded", Readiness{Degraded: []string{"beast-connect radar:30005: retrying: connection refused"}, Components: comps}, 200, `"status":"degraded"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newTestServer(t, Deps{Ready: func(context.Context) Readiness { return tc.rd }})
			rec := do(t, h, "GET", testBase+"/readyz", nil)
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.substr) {
				t.Fatalf("readyz: %d %s", rec.Code, rec.Body)
			}
			if len(tc.rd.Components) > 0 && !strings.Contains(rec.Body.String(), `"last_error":"connection refused"`) {
				t.Fatalf("components missing: %s", rec.Body)
			}
		})
	}
}

func TestHonestHasExactlyTheSevenFields(t *testing.T) {
	for _, mode := range []string{"", "unsigned", "ed25519"} {
		t.Run(mode, func(t *testing.T) {
			h := newTestServer(t, Deps{SigningMode: mode})
			rec := do(t, h, "GET", testBase+"/v1/honest", nil)
			var m map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			want := []string{"doctrine", "lambda", "dsse_signature", "slsa", "signal_trust", "errors", "corpus"}
			if len(m) != len(want) {
				t.Errorf("mode %q: %d fields, want %d: %v", mode, len(m), len(want), m)
			}
			for _, k := range want {
				if s, ok := m[k].(string); !ok || s == "" {
					t.Errorf("mode %q: field %q missing or not a non-empty string", mode, k)
				}
			}
			if m["doctrine"] != "v11" {
				t.Errorf("doctrine = %v", m["doctrine"])
			}
			for _, s := range []string{"749 declarations", "14 unique axioms", "163 sorries", "not shipped"} {
				if !strings.Contains(m["corpus"].(string), s) {
					t.Errorf("corpus statement lacks %q", s)
				}
			}
			if !strings.Contains(m["slsa"].(string), "L1") {
				t.Errorf("slsa statement lacks L1")
			}
			for _, s := range []string{"conjecture", "decision aid", "not a proof of safety", "holds decisions", "raw_decision"} {
				if !strings.Contains(m["lambda"].(string), s) {
					t.Errorf("lambda statement lacks %q", s)
				}
			}
			for _, s := range []string{"Remote ID", "ADS-B", "MAVLink", "unauthenticated", "spoofable", "Field sensors", "unsigned JSON",
				"product type", "unauthenticated claim", "never guessed"} {
				if !strings.Contains(m["signal_trust"].(string), s) {
					t.Errorf("signal_trust lacks %q", s)
				}
			}
			sig := m["dsse_signature"].(string)
			switch mode {
			case "unsigned":
				if !strings.Contains(sig, "placeholder") || !strings.Contains(sig, "SHA-256") {
					t.Errorf("unsigned statement: %q", sig)
				}
			case "ed25519":
				if !strings.Contains(sig, "Ed25519") || strings.Contains(sig, "placeholder") {
					t.Errorf("signed statement: %q", sig)
				}
			default:
				if !strings.Contains(sig, "No receipt ledger") {
					t.Errorf("no-ledger statement: %q", sig)
				}
			}
		})
	}
}

func TestErrorModel(t *testing.T) {
	h := newTestServer(t, Deps{})
	cases := []struct {
		name, method, path, ct, body string
		want                         int
	}{
		{"unknown route", "GET", testBase + "/v1/nope", "", "", 404},
		{"unknown root route", "GET", "/nope", "", "", 404},
		{"wrong method", "DELETE", testBase + "/v1/honest", "", "", 405},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := do(t, h, c.method, c.path, nil)
			if rec.Code != c.want {
				t.Fatalf("status %d, want %d: %s", rec.Code, c.want, rec.Body)
			}
			assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), c.want)
			if c.want == 405 && !strings.Contains(rec.Header().Get("Allow"), "GET") {
				t.Errorf("Allow = %q", rec.Header().Get("Allow"))
			}
		})
	}
}

// TestDecodeJSON drives the shared request decoder through every failure
// the error model names, on a tiny handler of its own.
func TestDecodeJSON(t *testing.T) {
	type in struct {
		Hex   string  `json:"hex"`
		Count int     `json:"count"`
		Pos   *[2]int `json:"pos"`
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v in
		if !decodeJSON(w, r, &v, 1024) {
			return
		}
		writeJSON(w, 200, v)
	})
	cases := []struct {
		name, ct, body string
		want           int
		detail         string
	}{
		{"ok", "application/json", `{"hex":"ab","count":2}`, 200, ""},
		{"ok with charset", "application/json; charset=utf-8", `{"hex":"ab"}`, 200, ""},
		{"malformed", "application/json", `{"hex":`, 400, "malformed JSON"},
		{"syntax", "application/json", `{"hex" "ab"}`, 400, "byte offset"},
		{"unknown field", "application/json", `{"hexx":"ab"}`, 400, `unknown field "hexx"`},
		{"wrong type", "application/json", `{"count":"two"}`, 400, `"count" must be a number`},
		{"trailing", "application/json", `{"hex":"ab"} {}`, 400, "exactly one JSON value"},
		{"empty", "application/json", ``, 400, "empty"},
		{"text/plain", "text/plain", `{"hex":"ab"}`, 415, "application/json"},
		{"no content type", "", `{"hex":"ab"}`, 415, "application/json"},
		{"too large", "application/json", `{"hex":"` + strings.Repeat("a", 2000) + `"}`, 413, "limit"},
		{"too deep", "application/json", `{"hex":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, 400, "levels deep"},
		{"deep inside a string is fine", "application/json", `{"hex":"` + strings.Repeat("[", 40) + `"}`, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", "/x", strings.NewReader(c.body))
			if c.ct != "" {
				req.Header.Set("Content-Type", c.ct)
			}
			rec := newRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != c.want {
				t.Fatalf("status %d, want %d: %s", rec.Code, c.want, rec.Body)
			}
			if c.want != 200 {
				p := assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), c.want)
				if !strings.Contains(p.Detail, c.detail) {
					t.Errorf("detail %q lacks %q", p.Detail, c.detail)
				}
			}
		})
	}
}

func TestPanicIsA500Problem(t *testing.T) {
	h := recoverer(quietLogger())(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	rec := newRecorder()
	req, _ := http.NewRequest("GET", "/x", nil)
	h.ServeHTTP(rec, withID(req, "req-1"))
	p := assertProblem(t, rec.Header().Get("Content-Type"), rec.Body.Bytes(), 500)
	if !strings.Contains(p.Detail, "req-1") || strings.Contains(p.Detail, "boom") {
		t.Errorf("detail %q: want the request id and no panic text", p.Detail)
	}
}

func TestEverySpecPathIsDocumentedAndRouted(t *testing.T) {
	doc, err := openAPIDocument()
	if err != nil {
		t.Fatal(err)
	}
	paths := doc["paths"].(map[string]any)
	spec := []struct{ method, path string }{
		{"get", "/healthz"}, {"get", "/readyz"}, {"get", "/v1/honest"},
		{"post", "/v1/remote-id/decode"}, {"post", "/v1/ads-b/decode"}, {"post", "/v1/mavlink/parse"},
		{"get", "/v1/drones/database"}, {"get", "/v1/drones/{id}"}, {"post", "/v1/counter-uas/evaluate"},
		{"get", "/v1/swarm/topology"}, {"post", "/v1/swarm/topology"}, {"get", "/v1/threats/active"},
		{"post", "/v1/receipt/emit"}, {"get", "/v1/receipt/ledger"}, {"get", "/v1/lambda"},
		{"get", "/v1/research"}, {"get", "/v1/samples"}, {"get", "/v1/mcp/tools"}, {"get", "/openapi.json"},
		{"get", "/v1/alerts"}, {"get", "/v1/alerts/{id}"},
	}
	h := newTestServer(t, Deps{})
	for _, s := range spec {
		t.Run(s.method+" "+s.path, func(t *testing.T) {
			item, ok := paths[s.path].(map[string]any)
			if !ok {
				t.Errorf("%s is not in the OpenAPI document", s.path)
				return
			}
			if _, ok := item[s.method]; !ok {
				t.Errorf("%s %s is not in the OpenAPI document", s.method, s.path)
			}
			concrete := strings.ReplaceAll(s.path, "{id}", "x")
			var body any
			if s.method == "post" {
				body = "{}"
			}
			rec := do(t, h, strings.ToUpper(s.method), testBase+concrete, body)
			if rec.Code == 404 && !strings.Contains(s.path, "{") || rec.Code == 405 {
				t.Errorf("%s %s is not routed: %d", s.method, s.path, rec.Code)
			}
		})
	}
	// And the document itself is served at the base path and the root.
	for _, p := range []string{testBase + "/openapi.json", "/openapi.json"} {
		t.Run(p, func(t *testing.T) {
			rec := do(t, h, "GET", p, nil)
			var m map[string]any
			if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &m) != nil || m["openapi"] != "3.1.0" {
				t.Errorf("%s: %d", p, rec.Code)
			}
		})
	}
}

func TestMetricsUseRoutePatterns(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newTestServer(t, Deps{Registry: reg, Gatherer: reg})
	do(t, h, "GET", testBase+"/v1/drones/some-id", nil)
	rec := do(t, h, "GET", "/metrics", nil)
	body := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(body, `method="GET",route="/api/cuas/v1/drones/{id}"} 1`) {
		t.Fatalf("metrics lack the route pattern series:\n%s", body)
	}
	if strings.Contains(body, "some-id") {
		t.Errorf("a raw path id leaked into a label")
	}
}
