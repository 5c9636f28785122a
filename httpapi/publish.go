package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/ingest"
)

// publishOption is the part of the decode requests that also sends the
// decoded input into the pipeline ("publish": true), as if a receiver named
// Sensor had heard it now.
type publishOption struct {
	Publish bool   `json:"publish"`
	Sensor  string `json:"sensor"`
}

// check validates the option; it needs the sensor role when publishing.
func (p *publishOption) check(r *http.Request, d Deps) (int, string, []FieldError) {
	if !p.Publish {
		if p.Sensor != "" {
			return http.StatusBadRequest, `"sensor" only applies with "publish": true`, []FieldError{{Field: "sensor", Message: "needs publish"}}
		}
		return 0, "", nil
	}
	if p.Sensor == "" {
		p.Sensor = "http-decode"
	}
	if !bus.ValidSensor(p.Sensor) {
		return http.StatusBadRequest, "sensor must be " + bus.SensorRule, []FieldError{{Field: "sensor", Message: "invalid"}}
	}
	if d.Auth != nil && roleFrom(r) < RoleSensor {
		return http.StatusForbidden, `"publish": true needs the sensor role`, nil
	}
	if d.Publisher == nil {
		return http.StatusServiceUnavailable, "the pipeline publisher is not available", nil
	}
	return 0, "", nil
}

// writeDecoded writes a decoder's answer; with publish it first publishes
// frames and adds "published": {accepted, duplicates, subject} — after
// JetStream acknowledged them, as the ingest endpoint does.
func writeDecoded(w http.ResponseWriter, r *http.Request, d Deps, protocol string, opt publishOption, frames []ingest.Frame, resp any) {
	if !opt.Publish {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	res, err := d.Publisher.PublishFrames(r.Context(), "http-decode", protocol, opt.Sensor, frames)
	if err != nil {
		var bp interface{ Backpressure() bool }
		w.Header().Set("Retry-After", "1")
		if storeFull(w, r, err, "decoded, none stored") {
			return
		}
		if errors.As(err, &bp) && bp.Backpressure() {
			writeProblem(w, r, http.StatusTooManyRequests, "decoded, but the pipeline is saturated and did not store the frames; retry")
			return
		}
		if errors.Is(err, ingest.ErrNotRunning) {
			writeProblem(w, r, http.StatusServiceUnavailable, "decoded, but the service's inputs are starting or stopping and nothing was stored; retry")
			return
		}
		writeProblem(w, r, http.StatusServiceUnavailable, "decoded, but JetStream did not acknowledge the frames; retry")
		return
	}
	b, err := json.Marshal(resp)
	var m map[string]json.RawMessage
	if err != nil || json.Unmarshal(b, &m) != nil {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	pb, _ := json.Marshal(map[string]any{"accepted": res.Accepted, "duplicates": res.Duplicates, "subject": res.Subject})
	m["published"] = pb
	writeJSON(w, http.StatusOK, m)
}
