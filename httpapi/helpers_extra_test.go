package httpapi

import (
	"encoding/json"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"testing"
)

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func withID(r *http.Request, id string) *http.Request {
	return r.WithContext(withRequestID(r.Context(), id))
}

// assertProblem checks that a body is an RFC 9457 problem with the status.
func assertProblem(t testing.TB, contentType string, body []byte, status int) Problem {
	t.Helper()
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt != "application/problem+json" {
		t.Errorf("Content-Type %q, want application/problem+json", contentType)
	}
	var p Problem
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("problem body: %v: %s", err, body)
	}
	if p.Status != status || p.Title == "" || p.Type == "" || p.Detail == "" {
		t.Errorf("problem %+v: want status %d with type, title and detail", p, status)
	}
	return p
}
