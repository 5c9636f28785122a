package httpapi

import (
	"context"
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/cuasd/cuasd/output/alert"
)

// AlertStore reads alerts and their delivery status (package output/alert).
// It is nil when no rule file is configured.
type AlertStore interface {
	List(ctx context.Context, f alert.Filter) ([]alert.Record, error)
	Get(ctx context.Context, id string) (alert.Record, bool, error)
}

// handleAlertsList is GET /v1/alerts: newest first, filtered by state,
// rule and geofence. The geofence is `geofence` as in /v1/threats/active;
// `zone` is its deprecated alias (issue 24, item 10).
func handleAlertsList(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := newQuery(r, "state", "rule", "geofence", "zone", "limit")
		f := alert.Filter{State: q.str("state", alert.StateOpen, alert.StateUpdate, alert.StateResolved),
			Rule: q.str("rule"), Zone: q.alias("geofence", "zone"), Limit: q.intIn("limit", 100, 1, 1000)}
		if q.failed(w) {
			return
		}
		if d.Alerts == nil {
			// Not an error: there are no alerts because there are no rules.
			writeJSON(w, http.StatusOK, map[string]any{"alerts": []alert.Record{}, "count": 0, "configured": false})
			return
		}
		list, err := d.Alerts.List(r.Context(), f)
		if err != nil {
			unavailable(w, r, "the alert store")
			return
		}
		if list == nil {
			list = []alert.Record{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"alerts": list, "count": len(list), "configured": true})
	}
}

// handleAlertGet is GET /v1/alerts/{id}.
func handleAlertGet(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.Alerts == nil {
			writeProblem(w, r, http.StatusNotFound, "alerts are not configured (start cuasd serve with --alerts FILE)")
			return
		}
		id := chi.URLParam(r, "id")
		a, ok, err := d.Alerts.Get(r.Context(), id)
		switch {
		case err != nil:
			unavailable(w, r, "the alert store")
		case !ok:
			writeProblem(w, r, http.StatusNotFound, fmt.Sprintf("no alert %q (ids look like al-0123abcd…; alerts are kept 7 days)", clip(id)))
		default:
			writeJSON(w, http.StatusOK, a)
		}
	}
}
