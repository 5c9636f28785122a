package history

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cuasd/cuasd/gate"
)

// errStop ends an iteration early; it is never returned to a caller.
var errStop = errors.New("stop")

// Known reports whether any point of track id is stored.
func (s *Store) Known(ctx context.Context, id string) (bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.heldOf(id)) > 0 {
		return true, nil
	}
	var one int
	// Every bucket the store holds, newest first, a seek each, until one
	// holds the track: a live track is found at once, an unknown one
	// costs a seek per bucket of the retention (2,016 for 7 days).
	err := s.db.QueryRowContext(ctx, sqlTrackAny, firstBucket, lastBucket, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, wrap("known", err)
}

// Count is the number of points of track id in [from, to].
func (s *Store) Count(ctx context.Context, id string, from, to time.Time) (int, error) {
	tx, held, err := s.trackSnapshot(ctx, id)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }()
	return count(ctx, tx, id, from, to, held)
}

// readSnapshot is a read transaction whose view of the database is fixed
// now (SQLite in WAL mode fixes it at a transaction's first read). Taken
// under s.mu with a copy of what is held in memory, it lets a query read
// both consistently after releasing s.mu — so that a slow HTTP client
// never holds up the recorder.
func (s *Store) readSnapshot(ctx context.Context) (*sql.Tx, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, wrap("query", err)
	}
	var one int
	if err := tx.QueryRowContext(ctx, `SELECT 1 FROM chunks LIMIT 1`).Scan(&one); err != nil && !errors.Is(err, sql.ErrNoRows) {
		_ = tx.Rollback()
		return nil, wrap("query", err)
	}
	return tx, nil
}

// trackSnapshot is a read snapshot and a copy of the chunks held for
// track id.
func (s *Store) trackSnapshot(ctx context.Context, id string) (*sql.Tx, []chunk, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	tx, err := s.readSnapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	// Copies, with their packed points: the filling chunk grows after
	// the lock is released, and a compaction hands the chunks' buffers
	// to the chunks that follow (Store.free).
	cs := s.heldOf(id)
	held := make([]chunk, len(cs))
	for i, c := range cs {
		held[i] = *c
		held[i].data = slices.Clone(c.data)
	}
	return tx, held, nil
}

// chunkFrom is the earliest start of a chunk that may hold points at or
// after lo: maxChunkSpan before it, no earlier than the earliest time
// (a window from 1677-09-21, which the API accepts, wrapped round to
// 2262 and found nothing).
func chunkFrom(lo int64) int64 {
	if lo < math.MinInt64+int64(maxChunkSpan) {
		return math.MinInt64
	}
	return lo - int64(maxChunkSpan)
}

func count(ctx context.Context, tx *sql.Tx, id string, from, to time.Time, held []chunk) (int, error) {
	lo, hi := from.UnixNano(), to.UnixNano()
	rows, err := tx.QueryContext(ctx, sqlTrackWindow, bucketOf(chunkFrom(lo)), bucketOf(hi), id, chunkFrom(lo), hi, lo)
	if err != nil {
		return 0, wrap("count", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var t0, t1 int64
		var k int
		var data []byte
		if err := rows.Scan(&t0, &t1, &k, &data); err != nil {
			return 0, wrap("count", err)
		}
		if t0 >= lo && t1 <= hi { // wholly inside: no need to unpack
			n += k
			continue
		}
		r := newPointReader(data, t0, id)
		for {
			t, ok, err := r.nextTime()
			if err != nil {
				return 0, wrap("count", err)
			}
			if !ok {
				break
			}
			if t >= lo && t <= hi {
				n++
			}
		}
	}
	for _, c := range held {
		if c.overlaps(lo, hi) {
			_ = c.points(func(p *Point) error { // our own packing: cannot fail
				if t := p.Time.UnixNano(); t >= lo && t <= hi {
					n++
				}
				return nil
			})
		}
	}
	return n, wrap("count", rows.Err())
}

// trackPoints calls fn for the points of track id in [from, to] in time
// order: its chunks', then those held in memory (which are newer).
func trackPoints(ctx context.Context, tx *sql.Tx, id string, from, to time.Time, held []chunk, fn func(*Point) error) error {
	lo, hi := from.UnixNano(), to.UnixNano()
	rows, err := tx.QueryContext(ctx, sqlTrackPoints, bucketOf(chunkFrom(lo)), bucketOf(hi), id, chunkFrom(lo), hi, lo)
	if err != nil {
		return wrap("track", err)
	}
	defer rows.Close()
	inWindow := func(p *Point) error {
		if p.Time.Before(from) || p.Time.After(to) {
			return nil
		}
		return fn(p)
	}
	for rows.Next() {
		var t0 int64
		var data []byte
		if err := rows.Scan(&t0, &data); err != nil {
			return wrap("track", err)
		}
		if err := eachPoint(data, t0, id, inWindow); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return wrap("track", err)
	}
	for _, c := range held {
		if !c.overlaps(lo, hi) {
			continue
		}
		if err := c.points(inWindow); err != nil {
			return err
		}
	}
	return nil
}

// Track calls fn for the points of q.ID in [q.From, q.To] in time order,
// thinned to q.MaxPoints when that is smaller than their number, and
// returns how many it passed to fn.
func (s *Store) Track(ctx context.Context, q TrackQuery, fn func(*Point) error) (int, error) {
	tx, held, err := s.trackSnapshot(ctx, q.ID)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }()
	total, err := count(ctx, tx, q.ID, q.From, q.To, held)
	if err != nil || total == 0 {
		return 0, err
	}
	keep := thinner(total, q.MaxPoints)
	i, n := 0, 0
	err = trackPoints(ctx, tx, q.ID, q.From, q.To, held, func(p *Point) error {
		k := keep(i)
		i++
		if !k {
			return nil
		}
		n++
		return fn(p)
	})
	return n, err
}

