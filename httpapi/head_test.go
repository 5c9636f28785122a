package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestHeadServedForGetRoutes (issue 32, item 4): HEAD on a GET route
// answered 405. Every GET operation of the OpenAPI document now answers
// HEAD through a real HTTP server with the status and content type its GET
// has, and no body; the threat board's event stream answers its headers
// and ends instead of streaming.
func TestHeadServedForGetRoutes(t *testing.T) {
	doc, err := openAPIDocument()
	if err != nil {
		t.Fatal(err)
	}
	b, s := testBoard(t)
	srv := httptest.NewServer(newTestServer(t, Deps{Threats: b, Tracks: s}))
	defer srv.Close()
	param := regexp.MustCompile(`\{[^}]+\}`)
	n := 0
	for path, item := range doc["paths"].(map[string]any) {
		if _, ok := item.(map[string]any)["get"]; !ok {
			continue
		}
		n++
		url := srv.URL + testBase + param.ReplaceAllString(path, "x")
		if path == "/openapi.json" || path == "/healthz" || path == "/readyz" || strings.HasPrefix(path, "/metrics") {
			url = srv.URL + testBase + path
		}
		head, err := http.Head(url)
		if err != nil {
			t.Fatalf("HEAD %s: %v", path, err)
		}
		body, _ := io.ReadAll(head.Body)
		head.Body.Close()
		var getCode int
		var getType string
		if path == "/v1/threats/stream" {
			getCode, getType = http.StatusOK, "text/event-stream"
		} else {
			get, err := http.Get(url)
			if err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			_, _ = io.Copy(io.Discard, get.Body)
			get.Body.Close()
			getCode, getType = get.StatusCode, get.Header.Get("Content-Type")
		}
		if head.StatusCode == http.StatusMethodNotAllowed || head.StatusCode != getCode ||
			head.Header.Get("Content-Type") != getType || len(body) != 0 {
			t.Errorf("HEAD %s: %d %q with %d bytes; GET: %d %q", path, head.StatusCode, head.Header.Get("Content-Type"), len(body), getCode, getType)
		}
	}
	if n < 20 {
		t.Errorf("only %d GET operations in the document", n)
	}
	// A path without GET still refuses HEAD, and 405 lists HEAD where GET is.
	rec := do(t, newTestServer(t, Deps{}), "DELETE", testBase+"/v1/honest", nil)
	if allow := rec.Header().Get("Allow"); rec.Code != 405 || !strings.Contains(allow, "HEAD") {
		t.Errorf("DELETE /v1/honest: %d, Allow %q; want 405 listing HEAD", rec.Code, allow)
	}
}
