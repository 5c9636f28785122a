package httpapi

import (
	"net/http"
)

// handleHealthz is liveness: the process serves HTTP. It checks nothing
// else on purpose, so a slow dependency never gets the process restarted.
func handleHealthz() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}
}

// handleReadyz is readiness: 200 only when every dependency the service
// needs is up (NATS connected, streams present, drone database and
// decoders loaded); otherwise 503 with the reasons.
func handleReadyz(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var reasons []string
		if d.Ready != nil {
			reasons = d.Ready(r.Context())
		}
		if len(reasons) > 0 {
			w.Header().Set("Retry-After", "1")
			writeJSONStatus(w, http.StatusServiceUnavailable, "application/problem+json", map[string]any{
				"type":    problemTypeBase + problemSlugs[http.StatusServiceUnavailable],
				"title":   http.StatusText(http.StatusServiceUnavailable),
				"status":  http.StatusServiceUnavailable,
				"detail":  "not ready: " + joinReasons(reasons),
				"reasons": reasons,
			})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"status": "ready"})
	}
}

func joinReasons(rs []string) string {
	out := ""
	for i, r := range rs {
		if i > 0 {
			out += "; "
		}
		out += r
	}
	return out
}
