package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/output/history"
)

// HistoryReader reads the recorded track history (output/history.Recorder).
type HistoryReader interface {
	Known(ctx context.Context, id string) (bool, error)
	Count(ctx context.Context, id string, from, to time.Time) (int, error)
	Track(ctx context.Context, q history.TrackQuery, fn func(*history.Point) error) (int, error)
	Next(ctx context.Context, q history.AreaQuery) (*history.Cursor, error)
	Area(ctx context.Context, q history.AreaQuery, fn func(*history.Point) error) error
}

// History answer limits: what one answer holds at most. A track's window
// with more points must be narrowed or thinned (max_points); an area
// query pages with a cursor within a window of at most MaxHistoryWindow.
const (
	MaxHistoryTrackPoints = 200_000
	MaxHistoryPage        = 100_000
	DefaultHistoryPage    = 10_000
	MaxHistoryWindow      = 24 * time.Hour
	DefaultHistoryWindow  = time.Hour
)

var historyFormats = []string{"json", "geojson", "kml", "csv", "csvt"}

// historyFormat is the format= parameter, else what Accept asks for.
func historyFormat(q *queryChecker) history.Format {
	if f := q.str("format", historyFormats...); f != "" {
		return history.Format(f)
	}
	return history.FormatForAccept(q.r.Header.Get("Accept"))
}

// timeParam parses an RFC 3339 time parameter; def when absent.
func (q *queryChecker) timeParam(name string, def time.Time) time.Time {
	v := q.vals.Get(name)
	if v == "" {
		return def
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		q.errs = append(q.errs, FieldError{Field: name, Message: fmt.Sprintf("must be an RFC 3339 time such as 2026-11-26T05:00:00Z or 2026-11-26T05:00:00.250+01:00, got %q", clip(v))})
		return def
	}
	if t.Before(minStoredTime) || t.After(maxStoredTime) {
		// Times are stored as int64 Unix nanoseconds: outside this range
		// they overflowed and a query answered 200 with nothing (issue 32).
		q.errs = append(q.errs, FieldError{Field: name, Message: fmt.Sprintf("must be between %s and %s (Unix nanoseconds), got %q",
			minStoredTime.Format(time.RFC3339), maxStoredTime.Format(time.RFC3339), clip(v))})
		return def
	}
	return t.UTC()
}

// minStoredTime and maxStoredTime bound the times the history can hold,
// int64 Unix nanoseconds (1677-09-21 to 2262-04-11).
var (
	minStoredTime = time.Unix(0, math.MinInt64).UTC()
	maxStoredTime = time.Unix(0, math.MaxInt64).UTC()
)

// window reads to (default defTo) and from (default defFrom(to)),
// checking their order.
func (q *queryChecker) window(defFrom func(to time.Time) time.Time, defTo time.Time) (from, to time.Time) {
	to = q.timeParam("to", defTo)
	from = q.timeParam("from", defFrom(to))
	if from.After(to) {
		q.errs = append(q.errs, FieldError{Field: "from", Message: fmt.Sprintf("from (%s) is after to (%s)", from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano))})
	}
	return from, to
}

// historyHeaders sets the content type and the download file name.
func historyHeaders(w http.ResponseWriter, f history.Format, name string) {
	w.Header().Set("Content-Type", f.ContentType())
	w.Header().Set("Content-Disposition", `attachment; filename="`+fileSafe(name)+"."+f.Ext()+`"`)
	w.Header().Set("X-Content-Type-Options", "nosniff")
}

// fileSafe keeps letters, digits, '-' and '_' of a name ("adsb:4CA1FA" →
// "adsb_4CA1FA"), so that it is a safe file name in any operating system.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, clip(s))
}

// historyFailed answers a store error before the body was started.
func historyFailed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, history.ErrUnavailable) {
		unavailable(w, r, "the history store")
		return
	}
	writeProblem(w, r, http.StatusServiceUnavailable, "the history store failed to answer; retry")
}

// handleTrackHistory serves GET /v1/tracks/{id}/history.
func handleTrackHistory(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := url.PathUnescape(chi.URLParam(r, "id"))
		if err != nil {
			writeProblem(w, r, http.StatusBadRequest, "the track id is not a valid URL path segment", FieldError{Field: "id", Message: "bad escape"})
			return
		}
		id = fusion.TrackID(id)
		q := newQuery(r, "from", "to", "max_points", "format")
		tq := history.TrackQuery{ID: id, MaxPoints: q.intIn("max_points", 0, 2, MaxHistoryTrackPoints)}
		// By default every point retained, including those a sensor with a
		// fast clock stamped ahead of ours.
		tq.From, tq.To = q.window(func(time.Time) time.Time { return time.Unix(0, 0).UTC() }, time.Now().UTC().Add(24*time.Hour))
		f := historyFormat(q)
		if q.failed(w) {
			return
		}
		if d.History == nil {
			unavailable(w, r, "the track history")
			return
		}
		if !checkTrackWindow(w, r, d, tq) {
			return
		}
		historyHeaders(w, f, id+"-history")
		enc := history.NewEncoder(w, f, true)
		if err := enc.Begin(id); err != nil {
			return
		}
		_, err = d.History.Track(r.Context(), tq, enc.Add)
		if err == nil {
			err = enc.End("")
		}
		if err != nil {
			d.Logger.Warn("history export ended early", "track", id, "err", err, slog.String("request_id", requestIDFrom(r.Context())))
		}
	}
}