// thinner returns which of total points (by index) an even thinning to m
// keeps: the first, the last and m-2 evenly spaced between. m ≤ 0 or
// m ≥ total keeps every point.
func thinner(total, m int) func(i int) bool {
	if m <= 0 || m >= total {
		return func(int) bool { return true }
	}
	if m == 1 {
		return func(i int) bool { return i == total-1 }
	}
	k := 0 // the next point to keep is number k of m
	return func(i int) bool {
		// Index of the k-th kept point, rounded to nearest.
		target := (k*(total-1)*2 + (m - 1)) / (2 * (m - 1))
		if i != target {
			return false
		}
		k++
		return true
	}
}

// areaWhere is the chunk filter of an area query and its arguments: the
// chunks starting in the window (or up to maxChunkSpan before it) and
// ending in or after it, whose box meets the query's. The window is a
// range of the primary key; areaOrder sorts by +track_id, which no index
// can deliver, so that the planner never trades the window's range for a
// walk of an index led by track_id over every track to save the sort (the
// old chunks_track was one; chunks_bucket is led by time).
func areaWhere(q AreaQuery) (string, []any) {
	lo, hi := q.From.UnixNano(), q.To.UnixNano()
	where := `FROM chunks WHERE t0 BETWEEN ? AND ? AND t1 >= ?`
	args := []any{chunkFrom(lo), hi, lo}
	if b := q.BBox; b != nil && b.CrossesAntimeridian() {
		where += ` AND (max_lon >= ? OR min_lon <= ?) AND max_lat >= ? AND min_lat <= ?`
		args = append(args, b[0], b[2], b[1], b[3])
	} else if b != nil {
		where += ` AND max_lon >= ? AND min_lon <= ? AND max_lat >= ? AND min_lat <= ?`
		args = append(args, b[0], b[2], b[1], b[3])
	}
	if q.Protocol != "" {
		where += ` AND protocol = ?`
		args = append(args, q.Protocol)
	}
	if c := q.Cursor; c != nil {
		where += ` AND (track_id, t1) >= (?, ?)`
		args = append(args, c.TrackID, c.Time.UnixNano())
	}
	return where, args
}

const areaOrder = `ORDER BY +track_id, t0`

// areaMatch reports whether point p is in q's window, box and protocol
// and at or after its cursor.
func areaMatch(q *AreaQuery, p *Point) bool {
	if p.Time.Before(q.From) || p.Time.After(q.To) || (q.Protocol != "" && p.Protocol != q.Protocol) {
		return false
	}
	if b := q.BBox; b != nil && !gate.InBBox((*[4]float64)(b), p.Lat, p.Lon) {
		return false
	}
	if c := q.Cursor; c != nil {
		return p.TrackID > c.TrackID || p.TrackID == c.TrackID && !p.Time.Before(c.Time)
	}
	return true
}

