package httpapi

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/fusion"
)

// TrackReader reads the fused track picture.
type TrackReader interface {
	List(f fusion.Filter) []fusion.Track
	Get(id string) (fusion.Track, bool)
}

// queryChecker validates query parameters: unknown names are an error.
type queryChecker struct {
	r    *http.Request
	vals url.Values // r's query, parsed once
	errs []FieldError
}

func newQuery(r *http.Request, allowed ...string) *queryChecker {
	q := &queryChecker{r: r, vals: r.URL.Query()}
	for name, vs := range q.vals {
		if len(vs) > 1 {
			q.errs = append(q.errs, FieldError{Field: name, Message: "repeated parameter; give it once"})
		}
		ok := false
		for _, a := range allowed {
			if name == a {
				ok = true
				break
			}
		}
		switch {
		case ok:
		case len(allowed) == 0:
			q.errs = append(q.errs, FieldError{Field: name, Message: "unknown query parameter; this endpoint takes none"})
		default:
			q.errs = append(q.errs, FieldError{Field: name, Message: "unknown query parameter; allowed: " + strings.Join(allowed, ", ")})
		}
	}
	return q
}

// alias is the value of parameter name, or of its deprecated alias old
// when only that is given; both given with different values is an error.
func (q *queryChecker) alias(name, old string) string {
	v, o := q.vals.Get(name), q.vals.Get(old)
	if v != "" && o != "" && v != o {
		q.errs = append(q.errs, FieldError{Field: old, Message: fmt.Sprintf("deprecated alias of %s, which says %q; give only %s", name, clip(v), name)})
	}
	if v == "" {
		return o
	}
	return v
}

func (q *queryChecker) str(name string, enum ...string) string {
	v := q.vals.Get(name)
	if v == "" || len(enum) == 0 {
		return v
	}
	for _, e := range enum {
		if v == e {
			return v
		}
	}
	q.errs = append(q.errs, FieldError{Field: name, Message: fmt.Sprintf("must be one of %s, got %q", strings.Join(enum, ", "), clip(v))})
	return ""
}

func (q *queryChecker) intIn(name string, def, lo, hi int) int {
	v := q.vals.Get(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		q.errs = append(q.errs, FieldError{Field: name, Message: fmt.Sprintf("must be an integer in [%d, %d], got %q", lo, hi, clip(v))})
		return def
	}
	return n
}

func (q *queryChecker) floatIn(name string, lo, hi float64) (float64, bool) {
	v := q.vals.Get(name)
	if v == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f < lo || f > hi {
		q.errs = append(q.errs, FieldError{Field: name, Message: fmt.Sprintf("must be a number in [%g, %g], got %q", lo, hi, clip(v))})
		return 0, false
	}
	return f, true
}

// failed writes a 400 listing every invalid parameter.
func (q *queryChecker) failed(w http.ResponseWriter) bool {
	if len(q.errs) == 0 {
		return false
	}
	writeProblem(w, q.r, http.StatusBadRequest, q.errs[0].Field+": "+q.errs[0].Message, q.errs...)
	return true
}

var protocolEnum = []string{"adsb", "remoteid", "mavlink", "dji"}

// handleTracksList serves GET /v1/tracks.
func handleTracksList(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := newQuery(r, "protocol", "bbox", "limit")
		f := fusion.Filter{Protocol: q.str("protocol", protocolEnum...), Limit: q.intIn("limit", 1000, 1, 10000)}
		if s := q.str("bbox"); s != "" {
			bb, err := parseBBox(s)
			if err != nil {
				q.errs = append(q.errs, FieldError{Field: "bbox", Message: err.Error()})
			}
			f.BBox = bb
		}
		if q.failed(w) {
			return
		}
		if d.Tracks == nil {
			unavailable(w, r, "the track store")
			return
		}
		tracks := d.Tracks.List(f)
		out := make([]events.Track, len(tracks))
		for i, t := range tracks {
			out[i] = t.View(false)
		}
		writeJSON(w, http.StatusOK, map[string]any{"tracks": out, "count": len(out)})
	}
}

// parseBBox parses min_lon,min_lat,max_lon,max_lat; a box whose min_lon
// is greater than its max_lon is one crossing the antimeridian (RFC 7946
// §5.2), for the live tracks as for their history.
func parseBBox(s string) (*[4]float64, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return nil, fmt.Errorf("must be min_lon,min_lat,max_lon,max_lat")
	}
	var bb [4]float64
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("value %d is not a number", i+1)
		}
		bb[i] = v
	}
	if !bboxInRange(bb) {
		return nil, fmt.Errorf("must satisfy -180 ≤ min_lon, max_lon ≤ 180 and -90 ≤ min_lat ≤ max_lat ≤ 90 (min_lon > max_lon is a box across the antimeridian)")
	}
	return &bb, nil
}

// bboxInRange reports whether both longitudes are in [-180, 180] and the
// latitudes in [-90, 90], south to north.
func bboxInRange(bb [4]float64) bool {
	lonOK := func(v float64) bool { return v >= -180 && v <= 180 }
	return lonOK(bb[0]) && lonOK(bb[2]) && bb[1] >= -90 && bb[3] <= 90 && bb[1] <= bb[3]
}

// handleTrackGet serves GET /v1/tracks/{id}.
func handleTrackGet(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if newQuery(r).failed(w) { // it takes no parameters: one given is not silently ignored
			return
		}
		if d.Tracks == nil {
			unavailable(w, r, "the track store")
			return
		}
		raw := chi.URLParam(r, "id")
		id, err := url.PathUnescape(raw)
		if err != nil {
			writeProblem(w, r, http.StatusBadRequest, "the track id is not a valid URL path segment", FieldError{Field: "id", Message: "bad escape"})
			return
		}
		id = fusion.TrackID(id)
		t, ok := d.Tracks.Get(id)
		if !ok {
			writeProblem(w, r, http.StatusNotFound, fmt.Sprintf("no live track %q (tracks expire after their TTL)", clip(id)))
			return
		}
		writeJSON(w, http.StatusOK, t.View(true))
	}
}
