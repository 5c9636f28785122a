package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/ledger"
)

// evaluateMaxBody bounds POST /v1/counter-uas/evaluate: a geofence polygon
// of gate.MaxPolygonPoints positions fits.
const evaluateMaxBody = 1 << 20

// evaluateRequest is the body of POST /v1/counter-uas/evaluate: the interface contract's
// track and geofence, with optional fields that feed more of the 13 axes.
// Pointers tell a missing field from a zero.
type evaluateRequest struct {
	Track *evalTrack `json:"track"`
	// Geofence is given inline, or GeofenceID names a stored one.
	Geofence   *gate.Geofence `json:"geofence"`
	GeofenceID *string        `json:"geofence_id"`

	samples []gate.Sample // the validated history
}

type evalTrack struct {
	TrackID         *string          `json:"track_id"`
	ID              *string          `json:"id"` // deprecated alias of track_id (issue 24)
	Lat             *float64         `json:"lat"`
	Lon             *float64         `json:"lon"`
	AltM            *float64         `json:"alt_m"`
	HeightAGLM      *float64         `json:"height_agl_m"`
	SpeedMps        *float64         `json:"speed_mps"`
	HeadingDeg      *float64         `json:"heading_deg"`
	VerticalRateMps *float64         `json:"vertical_rate_mps"`
	Identity        *gate.Identity   `json:"identity"`
	Side            *string          `json:"side"`
	SwarmSize       *int             `json:"swarm_size"`
	Sensors         *int             `json:"sensors"`
	Protocols       *int             `json:"protocols"`
	EvidenceAgeS    *float64         `json:"evidence_age_s"`
	Compliance      *gate.Compliance `json:"compliance"`
	Warnings        []string         `json:"warnings"`
	History         []evalSample     `json:"history"`
}

// evalSample is one past position of the track, oldest first.
type evalSample struct {
	T   *time.Time `json:"t"`
	Lat *float64   `json:"lat"`
	Lon *float64   `json:"lon"`
}

// Limits of the optional evaluate fields.
const (
	maxEvalCount      = 10_000
	maxEvalWarnings   = 100
	maxEvalHistory    = 10_000
	maxEvalWarningLen = 128
	// maxRecordInputBytes is the largest geofence, and the largest history,
	// copied into a decision record; a larger one is recorded by its
	// SHA-256 digest so that the record stays under the ledger's 64 KiB.
	maxRecordInputBytes = 16 << 10
)

// handleEvaluate serves POST /v1/counter-uas/evaluate: the haversine
// geofence check, the 13-axis Λ and the decision, recorded in the ledger.
// The answer carries the receipt; no decision is returned unrecorded.
func handleEvaluate(d Deps) http.HandlerFunc {
	policy := d.Policy
	if policy == (gate.Policy{}) {
		policy = gate.DefaultPolicy()
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if d.Ledger == nil {
			unavailable(w, r, "the receipt ledger (every decision must be recorded)")
			return
		}
		var req evaluateRequest
		if !decodeJSON(w, r, &req, evaluateMaxBody) {
			return
		}
		in, zone, ok := evaluateInput(w, r, d, &req)
		if !ok {
			return
		}
		res := gate.Evaluate(in, zone, policy)
		at := time.Now().UTC()
		rcpt, ok := recordDecision(w, r, d, &req, &zone, &res, at)
		if !ok {
			return
		}
		writeEvaluateResult(w, r, &res, rcpt, at)
	}
}

// evaluateInput validates the request, resolves its geofence and completes
// the gate's input with the allow-list match and the dwell near the zone.
// On false it has answered.
func evaluateInput(w http.ResponseWriter, r *http.Request, d Deps, req *evaluateRequest) (gate.Input, gate.Geofence, bool) {
	in, errs := req.input()
	zone, zerrs, status := resolveGeofence(r.Context(), d, req)
	errs = append(errs, zerrs...)
	if len(errs) > 0 {
		writeFieldProblems(w, r, status, errs)
		return in, zone, false
	}
	if in.HasIdentity && d.Zones != nil {
		st, err := d.Zones.MatchAllowList(r.Context(), in.Identity)
		if err != nil {
			unavailable(w, r, "the allow-list")
			return in, zone, false
		}
		in.Allow = st
	}
	if in.HasBehaviour {
		in.Behaviour.DwellNearS = gate.DwellNear(req.samples, &zone, gate.DwellBufferM)
	}
	return in, zone, true
}

