package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/gate/board"
)

// ThreatBoard is the live board of evaluated tracks.
type ThreatBoard interface {
	Snapshot() *board.Snapshot
	// Subscribe signals after each sweep that changed the board.
	Subscribe() (<-chan struct{}, func())
}

type boardJSON struct {
	Threats    []events.Threat `json:"threats"`
	Count      int             `json:"count"`
	Total      int             `json:"total"`
	NextCursor string          `json:"next_cursor,omitempty"`
	Generated  time.Time       `json:"generated_at"`
	// Stale is true when the board is older than its threshold: the gate
	// is falling behind and the entries may no longer be current.
	Stale     bool    `json:"stale"`
	LagS      float64 `json:"lag_s"`
	Geofences int     `json:"geofences"`
	Statement string  `json:"statement"`
}

// boardQuery is the parsed filter of the board endpoints.
type boardQuery struct {
	minLambda float64
	geofence  string
	protocol  string
	decision  string
	limit     int
	offset    int
}

func parseBoardQuery(w http.ResponseWriter, r *http.Request, stream bool) (boardQuery, bool) {
	allowed := []string{"min_lambda", "geofence", "protocol", "decision", "limit", "cursor"}
	def, maxLimit := 100, 1000
	if stream {
		allowed, def = []string{"min_lambda", "protocol", "decision", "geofence", "limit", "access_token"}, 200
	}
	q := newQuery(r, allowed...)
	var bq boardQuery
	bq.minLambda, _ = q.floatIn("min_lambda", 0, 1)
	bq.geofence = q.str("geofence")
	bq.protocol = q.str("protocol", protocolEnum...)
	bq.decision = q.str("decision", "monitor", "alert", "intercept-recommended")
	bq.limit = q.intIn("limit", def, 1, maxLimit)
	if c := q.str("cursor"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		n, err2 := strconv.Atoi(string(b))
		if err != nil || err2 != nil || n < 0 {
			q.errs = append(q.errs, FieldError{Field: "cursor", Message: "not a cursor returned by this endpoint"})
		}
		bq.offset = n
	}
	return bq, !q.failed(w)
}

func (bq *boardQuery) page(s *board.Snapshot, withAxes bool) boardJSON {
	out := boardJSON{Threats: []events.Threat{}, Generated: s.Generated, Geofences: s.Zones, Statement: gate.Statement}
	for i := range s.Entries {
		e := &s.Entries[i]
		if e.Result.Lambda.Score < bq.minLambda ||
			(bq.geofence != "" && e.Geofence.ID != bq.geofence) ||
			(bq.decision != "" && e.Result.Decision.String() != bq.decision) ||
			(bq.protocol != "" && !slices.Contains(e.Track.Protocols, bq.protocol)) {
			continue
		}
		out.Total++
		if out.Total <= bq.offset || len(out.Threats) >= bq.limit {
			continue
		}
		out.Threats = append(out.Threats, e.Threat(withAxes))
	}
	out.Count = len(out.Threats)
	if next := bq.offset + out.Count; next < out.Total {
		out.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(next)))
	}
	return out
}

// staleReporter is the part of a board that knows how old it is
// (*board.Gate).
type staleReporter interface {
	Staleness() (lag time.Duration, stale bool)
}

// markStale fills in the board's age.
func markStale(out *boardJSON, b ThreatBoard) {
	if sr, ok := b.(staleReporter); ok {
		lag, stale := sr.Staleness()
		out.Stale, out.LagS = stale, math.Round(lag.Seconds()*1000)/1000
	}
}

// handleThreatsActive serves GET /v1/threats/active.
func handleThreatsActive(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		bq, ok := parseBoardQuery(w, r, false)
		if !ok || !boardReady(w, r, d, bq.geofence) {
			return
		}
		out := bq.page(d.Threats.Snapshot(), true)
		markStale(&out, d.Threats)
		writeJSON(w, http.StatusOK, out)
	}
}

// knownGeofence answers 404 when the geofence filter names a zone the
// store does not hold: an empty list would read as "nothing near it".
func knownGeofence(w http.ResponseWriter, r *http.Request, d Deps, id string) bool {
	if id == "" || d.Zones == nil {
		return true
	}
	_, ok, err := d.Zones.Geofence(r.Context(), id)
	switch {
	case err != nil:
		zoneStoreProblem(w, r, d, err, "")
		return false
	case !ok:
		writeProblem(w, r, http.StatusNotFound, fmt.Sprintf("no geofence %q; list them at /v1/geofences", clip(id)),
			FieldError{Field: "geofence", Message: "unknown geofence"})
		return false
	}
	return true
}

// boardReady answers 503 without a threat board and 404 for an unknown
// geofence filter; it reports whether the board can be served.
func boardReady(w http.ResponseWriter, r *http.Request, d Deps, geofence string) bool {
	if d.Threats == nil {
		unavailable(w, r, "the threat board")
		return false
	}
	return knownGeofence(w, r, d, geofence)
}

// startEventStream answers an event stream's headers; it reports whether
// to stream (not for HEAD, which gets the headers of the stream only).
func startEventStream(w http.ResponseWriter, r *http.Request) bool {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return r.Method != http.MethodHead
}

// handleThreatsStream serves GET /v1/threats/stream as Server-Sent Events:
// an "board" event after every change, and a comment every 15 s.
func handleThreatsStream(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		bq, ok := parseBoardQuery(w, r, true)
		if !ok {
			return
		}
		if !boardReady(w, r, d, bq.geofence) {
			return
		}
		rc := http.NewResponseController(w)
		if !startEventStream(w, r) {
			return
		}
		ch, cancel := d.Threats.Subscribe()
		defer cancel()
		send := func() bool {
			out := bq.page(d.Threats.Snapshot(), true)
			markStale(&out, d.Threats)
			b, _ := json.Marshal(out)
			_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if _, err := fmt.Fprintf(w, "retry: 2000\nevent: board\ndata: %s\n\n", b); err != nil {
				return false
			}
			return rc.Flush() == nil
		}
		if send() {
			streamBoard(w, r, rc, ch, send)
		}
	}
}

// streamBoard sends the board on every change and at least every 5 s, and
// a keep-alive comment every 15 s, until the client goes or a write fails.
func streamBoard(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, ch <-chan struct{}, send func() bool) {
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	heartbeat := time.NewTicker(5 * time.Second)
	defer heartbeat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ch:
			if !send() {
				return
			}
		case <-heartbeat.C:
			// At least every 5 s, as documented, even when idle.
			if !send() {
				return
			}
		case <-keep.C:
			_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}
