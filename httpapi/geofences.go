package httpapi

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/cuasd/cuasd/gate"
)

// ZoneStore holds the geofences and the allow-list; *zones.Store (package
// fusion/zones) implements it over a JetStream KV bucket. Reads come from
// a local snapshot; writes validate with package gate and return a
// *gate.Error (possibly wrapped) for invalid input.
type ZoneStore interface {
	// Geofences lists every geofence, sorted by ID.
	Geofences(ctx context.Context) ([]gate.Geofence, error)
	// Geofence returns one geofence and whether it exists.
	Geofence(ctx context.Context, id string) (gate.Geofence, bool, error)
	// PutGeofence stores g under g.ID and reports whether it is new.
	PutGeofence(ctx context.Context, g gate.Geofence) (created bool, err error)
	// DeleteGeofence removes a geofence and reports whether it existed.
	DeleteGeofence(ctx context.Context, id string) (existed bool, err error)
	// AllowList returns the allow-list in canonical form.
	AllowList(ctx context.Context) (gate.AllowList, error)
	// PutAllowList replaces the allow-list.
	PutAllowList(ctx context.Context, a gate.AllowList) error
	// MatchAllowList reports whether an identity is allow-listed.
	MatchAllowList(ctx context.Context, id gate.Identity) (gate.AllowStatus, error)
}

// zonesMaxBody bounds geofence and allow-list writes: a polygon of
// gate.MaxPolygonPoints positions, or an allow-list of
// gate.MaxAllowEntries identities, fits.
const zonesMaxBody = 4 << 20

// Limits of the stored zones (issue 23): every sweep evaluates each live
// track near a zone against its edges, and a receipt names the zone, so a
// stored polygon has at most MaxZoneVertices positions and the store at
// most MaxZones geofences. Larger is a 422. POST /v1/counter-uas/evaluate,
// a one-off computation, still takes gate.MaxPolygonPoints.
const (
	MaxZoneVertices = 1000
	MaxZones        = 500
)

// geofenceList is the body of GET /v1/geofences: a page in ID order.
type geofenceList struct {
	Geofences  []gate.Geofence `json:"geofences"`
	Count      int             `json:"count"`
	Total      int             `json:"total"`
	NextCursor string          `json:"next_cursor,omitempty"`
}

func handleGeofencesList(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.Zones == nil {
			unavailable(w, r, "the geofence store")
			return
		}
		q := newQuery(r, "limit", "cursor")
		limit := q.intIn("limit", 100, 1, 1000)
		after := ""
		if c := q.str("cursor"); c != "" {
			b, err := base64.RawURLEncoding.DecodeString(c)
			if err != nil || !gate.ValidID(string(b)) {
				q.errs = append(q.errs, FieldError{Field: "cursor", Message: "not a cursor returned by this endpoint"})
			}
			after = string(b)
		}
		if q.failed(w) {
			return
		}
		gs, err := d.Zones.Geofences(r.Context())
		if err != nil {
			zoneStoreProblem(w, r, d, err, "")
			return
		}
		writeJSON(w, http.StatusOK, geofencePage(gs, after, limit))
	}
}

// geofencePage is the page of gs (sorted by ID) after the ID after.
func geofencePage(gs []gate.Geofence, after string, limit int) geofenceList {
	start := 0
	if after != "" {
		start, _ = slices.BinarySearchFunc(gs, after, func(g gate.Geofence, id string) int { return strings.Compare(g.ID, id) })
		if start < len(gs) && gs[start].ID == after {
			start++
		}
	}
	page := gs[start:min(len(gs), start+limit)]
	out := geofenceList{Geofences: append([]gate.Geofence{}, page...), Count: len(page), Total: len(gs)}
	if start+len(page) < len(gs) {
		out.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(page[len(page)-1].ID))
	}
	return out
}

// zoneVertexLimit answers 422 when a polygon has more positions than a
// stored geofence may; it runs before validation, whose cost grows with
// the positions.
func zoneVertexLimit(w http.ResponseWriter, r *http.Request, g *gate.Geofence) bool {
	if g.Polygon != nil {
		n := 0
		for _, ring := range g.Polygon.Coordinates {
			n += len(ring)
		}
		if n > MaxZoneVertices {
			writeProblem(w, r, http.StatusUnprocessableEntity,
				fmt.Sprintf("the polygon has %d positions; a stored geofence may have at most %d (simplify it)", n, MaxZoneVertices),
				FieldError{Field: "polygon.coordinates", Message: fmt.Sprintf("at most %d positions", MaxZoneVertices)})
			return false
		}
	}
	return true
}

// zoneCountLimit answers 422 when a new geofence would exceed MaxZones.
func zoneCountLimit(w http.ResponseWriter, r *http.Request, d Deps, g *gate.Geofence) bool {
	if _, exists, err := d.Zones.Geofence(r.Context(), g.ID); err == nil && !exists {
		gs, err := d.Zones.Geofences(r.Context())
		if err == nil && len(gs) >= MaxZones {
			writeProblem(w, r, http.StatusUnprocessableEntity,
				fmt.Sprintf("%d geofences are stored, the most allowed; delete one first", len(gs)),
				FieldError{Field: "id", Message: fmt.Sprintf("at most %d geofences", MaxZones)})
			return false
		}
	}
	return true
}

func handleGeofenceGet(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.Zones == nil {
			unavailable(w, r, "the geofence store")
			return
		}
		id, ok := pathParam(w, r, "id")
		if !ok {
			return
		}
		g, ok, err := d.Zones.Geofence(r.Context(), id)
		switch {
		case err != nil:
			zoneStoreProblem(w, r, d, err, "")
		case !ok:
			writeProblem(w, r, http.StatusNotFound, fmt.Sprintf("no geofence %q", id))
		default:
			writeJSON(w, http.StatusOK, g)
		}
	}
}

