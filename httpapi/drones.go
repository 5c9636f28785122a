package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/cuasd/cuasd/reference"
)

// DroneCatalog is the drone database as the HTTP layer reads it.
// *reference.DB implements it; wire it with
//
//	db, err := reference.Default()
//	deps.Drones = db
type DroneCatalog interface {
	// Select returns the records matching every non-empty filter field; an
	// unknown value is a *reference.Error listing the allowed values.
	Select(f reference.Filter) ([]reference.Drone, error)
	// Drone returns the record with the given id.
	Drone(id string) (reference.Drone, bool)
	// Len is the number of records in the database.
	Len() int
}

// droneFilterParams are the query parameters of GET /v1/drones/database.
var droneFilterParams = []string{"side", "group", "country", "role", "telemetry", "q"}

// dronesListResponse is the body of GET /v1/drones/database.
type dronesListResponse struct {
	Drones  []reference.Drone `json:"drones"`
	Count   int               `json:"count"`
	Total   int               `json:"total"`
	Filters map[string]string `json:"filters"`
}

// singleParams checks that the query names only allowed parameters, each at
// most once, and returns them. On failure it has written a 400 problem.
func singleParams(w http.ResponseWriter, r *http.Request, allowed []string) (url.Values, bool) {
	q := r.URL.Query()
	for k, v := range q {
		if !slices.Contains(allowed, k) {
			writeProblem(w, r, http.StatusBadRequest,
				"unknown query parameter "+k+"; allowed: "+strings.Join(allowed, ", "),
				FieldError{Field: k, Message: "unknown parameter; allowed: " + strings.Join(allowed, ", ")})
			return nil, false
		}
		if len(v) > 1 {
			writeProblem(w, r, http.StatusBadRequest, "give the query parameter "+k+" once",
				FieldError{Field: k, Message: "repeated parameter"})
			return nil, false
		}
	}
	return q, true
}

// filterProblem turns a reference filter error into a 400 naming the field
// and the values that would have been accepted.
func filterProblem(w http.ResponseWriter, r *http.Request, err error) {
	var e *reference.Error
	if errors.As(err, &e) {
		msg := "unknown value " + quote(e.Value) + "; allowed: " + strings.Join(e.Allowed, ", ")
		writeProblem(w, r, http.StatusBadRequest, e.Field+": "+msg, FieldError{Field: e.Field, Message: msg})
		return
	}
	writeProblem(w, r, http.StatusInternalServerError, "the drone database could not be queried")
}

func quote(s string) string { return `"` + s + `"` }

// handleDronesList serves GET /v1/drones/database.
func handleDronesList(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.Drones == nil {
			unavailable(w, r, "the drone database")
			return
		}
		q, ok := singleParams(w, r, droneFilterParams)
		if !ok {
			return
		}
		f := reference.Filter{Side: q.Get("side"), Group: q.Get("group"), Country: q.Get("country"),
			Role: q.Get("role"), Telemetry: q.Get("telemetry"), Q: q.Get("q")}
		drones, err := d.Drones.Select(f)
		if err != nil {
			filterProblem(w, r, err)
			return
		}
		applied := map[string]string{}
		for _, k := range droneFilterParams {
			if v := strings.TrimSpace(q.Get(k)); v != "" {
				applied[k] = v
			}
		}
		writeJSON(w, http.StatusOK, dronesListResponse{Drones: drones, Count: len(drones), Total: d.Drones.Len(), Filters: applied})
	}
}

// handleDroneGet serves GET /v1/drones/{id}.
func handleDroneGet(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.Drones == nil {
			unavailable(w, r, "the drone database")
			return
		}
		id, ok := pathParam(w, r, "id")
		if !ok {
			return
		}
		dr, ok := d.Drones.Drone(id)
		if !ok {
			writeProblem(w, r, http.StatusNotFound, "no drone with id "+quote(id)+"; list them at /v1/drones/database")
			return
		}
		writeJSON(w, http.StatusOK, dr)
	}
}