// recordDecision appends the decision record to the ledger and returns its
// receipt. On false it has answered.
func recordDecision(w http.ResponseWriter, r *http.Request, d Deps, req *evaluateRequest,
	zone *gate.Geofence, res *gate.Result, at time.Time) (ledger.Receipt, bool) {
	record, err := decisionRecord(req, zone, res, d.Version, at)
	if err != nil {
		d.Logger.Error("evaluate: encode decision record", "err", err)
		writeProblem(w, r, http.StatusInternalServerError, "the decision record could not be encoded")
		return ledger.Receipt{}, false
	}
	rcpt, err := d.Ledger.Append(r.Context(), evaluateSubject(r, req), ledger.PredicateTypeGateDecision, record)
	if err != nil {
		if k := ledger.KindOf(err); k == ledger.KindInvalid || k == ledger.KindTooLarge {
			// The record is ours: the ledger refusing it is our bug.
			d.Logger.Error("evaluate: ledger refused the decision record", "err", err)
			writeProblem(w, r, http.StatusInternalServerError, "the decision record was refused by the ledger")
			return ledger.Receipt{}, false
		}
		ledgerProblem(w, r, err, "")
		return ledger.Receipt{}, false
	}
	return rcpt, true
}

// writeEvaluateResult answers with the gate's result object, the time and
// the receipt added.
func writeEvaluateResult(w http.ResponseWriter, r *http.Request, res *gate.Result, rcpt ledger.Receipt, at time.Time) {
	body, err := json.Marshal(res)
	if err != nil {
		writeProblem(w, r, http.StatusInternalServerError, "the result could not be encoded")
		return
	}
	rj, err := json.Marshal(rcpt)
	if err != nil {
		writeProblem(w, r, http.StatusInternalServerError, "the receipt could not be encoded")
		return
	}
	body = bytes.TrimSuffix(body, []byte("}"))
	body = append(body, `,"evaluated_at":"`...)
	body = append(body, at.Format(time.RFC3339Nano)...)
	body = append(body, `","receipt":`...)
	body = append(body, rj...)
	body = append(body, '}')
	writeJSON(w, http.StatusOK, json.RawMessage(body))
}

// writeFieldProblems answers with every invalid field, the detail listing
// them all.
func writeFieldProblems(w http.ResponseWriter, r *http.Request, status int, errs []FieldError) {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Field + ": " + e.Message
	}
	writeProblem(w, r, status, strings.Join(msgs, "; "), errs...)
}

// gateFields turns a gate.Error into FieldErrors under a JSON prefix.
func gateFields(prefix string, err error) []FieldError {
	var ge *gate.Error
	if !errors.As(err, &ge) {
		return []FieldError{{Field: prefix, Message: err.Error()}}
	}
	out := make([]FieldError, 0, len(ge.Fields))
	for _, f := range ge.Fields {
		name := prefix
		switch {
		case f.Field == "":
		case prefix == "" || strings.HasPrefix(f.Field, "["):
			name += f.Field
		default:
			name += "." + f.Field
		}
		out = append(out, FieldError{Field: name, Message: f.Message})
	}
	return out
}

// input validates the track and turns it into a gate.Input, naming every
// invalid field.
func (req *evaluateRequest) input() (gate.Input, []FieldError) {
	var in gate.Input
	t := req.Track
	if t == nil {
		return in, []FieldError{{Field: "track", Message: "is required: {lat, lon, alt_m}"}}
	}
	v := &trackCheck{}
	v.kinematics(t, &in)
	v.identity(t, &in)
	v.counts(t, &in)
	if t.Compliance != nil {
		in.Compliance, in.HasCompliance = *t.Compliance, true
	}
	v.warnings(t, &in)
	if t.History != nil {
		if samples, ok := v.history(t.History); ok {
			in.Behaviour, in.HasBehaviour = gate.Features(samples), true
			req.samples = samples
		}
	}
	return in, v.errs
}

// trackCheck collects the invalid fields of an evaluate track, in the
// order the fields are checked, each named under "track.".
type trackCheck struct {
	errs []FieldError
}

func (v *trackCheck) bad(field, msg string) {
	v.errs = append(v.errs, FieldError{Field: "track." + field, Message: msg})
}

// num is an optional number within [lo, hi]; ok is false when it is
// absent or invalid.
func (v *trackCheck) num(name string, p *float64, lo, hi float64, msg string) (float64, bool) {
	if p == nil {
		return 0, false
	}
	if !isFinite(*p) || *p < lo || *p > hi {
		v.bad(name, msg)
		return 0, false
	}
	return *p, true
}

