package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/cuasd/cuasd/fusion/swarm"
)

// LiveTracks gives GET /v1/swarm/topology the current positions of the
// live tracks.
type LiveTracks interface {
	// LivePositions returns one swarm.Track (id, position, altitude and
	// velocity when known) per live track with a position.
	LivePositions(ctx context.Context) ([]swarm.Track, error)
}

// Limits of the swarm endpoints: the benchmarked size, and a body that
// holds it.
const (
	swarmMaxTracks = 100_000
	swarmMaxBody   = 16 << 20
)

// swarmRequest is the body of POST /v1/swarm/topology.
type swarmRequest struct {
	Tracks            []swarmTrack `json:"tracks"`
	LinkM             *float64     `json:"link_m"`
	MinSize           *int         `json:"min_size"`
	MaxAltDiffM       *float64     `json:"max_alt_diff_m"`
	MaxSpeedDiffMps   *float64     `json:"max_speed_diff_mps"`
	MaxHeadingDiffDeg *float64     `json:"max_heading_diff_deg"`
	Edges             *bool        `json:"edges"`
	MaxEdges          *int         `json:"max_edges"`
	EdgeOffset        *int         `json:"edge_offset"`
}

type swarmTrack struct {
	TrackID    *string  `json:"track_id"`
	ID         *string  `json:"id"` // deprecated alias of track_id (issue 24)
	Lat        *float64 `json:"lat"`
	Lon        *float64 `json:"lon"`
	AltM       *float64 `json:"alt_m"`
	SpeedMps   *float64 `json:"speed_mps"`
	HeadingDeg *float64 `json:"heading_deg"`
}

// handleSwarmTopologyPost serves POST /v1/swarm/topology over the tracks
// in the body.
func handleSwarmTopologyPost(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req swarmRequest
		if !decodeJSON(w, r, &req, swarmMaxBody) {
			return
		}
		if req.Tracks == nil {
			writeProblem(w, r, http.StatusBadRequest, "tracks is required", FieldError{Field: "tracks", Message: "is required: an array of {track_id, lat, lon}"})
			return
		}
		if len(req.Tracks) > swarmMaxTracks {
			writeProblem(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("at most %d tracks per request", swarmMaxTracks),
				FieldError{Field: "tracks", Message: fmt.Sprintf("at most %d tracks", swarmMaxTracks)})
			return
		}
		tracks, errs := swarmTracks(req.Tracks)
		if len(errs) > 0 {
			writeFieldProblems(w, r, http.StatusBadRequest, errs)
			return
		}
		opt, errs := req.options()
		if len(errs) > 0 {
			writeFieldProblems(w, r, http.StatusBadRequest, errs)
			return
		}
		writeTopology(w, r, d, tracks, opt, true)
	}
}

// maxSwarmTrackErrors bounds the field errors named for the tracks of one
// request.
const maxSwarmTrackErrors = 100

// swarmTracks converts the request's tracks, naming the first
// maxSwarmTrackErrors invalid fields.
func swarmTracks(in []swarmTrack) ([]swarm.Track, []FieldError) {
	var errs []FieldError
	add := func(field, msg string) {
		if len(errs) < maxSwarmTrackErrors {
			errs = append(errs, FieldError{Field: field, Message: msg})
		}
	}
	tracks := make([]swarm.Track, len(in))
	for i, t := range in {
		p := fmt.Sprintf("tracks[%d].", i)
		id, same := trackIDOf(t.TrackID, t.ID)
		if !same {
			add(p+"track_id", "and its deprecated alias id differ; give track_id only")
		}
		t.ID = id
		for _, f := range [...]struct {
			name string
			ok   bool
		}{{"track_id", !same || t.ID != nil}, {"lat", t.Lat != nil}, {"lon", t.Lon != nil}} {
			if !f.ok {
				add(p+f.name, "is required")
			}
		}
		tracks[i] = t.track()
	}
	return tracks, errs
}

// track is the swarm.Track of the fields given (t.ID already settled to
// the one id).
func (t *swarmTrack) track() swarm.Track {
	var tr swarm.Track
	if t.ID != nil {
		tr.ID = *t.ID
	}
	if t.Lat != nil && t.Lon != nil {
		tr.Lat, tr.Lon = *t.Lat, *t.Lon
	}
	if t.AltM != nil {
		tr.AltM, tr.HasAlt = *t.AltM, true
	}
	if t.SpeedMps != nil && t.HeadingDeg != nil {
		tr.SpeedMps, tr.HeadingDeg, tr.HasVelocity = *t.SpeedMps, *t.HeadingDeg, true
	}
	return tr
}

// options are the detection options of the body, with every invalid one
// named.
func (req *swarmRequest) options() (swarm.Options, []FieldError) {
	var errs []FieldError
	opt := swarm.Options{CollectEdges: req.Edges == nil || *req.Edges}
	setF := func(dst *float64, p *float64) {
		if p != nil {
			*dst = *p
		}
	}
	setF(&opt.LinkM, req.LinkM)
	setF(&opt.MaxAltDiffM, req.MaxAltDiffM)
	setF(&opt.MaxSpeedDiffMps, req.MaxSpeedDiffMps)
	setF(&opt.MaxHeadingDiffDeg, req.MaxHeadingDiffDeg)
	if req.LinkM != nil && *req.LinkM == 0 {
		errs = append(errs, FieldError{Field: "link_m", Message: "must be above 0"})
	}
	if req.MaxEdges != nil {
		opt.MaxEdges = *req.MaxEdges
		if *req.MaxEdges < 1 {
			errs = append(errs, FieldError{Field: "max_edges", Message: fmt.Sprintf("must be an integer in [1, %d]", swarm.MaxMaxEdges)})
		}
	}
	if req.EdgeOffset != nil {
		opt.EdgeOffset = *req.EdgeOffset
	}
	if req.MinSize != nil {
		opt.MinSize = *req.MinSize
		if *req.MinSize < 2 {
			errs = append(errs, FieldError{Field: "min_size", Message: "must be an integer of at least 2"})
		}
	}
	return opt, errs
}