// checkTrackWindow answers 404 for a track never recorded (a live track
// whose first positions are not yet recorded has an empty history, not
// none) and 400 for a window holding more than one answer may, else
// reports true.
func checkTrackWindow(w http.ResponseWriter, r *http.Request, d Deps, tq history.TrackQuery) bool {
	h := d.History
	n, err := h.Count(r.Context(), tq.ID, tq.From, tq.To)
	if err != nil {
		historyFailed(w, r, err)
		return false
	}
	if n == 0 {
		known, err := h.Known(r.Context(), tq.ID)
		if err != nil {
			historyFailed(w, r, err)
			return false
		}
		if !known && d.Tracks != nil {
			_, known = d.Tracks.Get(tq.ID)
		}
		if !known {
			writeProblem(w, r, http.StatusNotFound, fmt.Sprintf("no history of track %q (never seen, or older than the retention)", clip(tq.ID)))
			return false
		}
	}
	if n > MaxHistoryTrackPoints && tq.MaxPoints == 0 {
		writeProblem(w, r, http.StatusBadRequest, fmt.Sprintf("the window holds %d points; one answer holds at most %d: narrow from/to or set max_points", n, MaxHistoryTrackPoints),
			FieldError{Field: "max_points", Message: fmt.Sprintf("set at most %d to thin the track evenly", MaxHistoryTrackPoints)})
		return false
	}
	return true
}

// handleHistoryArea serves GET /v1/history.
func handleHistoryArea(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := newQuery(r, "from", "to", "bbox", "protocol", "format", "cursor", "limit")
		aq, f := parseAreaQuery(q)
		if q.failed(w) {
			return
		}
		if d.History == nil {
			unavailable(w, r, "the track history")
			return
		}
		next, err := d.History.Next(r.Context(), aq)
		if err != nil {
			historyFailed(w, r, err)
			return
		}
		nextStr := ""
		if next != nil {
			nextStr = next.String()
			u := *r.URL
			v := u.Query()
			v.Set("cursor", nextStr)
			u.RawQuery = v.Encode()
			w.Header().Set("Link", "<"+u.RequestURI()+`>; rel="next"`)
		}
		historyHeaders(w, f, "history-"+aq.From.Format("20060102T150405Z"))
		enc := history.NewEncoder(w, f, false)
		if err := enc.Begin(""); err != nil {
			return
		}
		err = d.History.Area(r.Context(), aq, enc.Add)
		if err == nil {
			err = enc.End(nextStr)
		}
		if err != nil {
			d.Logger.Warn("history export ended early", "err", err, slog.String("request_id", requestIDFrom(r.Context())))
		}
	}
}

// parseAreaQuery reads the parameters of GET /v1/history: the window
// (default the last hour, at most MaxHistoryWindow), box, protocol,
// cursor, page size and format.
func parseAreaQuery(q *queryChecker) (history.AreaQuery, history.Format) {
	now := time.Now().UTC()
	aq := history.AreaQuery{Protocol: q.str("protocol", protocolEnum...), Limit: q.intIn("limit", DefaultHistoryPage, 1, MaxHistoryPage)}
	aq.From, aq.To = q.window(func(to time.Time) time.Time { return to.Add(-DefaultHistoryWindow) }, now)
	if aq.To.Sub(aq.From) > MaxHistoryWindow {
		q.errs = append(q.errs, FieldError{Field: "from", Message: fmt.Sprintf("the window from %s to %s is longer than the limit of %s: query it in windows of at most %s",
			aq.From.Format(time.RFC3339), aq.To.Format(time.RFC3339), MaxHistoryWindow, MaxHistoryWindow)})
	}
	if s := q.str("bbox"); s != "" {
		bb, err := parseBBox(s)
		if err != nil {
			q.errs = append(q.errs, FieldError{Field: "bbox", Message: err.Error()})
		} else {
			b := history.BBox(*bb)
			aq.BBox = &b
		}
	}
	if s := q.str("cursor"); s != "" {
		c, err := history.ParseCursor(s)
		if err != nil {
			q.errs = append(q.errs, FieldError{Field: "cursor", Message: "not a cursor from a previous page's next_cursor or Link header"})
		}
		aq.Cursor = c
	}
	return aq, historyFormat(q)
}
