package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
)

type ctxKey int

const requestIDKey ctxKey = iota

// requestID gives every request an id (kept from X-Request-Id when the
// caller sends a sane one) so a log line and an answer can be matched.
func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > 64 {
			var b [8]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(withRequestID(r.Context(), id)))
	})
}

// recoverer turns a panic into a 500 problem and a log line with the
// request id. Bad input must never get here; a panic is a bug.
func recoverer(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					if v == http.ErrAbortHandler {
						panic(v)
					}
					id := requestIDFrom(r.Context())
					log.Error("panic in handler", "request_id", id, "method", r.Method,
						"path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
					writeProblem(w, r, http.StatusInternalServerError,
						"internal error; quote request id "+id+" when reporting it")
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// statusRecorder remembers the status code written by a handler. It keeps
// http.Flusher working so Server-Sent Events pass through the middleware.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// instrument records http_request_duration_seconds with chi's route pattern
// (never the raw path: ids in paths would explode the label set) and logs
// each request at debug level, server errors at error level.
func instrument(hist *prometheus.HistogramVec, log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			rec := &statusRecorder{ResponseWriter: w}
			next.ServeHTTP(rec, r)
			if rec.status == 0 {
				rec.status = http.StatusOK
			}
			route := "unmatched"
			if rc := chi.RouteContext(r.Context()); rc != nil {
				if p := rc.RoutePattern(); p != "" {
					route = p
				}
			}
			d := time.Since(start)
			hist.WithLabelValues(r.Method, route, strconv.Itoa(rec.status)).Observe(d.Seconds())
			level := slog.LevelDebug
			if rec.status >= 500 {
				level = slog.LevelError
			}
			log.Log(r.Context(), level, "http request", "request_id", requestIDFrom(r.Context()),
				"method", r.Method, "route", route, "status", rec.status, "duration", d)
		})
	}
}

// MaxHeaderBytes bounds a request's line and headers. cuasd answers a
// larger request with a 431 problem; ServerMaxHeaderBytes, the bound
// net/http enforces itself with a plain-text 431 it writes before any
// handler runs, is set higher so that this middleware sees the request
// first.
const (
	MaxHeaderBytes       = 64 << 10
	ServerMaxHeaderBytes = 1 << 20
)

// headerLimit answers 431 problem+json when the request line and headers
// exceed MaxHeaderBytes.
func headerLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4
		for k, vs := range r.Header {
			for _, v := range vs {
				n += len(k) + len(v) + 4
			}
		}
		if n > MaxHeaderBytes {
			w.Header().Set("Connection", "close")
			writeProblem(w, r, http.StatusRequestHeaderFieldsTooLarge,
				fmt.Sprintf("the request line and headers hold %d bytes; at most %d are accepted", n, MaxHeaderBytes))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// pathParam is the URL parameter name of r, percent-decoded: chi matches
// on the escaped path when the request has one, so an id with a space or
// a slash arrives still encoded. ok is false for a malformed escape, after
// a 400 problem was written.
func pathParam(w http.ResponseWriter, r *http.Request, name string) (string, bool) {
	v, err := url.PathUnescape(chi.URLParam(r, name))
	if err != nil {
		writeProblem(w, r, http.StatusBadRequest, "the "+name+" is not a valid URL path segment",
			FieldError{Field: name, Message: "bad percent-escape"})
		return "", false
	}
	return v, true
}