// heldArea is the points held in memory that q selects, by track, the
// tracks in order.
func (s *Store) heldArea(q *AreaQuery) (ids []string, pts map[string][]Point) {
	pts = map[string][]Point{}
	lo, hi := q.From.UnixNano(), q.To.UnixNano()
	for _, t := range s.holding {
		id := t.id
		for _, c := range t.held {
			if !c.overlaps(lo, hi) || (q.Protocol != "" && c.protocol != q.Protocol) {
				continue
			}
			_ = c.points(func(p *Point) error { // our own packing: cannot fail
				if areaMatch(q, p) {
					pts[id] = append(pts[id], *p)
				}
				return nil
			})
		}
		if len(pts[id]) > 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, pts
}

// heldMerge passes the points held in memory that an area query selects
// into the stream of its chunks' points, in track order.
type heldMerge struct {
	ids  []string
	pts  map[string][]Point
	emit func(*Point) error
}

// before passes the held points of the tracks before upTo (and of upTo
// itself when inclusive).
func (h *heldMerge) before(upTo string, inclusive bool) error {
	for len(h.ids) > 0 && (h.ids[0] < upTo || inclusive && h.ids[0] == upTo) {
		for i := range h.pts[h.ids[0]] {
			if err := h.emit(&h.pts[h.ids[0]][i]); err != nil {
				return err
			}
		}
		h.ids = h.ids[1:]
	}
	return nil
}

// rest passes every held point not passed yet.
func (h *heldMerge) rest() error {
	if len(h.ids) == 0 {
		return nil
	}
	return h.before(h.ids[len(h.ids)-1], true)
}

// area calls fn for every point q selects (ignoring q.Limit), ordered by
// track and time: the chunks' and, after each track's, its points held in
// memory, merged in track order.
func (s *Store) area(ctx context.Context, q AreaQuery, fn func(*Point) error) error {
	s.mu.RLock()
	tx, err := s.readSnapshot(ctx)
	ids, pts := s.heldArea(&q) // copies
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	held := &heldMerge{ids: ids, pts: pts, emit: fn}
	where, args := areaWhere(q)
	rows, err := tx.QueryContext(ctx, `SELECT track_id, t0, data `+where+` `+areaOrder, args...)
	if err != nil {
		return wrap("area", err)
	}
	defer rows.Close()
	match := func(p *Point) error {
		if !areaMatch(&q, p) {
			return nil
		}
		return fn(p)
	}
	prev := ""
	for rows.Next() {
		var id string
		var t0 int64
		var data []byte
		if err := rows.Scan(&id, &t0, &data); err != nil {
			return wrap("area", err)
		}
		if id != prev {
			// Held points of the track just read (newer than its chunks),
			// then of tracks that have none here and sort before id.
			if err := held.before(prev, true); err != nil {
				return err
			}
			if err := held.before(id, false); err != nil {
				return err
			}
			prev = id
		}
		if err := eachPoint(data, t0, id, match); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return wrap("area", err)
	}
	return held.rest()
}

// Next returns the cursor of the page after the one q selects (the first
// point past q.Limit), or nil when q's page is the last. Asked before the
// page is written, so that it can go into the response's headers.
func (s *Store) Next(ctx context.Context, q AreaQuery) (*Cursor, error) {
	var c *Cursor
	n := 0
	err := s.area(ctx, q, func(p *Point) error {
		if n == q.Limit {
			c = &Cursor{TrackID: p.TrackID, Time: p.Time}
			return errStop
		}
		n++
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	return c, nil
}

// Area calls fn for at most q.Limit points of q, ordered by track and time.
func (s *Store) Area(ctx context.Context, q AreaQuery, fn func(*Point) error) error {
	n := 0
	err := s.area(ctx, q, func(p *Point) error {
		if n == q.Limit {
			return errStop
		}
		n++
		return fn(p)
	})
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// String encodes the cursor for a URL (opaque to clients).
func (c Cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.Time.UnixNano(), 10) + "|" + c.TrackID))
}

// ParseCursor decodes a cursor made by Cursor.String.
func ParseCursor(s string) (*Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, &Error{Op: "cursor", Err: errors.New("not a cursor from a previous page")}
	}
	ts, id, ok := strings.Cut(string(b), "|")
	t, err := strconv.ParseInt(ts, 10, 64)
	if !ok || err != nil || id == "" {
		return nil, &Error{Op: "cursor", Err: errors.New("not a cursor from a previous page")}
	}
	return &Cursor{TrackID: id, Time: time.Unix(0, t).UTC()}, nil
}