// ZoneVersions is implemented by a ZoneStore that keeps every version of
// every geofence it stored under its digest (fusion/zones does).
type ZoneVersions interface {
	// Version returns the geofence version whose digest (gate.Geofence.Digest)
	// is digest, and whether it is stored.
	Version(ctx context.Context, digest string) (gate.Geofence, bool, error)
}

// handleGeofenceVersion serves GET /v1/geofences/versions/{sha256}: the
// exact zone a decision record names by digest (issue 23), also after the
// zone was changed or deleted, so the decision can be checked again.
func handleGeofenceVersion(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		vs, ok := d.Zones.(ZoneVersions)
		if !ok {
			unavailable(w, r, "the geofence version store")
			return
		}
		digest, ok := pathParam(w, r, "sha256")
		if !ok {
			return
		}
		if !digestPattern.MatchString(digest) {
			writeProblem(w, r, http.StatusBadRequest, "sha256 must be 64 lower-case hex digits",
				FieldError{Field: "sha256", Message: "must be the hex SHA-256 a decision record names"})
			return
		}
		g, ok, err := vs.Version(r.Context(), digest)
		switch {
		case err != nil:
			zoneStoreProblem(w, r, d, err, "")
		case !ok:
			writeProblem(w, r, http.StatusNotFound, fmt.Sprintf("no geofence version %s", digest))
		default:
			writeJSON(w, http.StatusOK, g)
		}
	}
}

var digestPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// handleGeofencePut serves PUT /v1/geofences/{id}: create (201) or replace
// (200) the geofence; the body's id may be omitted but must match the path.
func handleGeofencePut(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.Zones == nil {
			unavailable(w, r, "the geofence store")
			return
		}
		id, ok := pathParam(w, r, "id")
		if !ok {
			return
		}
		var g gate.Geofence
		if !decodeJSON(w, r, &g, zonesMaxBody) {
			return
		}
		if !zoneVertexLimit(w, r, &g) {
			return
		}
		var errs []FieldError
		if !gate.ValidID(id) {
			errs = append(errs, FieldError{Field: "id", Message: "the path id must be 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-'"})
		}
		if g.ID != "" && g.ID != id {
			errs = append(errs, FieldError{Field: "id", Message: fmt.Sprintf("the body's id %q differs from the path's %q", g.ID, id)})
		}
		g.ID = id
		if err := g.Validate(); err != nil {
			errs = append(errs, gateFields("", err)...)
		}
		if len(errs) > 0 {
			writeFieldProblems(w, r, http.StatusBadRequest, errs)
			return
		}
		if !zoneCountLimit(w, r, d, &g) {
			return
		}
		created, err := d.Zones.PutGeofence(r.Context(), g)
		if err != nil {
			zoneStoreProblem(w, r, d, err, "")
			return
		}
		status := http.StatusOK
		if created {
			status = http.StatusCreated
			w.Header().Set("Location", r.URL.Path)
		}
		writeJSON(w, status, g)
	}
}

func handleGeofenceDelete(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.Zones == nil {
			unavailable(w, r, "the geofence store")
			return
		}
		id, ok := pathParam(w, r, "id")
		if !ok {
			return
		}
		existed, err := d.Zones.DeleteGeofence(r.Context(), id)
		switch {
		case err != nil:
			zoneStoreProblem(w, r, d, err, "")
		case !existed:
			writeProblem(w, r, http.StatusNotFound, fmt.Sprintf("no geofence %q", id))
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}
}

func handleAllowlistGet(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.Zones == nil {
			unavailable(w, r, "the allow-list store")
			return
		}
		a, err := d.Zones.AllowList(r.Context())
		if err != nil {
			zoneStoreProblem(w, r, d, err, "")
			return
		}
		writeJSON(w, http.StatusOK, nonNilAllow(a))
	}
}

// handleAllowlistPut serves PUT /v1/allowlist: replace the whole list and
// answer with its canonical form.
func handleAllowlistPut(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if d.Zones == nil {
			unavailable(w, r, "the allow-list store")
			return
		}
		var a gate.AllowList
		if !decodeJSON(w, r, &a, zonesMaxBody) {
			return
		}
		if err := a.Validate(); err != nil {
			writeFieldProblems(w, r, http.StatusBadRequest, gateFields("", err))
			return
		}
		if err := d.Zones.PutAllowList(r.Context(), a); err != nil {
			zoneStoreProblem(w, r, d, err, "")
			return
		}
		writeJSON(w, http.StatusOK, nonNilAllow(a.Normalize()))
	}
}

func nonNilAllow(a gate.AllowList) gate.AllowList {
	for _, l := range []*[]string{&a.UASIDs, &a.ICAO, &a.OperatorIDs} {
		if *l == nil {
			*l = []string{}
		}
	}
	return a
}

// zoneStoreProblem maps a store error: invalid input is 400 naming the
// fields, anything else means the store is unavailable.
func zoneStoreProblem(w http.ResponseWriter, r *http.Request, d Deps, err error, prefix string) {
	var ge *gate.Error
	if errors.As(err, &ge) {
		writeFieldProblems(w, r, http.StatusBadRequest, gateFields(prefix, ge))
		return
	}
	d.Logger.Warn("zone store", "err", err)
	w.Header().Set("Retry-After", "5")
	writeProblem(w, r, http.StatusServiceUnavailable, "the geofence store could not serve this: "+err.Error())
}
