package httpapi

import (
	"net/http"
	"strings"

	"github.com/cuasd/cuasd/lifecycle"
)

// handleHealthz is liveness: the process serves HTTP. It checks nothing
// else on purpose, so a slow dependency never gets the process restarted.
func handleHealthz() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}
}

// Readiness is what /readyz reports.
type Readiness struct {
	// NotReady are the reasons the service cannot serve (503): NATS or a
	// stream missing, the reference data not loaded, a pipeline stage down.
	NotReady []string
	// Degraded are the reasons it serves less than it should (still 200):
	// an input or output down, a stale board.
	Degraded []string
	// Components are the long-running parts and their states.
	Components []lifecycle.ComponentStatus
}

// handleReadyz is readiness: 200 when every dependency the service needs
// is up ("ready", or "degraded" with the reasons when an input or output
// is down), otherwise 503 with the reasons. Both answers list the
// components and their states.
func handleReadyz(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var rd Readiness
		if d.Ready != nil {
			rd = d.Ready(r.Context())
		}
		comps := rd.Components
		if comps == nil {
			comps = []lifecycle.ComponentStatus{}
		}
		if len(rd.NotReady) > 0 {
			w.Header().Set("Retry-After", "1")
			writeJSONStatus(w, http.StatusServiceUnavailable, "application/problem+json", map[string]any{
				"type":       problemTypeBase + problemSlugs[http.StatusServiceUnavailable],
				"title":      http.StatusText(http.StatusServiceUnavailable),
				"status":     http.StatusServiceUnavailable,
				"detail":     "not ready: " + strings.Join(rd.NotReady, "; "),
				"reasons":    rd.NotReady,
				"degraded":   nonNil(rd.Degraded),
				"components": comps,
			})
			return
		}
		status := "ready"
		if len(rd.Degraded) > 0 {
			status = "degraded"
		}
		writeJSON(w, http.StatusOK, map[string]any{"status": status, "degraded": nonNil(rd.Degraded), "components": comps})
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
