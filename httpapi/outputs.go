package httpapi

import (
	"net/http"

	"github.com/cuasd/cuasd/output"
)

// handleOutputs lists every sink of every output (issue 18: CoT/TAK
// sinks): connected or not, the last error, events sent, dropped and
// failed. Without the outputs wired it answers 503, never an invented
// empty list.
func handleOutputs(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.Outputs == nil {
			unavailable(w, r, "the output status")
			return
		}
		sinks := d.Outputs()
		if sinks == nil {
			sinks = []output.SinkStatus{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"outputs": sinks, "count": len(sinks)})
	}
}