// count is an optional integer within [lo, maxEvalCount].
func (v *trackCheck) count(name string, p *int, lo int) (int, bool) {
	if p == nil {
		return 0, false
	}
	if *p < lo || *p > maxEvalCount {
		v.bad(name, fmt.Sprintf("must be an integer in [%d, %d]", lo, maxEvalCount))
		return 0, false
	}
	return *p, true
}

// kinematics checks the required position and the optional motion fields.
func (v *trackCheck) kinematics(t *evalTrack, in *gate.Input) {
	if t.Lat == nil {
		v.bad("lat", "is required: latitude in degrees, [-90, 90]")
	} else {
		in.Lat, _ = v.num("lat", t.Lat, -90, 90, "must be a number in [-90, 90]")
	}
	if t.Lon == nil {
		v.bad("lon", "is required: longitude in degrees, [-180, 180]")
	} else {
		in.Lon, _ = v.num("lon", t.Lon, -180, 180, "must be a number in [-180, 180]")
	}
	inf := math.Inf(1)
	in.AltM, in.HasAlt = v.num("alt_m", t.AltM, -inf, inf, "must be a finite number of metres")
	in.HeightAGLM, in.HasHeightAGL = v.num("height_agl_m", t.HeightAGLM, -inf, inf, "must be a finite number of metres")
	in.SpeedMps, in.HasSpeed = v.num("speed_mps", t.SpeedMps, 0, inf, "must be a non-negative number of m/s")
	in.HeadingDeg, in.HasHeading = v.num("heading_deg", t.HeadingDeg, 0, 360, "must be a number of degrees in [0, 360]")
	in.VRateMps, in.HasVRate = v.num("vertical_rate_mps", t.VerticalRateMps, -inf, inf, "must be a finite number of m/s")
	in.EvidenceAgeS, in.HasEvidenceAge = v.num("evidence_age_s", t.EvidenceAgeS, 0, inf, "must be a non-negative number of seconds")
}

// identity checks the track id (and its deprecated alias), the identity
// and the side. It settles t.ID to the one id given, which the receipt's
// subject uses.
func (v *trackCheck) identity(t *evalTrack, in *gate.Input) {
	if id, ok := trackIDOf(t.TrackID, t.ID); !ok {
		v.bad("track_id", "and its deprecated alias id differ; give track_id only")
	} else if t.ID = id; id != nil {
		in.ID = *id
		if *id == "" || len(*id) > 256 {
			v.bad("track_id", "must be 1 to 256 characters")
		}
	}
	if t.Identity != nil {
		in.Identity, in.HasIdentity = *t.Identity, true
		for _, f := range [...]struct{ name, v string }{
			{"uas_id", t.Identity.UASID}, {"icao", t.Identity.ICAO}, {"operator_id", t.Identity.OperatorID},
		} {
			if len(f.v) > 64 {
				v.bad("identity."+f.name, "must be at most 64 characters")
			}
		}
	}
	if t.Side != nil {
		in.Side = gate.Side(*t.Side)
		if !in.Side.Valid() {
			v.bad("side", "must be one of adversary, unknown, dual-use, allied, counter-uas")
		}
	}
}

// counts checks the swarm size and the corroboration, whose sensors and
// protocols counts go together.
func (v *trackCheck) counts(t *evalTrack, in *gate.Input) {
	in.SwarmSize, in.HasSwarm = v.count("swarm_size", t.SwarmSize, 1)
	var okS, okP bool
	in.Sensors, okS = v.count("sensors", t.Sensors, 1)
	in.Protocols, okP = v.count("protocols", t.Protocols, 1)
	switch {
	case okS && okP:
		in.HasCorroboration = true
	case (t.Sensors == nil) != (t.Protocols == nil):
		v.bad(map[bool]string{true: "protocols", false: "sensors"}[t.Sensors != nil], "sensors and protocols go together")
	}
}

// warnings checks the integrity warnings' number and lengths.
func (v *trackCheck) warnings(t *evalTrack, in *gate.Input) {
	if t.Warnings == nil {
		return
	}
	if len(t.Warnings) > maxEvalWarnings {
		v.bad("warnings", fmt.Sprintf("at most %d entries", maxEvalWarnings))
	}
	for i, w := range t.Warnings {
		if len(w) > maxEvalWarningLen {
			v.bad(fmt.Sprintf("warnings[%d]", i), fmt.Sprintf("at most %d bytes", maxEvalWarningLen))
		}
	}
	in.Integrity.Warnings, in.HasIntegrity = t.Warnings, true
}

