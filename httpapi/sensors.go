package httpapi

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"github.com/cuasd/cuasd/ingest/sensors"
)

// SensorRegistry is what the sensor endpoints read (issue 25):
// *sensors.Registry.
type SensorRegistry interface {
	List() []sensors.Sensor
	Get(id string) (sensors.Sensor, bool)
}

// handleSensorsList serves GET /v1/sensors: every field sensor the inputs
// have heard or were configured with.
func handleSensorsList(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if newQuery(r).failed(w) { // it takes no parameters: a filter given is not silently ignored
			return
		}
		list := []sensors.Sensor{}
		if d.Sensors != nil {
			list = append(list, d.Sensors.List()...)
		}
		writeJSON(w, http.StatusOK, map[string]any{"sensors": list, "count": len(list)})
	}
}

// handleSensorGet serves GET /v1/sensors/{id}.
func handleSensorGet(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if newQuery(r).failed(w) {
			return
		}
		id, err := url.PathUnescape(chi.URLParam(r, "id"))
		if err != nil {
			writeProblem(w, r, http.StatusBadRequest, "the sensor id is not a valid URL path segment", FieldError{Field: "id", Message: "bad escape"})
			return
		}
		var s sensors.Sensor
		ok := false
		if d.Sensors != nil {
			s, ok = d.Sensors.Get(id)
		}
		if !ok {
			writeProblem(w, r, http.StatusNotFound, fmt.Sprintf("no sensor %q; GET /v1/sensors lists them", clip(id)))
			return
		}
		writeJSON(w, http.StatusOK, s)
	}
}
