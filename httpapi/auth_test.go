package httpapi

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func authServer(t *testing.T, rps float64) (http.Handler, map[string]string) {
	t.Helper()
	secrets := map[string]string{}
	var entries []TokenEntry
	for _, role := range []Role{RoleReader, RoleSensor, RoleOperator, RoleAdmin} {
		s, e, err := NewToken("t-"+role.String(), role)
		if err != nil {
			t.Fatal(err)
		}
		secrets[role.String()] = s
		entries = append(entries, e)
	}
	a, err := NewAuthenticator(entries)
	if err != nil {
		t.Fatal(err)
	}
	return newTestServer(t, Deps{Auth: a, RateLimit: rps}), secrets
}

func doAuth(t *testing.T, h http.Handler, method, path, token, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.RemoteAddr = "192.0.2.1:1234"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	checkOpenAPI(t, req, rec)
	return rec
}

func TestRoles(t *testing.T) {
	h, sec := authServer(t, 0)
	cases := []struct {
		method, path, role, body string
		want                     int
	}{
		{"GET", "/v1/lambda", "", "", 401},
		{"GET", "/v1/lambda", "bogus", "", 401},
		{"GET", "/v1/tracks", "reader", "", 503}, // passed auth; no track store in this test
		{"POST", "/v1/ingest/adsb", "reader", `{"frames":["8D"]}`, 403},
		{"POST", "/v1/ingest/adsb", "sensor", `{"frames":["8D"]}`, 503},
		{"PUT", "/v1/allowlist", "sensor", `{}`, 403},
		{"POST", "/v1/receipt/emit", "sensor", `{}`, 403},
		{"POST", "/v1/counter-uas/evaluate", "operator", `{}`, 503}, // no ledger: refuses to decide unrecorded
		{"POST", "/v1/counter-uas/evaluate", "admin", `{}`, 503},
		{"GET", "/healthz", "", "", 200},
		{"GET", "/v1/threats/stream?access_token=bogus", "", "", 401},
		{"GET", "/v1/tracks?access_token=x", "", "", 401}, // only the stream takes a query token
		{"GET", "/readyz", "", "", 200},
		{"GET", "/v1/honest", "", "", 200},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			tok := sec[c.role]
			if c.role == "bogus" {
				tok = "cuas_not-a-real-token"
			}
			rec := doAuth(t, h, c.method, testBase+c.path, tok, c.body)
			if rec.Code != c.want {
				t.Errorf("%s %s as %q: %d, want %d: %s", c.method, c.path, c.role, rec.Code, c.want, rec.Body)
			}
			if c.want == 401 && rec.Header().Get("WWW-Authenticate") == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
			if strings.Contains(rec.Body.String(), tok) && tok != "" {
				t.Errorf("the token leaked into the answer")
			}
		})
	}
}

func TestRateLimit(t *testing.T) {
	// One request per second with a burst of one: the second request can
	// only pass if a whole second went by, which a loaded CI machine does
	// not make plausible between two in-process calls.
	h, sec := authServer(t, 1)
	codes := []int{}
	for i := 0; i < 2; i++ {
		codes = append(codes, doAuth(t, h, "GET", testBase+"/v1/honest", sec["reader"], "").Code)
	}
	if codes[0] != 200 || codes[1] != 429 {
		t.Fatalf("codes %v: want 200 then 429", codes)
	}
	rec := doAuth(t, h, "GET", testBase+"/v1/honest", sec["reader"], "")
	if rec.Code != 429 || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("429 without Retry-After: %d", rec.Code)
	}
	// Another client is limited separately.
	if rec := doAuth(t, h, "GET", testBase+"/v1/honest", sec["admin"], ""); rec.Code != 200 {
		t.Fatalf("another token was limited: %d", rec.Code)
	}
	// Probes are never limited.
	for i := 0; i < 5; i++ {
		if rec := doAuth(t, h, "GET", testBase+"/healthz", "", ""); rec.Code != 200 {
			t.Fatalf("healthz limited: %d", rec.Code)
		}
	}
	rl := newRateLimiter(1)
	now := time.Now()
	if ok, _ := rl.allow("k", now); !ok {
		t.Fatal("first request refused")
	}
	if ok, wait := rl.allow("k", now); ok || wait <= 0 {
		t.Fatal("second request in the same instant allowed")
	}
	if ok, _ := rl.allow("k", now.Add(1100*time.Millisecond)); !ok {
		t.Fatal("the bucket did not refill")
	}
}

func TestLoadTokens(t *testing.T) {
	_, e, _ := NewToken("site-a", RoleSensor)
	dir := t.TempDir()
	good := filepath.Join(dir, "t.yaml")
	os.WriteFile(good, []byte("- name: "+e.Name+"\n  role: "+e.Role+"\n  sha256: "+e.SHA256+"\n"), 0o600)
	if _, err := LoadTokens(good); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		"- name: a\n  role: king\n  sha256: " + e.SHA256 + "\n",
		"- name: a\n  role: reader\n  sha256: abc\n",
		"- name: a\n  role: reader\n  sha256: " + e.SHA256 + "\n  secret: x\n",
		"[]\n",
	} {
		t.Run(bad, func(t *testing.T) {
			p := filepath.Join(dir, "bad.yaml")
			os.WriteFile(p, []byte(bad), 0o600)
			if _, err := LoadTokens(p); err == nil {
				t.Errorf("accepted %q", bad)
			}
		})
	}
}
