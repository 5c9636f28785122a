package httpapi

import (
	"net/http"

	"github.com/cuasd/cuasd/gate"
)

// handleLambda serves GET /v1/lambda: the 13 axes with their weights,
// inputs and defaults, the decision bands, the governance caps and the
// statement that Λ is a decision aid, not a proof of safety. The
// definitions come from the same table Evaluate uses, under the policy
// the service runs (--gate-policy).
func handleLambda(d Deps) http.HandlerFunc {
	defs := gate.Define(d.Policy)
	return func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, defs)
	}
}