// handleSwarmTopologyGet serves GET /v1/swarm/topology over the live
// tracks; the query takes link_m, min_size, max_alt_diff_m,
// max_speed_diff_mps, max_heading_diff_deg and edges.
func handleSwarmTopologyGet(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.Live == nil {
			unavailable(w, r, "the live track picture")
			return
		}
		opt, errs := swarmQueryOptions(r.URL.Query())
		if len(errs) > 0 {
			writeFieldProblems(w, r, http.StatusBadRequest, errs)
			return
		}
		tracks, err := d.Live.LivePositions(r.Context())
		if err != nil {
			unavailable(w, r, "the live track picture")
			return
		}
		// The query was parsed above; the options' bounds (link_m at most
		// swarm.MaxLinkM, non-negative differences) are checked here so
		// that they are the caller's 400, and a validation failure inside
		// writeTopology can then only be in the live tracks: ours, a 500.
		if err := opt.Validate(); err != nil {
			var se *swarm.Error
			errors.As(err, &se)
			writeFieldProblems(w, r, http.StatusBadRequest, swarmFields(se))
			return
		}
		writeTopology(w, r, d, tracks, opt, false)
	}
}

// swarmQueryParams are the query parameters of GET /v1/swarm/topology.
var swarmQueryParams = map[string]bool{"link_m": true, "min_size": true, "max_alt_diff_m": true,
	"max_speed_diff_mps": true, "max_heading_diff_deg": true, "edges": true, "max_edges": true, "edge_offset": true}

// swarmQueryOptions parses the detection options of the query, naming
// every unknown or invalid parameter.
func swarmQueryOptions(q url.Values) (swarm.Options, []FieldError) {
	var errs []FieldError
	opt := swarm.Options{CollectEdges: true}
	for k := range q {
		if !swarmQueryParams[k] {
			errs = append(errs, FieldError{Field: k, Message: "unknown query parameter"})
		}
	}
	errs = swarmQueryFloats(q, &opt, errs)
	if s := q.Get("min_size"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 2 {
			errs = append(errs, FieldError{Field: "min_size", Message: "must be an integer of at least 2"})
		}
		opt.MinSize = n
	}
	for _, f := range [...]struct {
		name string
		dst  *int
	}{{"max_edges", &opt.MaxEdges}, {"edge_offset", &opt.EdgeOffset}} {
		if s := q.Get(f.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 || (f.name == "max_edges" && n == 0) {
				errs = append(errs, FieldError{Field: f.name, Message: "must be a non-negative integer (max_edges at least 1)"})
			}
			*f.dst = n
		}
	}
	if s := q.Get("edges"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			errs = append(errs, FieldError{Field: "edges", Message: "must be true or false"})
		}
		opt.CollectEdges = b
	}
	return opt, errs
}

// swarmQueryFloats parses the distance and difference parameters into opt,
// appending to errs every one that is not a number (or a link_m not above
// 0).
func swarmQueryFloats(q url.Values, opt *swarm.Options, errs []FieldError) []FieldError {
	for _, f := range [...]struct {
		name string
		dst  *float64
	}{{"link_m", &opt.LinkM}, {"max_alt_diff_m", &opt.MaxAltDiffM},
		{"max_speed_diff_mps", &opt.MaxSpeedDiffMps}, {"max_heading_diff_deg", &opt.MaxHeadingDiffDeg}} {
		s := q.Get(f.name)
		if s == "" {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		switch {
		case err != nil || !isFinite(v):
			errs = append(errs, FieldError{Field: f.name, Message: "must be a number"})
		case f.name == "link_m" && v <= 0:
			errs = append(errs, FieldError{Field: f.name, Message: "must be above 0"})
		default:
			*f.dst = v
		}
	}
	return errs
}

// writeTopology answers with the topology of tracks. Invalid input is the
// caller's fault (400) when the caller sent the tracks, and ours (500)
// when they came from the live picture.
func writeTopology(w http.ResponseWriter, r *http.Request, d Deps, tracks []swarm.Track, opt swarm.Options, fromCaller bool) {
	top, err := swarm.Detect(tracks, opt)
	if err != nil {
		var se *swarm.Error
		if errors.As(err, &se) && se.OverBudget {
			// Valid input whose grouping needs more work than one request
			// may take; the same input would be refused again.
			writeFieldProblems(w, r, http.StatusUnprocessableEntity, swarmFields(se))
			return
		}
		if errors.As(err, &se) && fromCaller {
			writeFieldProblems(w, r, http.StatusBadRequest, swarmFields(se))
			return
		}
		d.Logger.Error("swarm topology", "err", err)
		writeProblem(w, r, http.StatusInternalServerError, "swarm detection failed on the live tracks: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, top)
}

func swarmFields(se *swarm.Error) []FieldError { return append([]FieldError(nil), se.Fields...) }

// trackIDOf is a request's track id: track_id, or its deprecated alias id
// (one name per concept: a track is track_id everywhere). same is false
// when both are given and differ.
func trackIDOf(trackID, id *string) (_ *string, same bool) {
	switch {
	case trackID == nil:
		return id, true
	case id != nil && *id != *trackID:
		return trackID, false
	}
	return trackID, true
}