// history checks the past positions and returns them as samples; ok is
// false when any field of the track, this history's or an earlier one's,
// is invalid (the behaviour features are then not computed).
func (v *trackCheck) history(hist []evalSample) (_ []gate.Sample, ok bool) {
	if len(hist) > maxEvalHistory {
		v.bad("history", fmt.Sprintf("at most %d positions", maxEvalHistory))
		return nil, false
	}
	samples := make([]gate.Sample, 0, len(hist))
	for i, h := range hist {
		p := fmt.Sprintf("history[%d].", i)
		switch {
		case h.T == nil:
			v.bad(p+"t", "is required: an RFC 3339 time")
		case i > 0 && len(samples) == i && h.T.UnixNano() < samples[i-1].UnixNano:
			v.bad(p+"t", "must not be before the previous position's (oldest first)")
		}
		if !within(h.Lat, -90, 90) {
			v.bad(p+"lat", "is required: a number in [-90, 90]")
		}
		if !within(h.Lon, -180, 180) {
			v.bad(p+"lon", "is required: a number in [-180, 180]")
		}
		if len(v.errs) > 0 {
			continue
		}
		samples = append(samples, gate.Sample{UnixNano: h.T.UnixNano(), Lat: *h.Lat, Lon: *h.Lon})
	}
	return samples, len(v.errs) == 0
}

// resolveGeofence returns the inline geofence or the stored one, with the
// status to answer when it is invalid (400, or 404 for an unknown id).
func resolveGeofence(ctx context.Context, d Deps, req *evaluateRequest) (gate.Geofence, []FieldError, int) {
	switch {
	case req.Geofence != nil && req.GeofenceID != nil:
		return gate.Geofence{}, []FieldError{{Field: "geofence_id", Message: "give either geofence or geofence_id, not both"}}, http.StatusBadRequest
	case req.Geofence != nil:
		if err := req.Geofence.Validate(); err != nil {
			return gate.Geofence{}, gateFields("geofence", err), http.StatusBadRequest
		}
		return *req.Geofence, nil, http.StatusBadRequest
	case req.GeofenceID != nil:
		if d.Zones == nil {
			return gate.Geofence{}, []FieldError{{Field: "geofence_id", Message: "no geofence store is configured; send the geofence inline"}}, http.StatusBadRequest
		}
		g, ok, err := d.Zones.Geofence(ctx, *req.GeofenceID)
		if err != nil || !ok {
			return gate.Geofence{}, []FieldError{{Field: "geofence_id", Message: fmt.Sprintf("no geofence %q", *req.GeofenceID)}}, http.StatusNotFound
		}
		return g, nil, http.StatusBadRequest
	}
	return gate.Geofence{}, []FieldError{{Field: "geofence", Message: "is required: {center: [lat, lon], radius_m}"}}, http.StatusBadRequest
}

// evaluateSubject names what the receipt is about: the track, when the
// caller names it, else this request.
func evaluateSubject(r *http.Request, req *evaluateRequest) string {
	if req.Track.ID != nil {
		return "track:" + *req.Track.ID
	}
	if id := requestIDFrom(r.Context()); id != "" {
		return "evaluation:" + id
	}
	return "evaluation"
}

// decisionRecord is the ledger record of one decision: the inputs, the 13
// axis values, Λ, the caps, the decision, the service version, the
// doctrine and the time.
func decisionRecord(req *evaluateRequest, zone *gate.Geofence, res *gate.Result, version string, at time.Time) (json.RawMessage, error) {
	geofence, err := recordInput(zone, map[string]any{"name": zone.Name, "class": zone.Class})
	if err != nil {
		return nil, err
	}
	track := *req.Track
	var history any
	if track.History != nil {
		history, err = recordInput(track.History, map[string]any{"positions": len(track.History)})
		if err != nil {
			return nil, err
		}
		track.History = nil
	}
	rec := gate.NewDecisionRecord(gate.RecordEvaluate, res, version, at)
	rec.Track, rec.History, rec.Geofence, rec.GeofenceID = &track, history, geofence, req.GeofenceID
	return json.Marshal(rec)
}

// recordInput is v as JSON when it is small, else its SHA-256 digest and
// size with the summary fields.
func recordInput(v any, summary map[string]any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(b) <= maxRecordInputBytes {
		return json.RawMessage(b), nil
	}
	sum := sha256.Sum256(b)
	summary["sha256"] = hex.EncodeToString(sum[:])
	summary["bytes"] = len(b)
	return summary, nil
}

// within reports whether p is given, finite and in [lo, hi].
func within(p *float64, lo, hi float64) bool {
	return p != nil && isFinite(*p) && *p >= lo && *p <= hi
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
