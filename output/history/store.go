package history

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver ("sqlite")
)

// schema is the one table of history. The table is clustered by time
// (WITHOUT ROWID, primary key (t, track_id)): an area query, which reads
// many tracks' rows in a window, reads one contiguous range and filters
// the box on the rows themselves; one track's window goes through
// points_track and reads its rows, which sit close together within the
// window. The key also makes a repeated point (the same event heard
// twice, a restart replaying) a no-op.
const schema = `
CREATE TABLE IF NOT EXISTS points (
	t        INTEGER NOT NULL,
	track_id TEXT NOT NULL,
	lat      REAL NOT NULL,
	lon      REAL NOT NULL,
	alt      REAL,
	alt_kind TEXT NOT NULL DEFAULT '',
	speed    REAL,
	heading  REAL,
	vrate    REAL,
	protocol TEXT NOT NULL DEFAULT '',
	sensor   TEXT NOT NULL DEFAULT '',
	decision TEXT NOT NULL DEFAULT '',
	lambda   REAL,
	PRIMARY KEY (t, track_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS points_track ON points (track_id, t);
`

const pointCols = `track_id, t, lat, lon, alt, alt_kind, speed, heading, vrate, protocol, sensor, decision, lambda`

// Store is the history database. It is safe for concurrent use: SQLite in
// WAL mode lets queries run while the recorder writes.
type Store struct {
	db   *sql.DB
	path string
}

// Open opens (creating if needed) the history database at path. WAL with
// synchronous=NORMAL: a committed batch survives a killed process; a power
// cut can lose the last commits, like JetStream's default sync interval.
func Open(path string) (*Store, error) {
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(NORMAL)", "busy_timeout(10000)", "cache_size(-32768)"} {
		q.Add("_pragma", p)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, wrap("open", err)
	}
	db.SetMaxOpenConns(4)
	if _, err := db.Exec(schema); err != nil {
		_ = db.Close()
		return nil, wrap("open "+path, err)
	}
	return &Store{db: db, path: path}, nil
}

// Close closes the database.
func (s *Store) Close() error { return wrap("close", s.db.Close()) }

// insertRows is how many points one INSERT statement carries: one
// statement per point spends most of its time in database/sql and the
// statement machinery rather than in SQLite's b-tree.
const insertRows = 64

// insertSQL is the statement for n points.
func insertSQL(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT OR IGNORE INTO points (` + pointCols + `) VALUES `)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`(?,?,?,?,?,?,?,?,?,?,?,?,?)`)
	}
	return b.String()
}

var insertFull = insertSQL(insertRows)

// Insert stores pts in one transaction and returns how many were new (a
// point already stored for the same track and time is ignored).
func (s *Store) Insert(ctx context.Context, pts []Point) (int, error) {
	if len(pts) == 0 {
		return 0, nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, wrap("insert", err)
	}
	defer func() { _ = tx.Rollback() }()
	var full *sql.Stmt
	if len(pts) >= insertRows {
		if full, err = tx.PrepareContext(ctx, insertFull); err != nil {
			return 0, wrap("insert", err)
		}
	}
	n := 0
	args := make([]any, 0, 13*insertRows)
	for len(pts) > 0 {
		k := min(len(pts), insertRows)
		args = args[:0]
		for i := range pts[:k] {
			p := &pts[i]
			args = append(args, p.TrackID, p.Time.UnixNano(), p.Lat, p.Lon, p.AltM, p.AltKind,
				p.SpeedMps, p.HeadingDeg, p.VRateMps, p.Protocol, p.Sensor, p.Decision, p.Lambda)
		}
		var res sql.Result
		if k == insertRows {
			res, err = full.ExecContext(ctx, args...)
		} else {
			res, err = tx.ExecContext(ctx, insertSQL(k), args...)
		}
		if err != nil {
			return 0, wrap("insert", err)
		}
		m, _ := res.RowsAffected()
		n += int(m)
		pts = pts[k:]
	}
	return n, wrap("insert", tx.Commit())
}

// Known reports whether any point of track id is stored.
func (s *Store) Known(ctx context.Context, id string) (bool, error) {
	var one int
	err := s.db.QueryRowContext(ctx, `SELECT 1 FROM points WHERE track_id = ? LIMIT 1`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, wrap("known", err)
}

// Count is the number of points of track id in [from, to].
func (s *Store) Count(ctx context.Context, id string, from, to time.Time) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM points WHERE track_id = ? AND t BETWEEN ? AND ?`,
		id, from.UnixNano(), to.UnixNano()).Scan(&n)
	return n, wrap("count", err)
}

// Track calls fn for the points of q.ID in [q.From, q.To] in time order,
// thinned to q.MaxPoints when that is smaller than their number, and
// returns how many it passed to fn.
func (s *Store) Track(ctx context.Context, q TrackQuery, fn func(*Point) error) (int, error) {
	total, err := s.Count(ctx, q.ID, q.From, q.To)
	if err != nil || total == 0 {
		return 0, err
	}
	// LIMIT total keeps the set the count saw even while new points of
	// the track arrive at the end of the window.
	rows, err := s.db.QueryContext(ctx, `SELECT `+pointCols+` FROM points WHERE track_id = ? AND t BETWEEN ? AND ? ORDER BY t LIMIT ?`,
		q.ID, q.From.UnixNano(), q.To.UnixNano(), total)
	if err != nil {
		return 0, wrap("track", err)
	}
	defer rows.Close()
	keep := thinner(total, q.MaxPoints)
	var p Point
	n := 0
	for i := 0; rows.Next(); i++ {
		if !keep(i) {
			continue
		}
		if err := scanPoint(rows, &p); err != nil {
			return n, err
		}
		if err := fn(&p); err != nil {
			return n, err
		}
		n++
	}
	return n, wrap("track", rows.Err())
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

type scanner interface{ Scan(dest ...any) error }

func scanPoint(r scanner, p *Point) error {
	var t int64
	var alt, speed, heading, vrate, lambda sql.NullFloat64
	if err := r.Scan(&p.TrackID, &t, &p.Lat, &p.Lon, &alt, &p.AltKind, &speed, &heading, &vrate,
		&p.Protocol, &p.Sensor, &p.Decision, &lambda); err != nil {
		return wrap("scan", err)
	}
	p.Time = time.Unix(0, t).UTC()
	p.AltM, p.SpeedMps, p.HeadingDeg, p.VRateMps, p.Lambda = nullable(alt), nullable(speed), nullable(heading), nullable(vrate), nullable(lambda)
	return nil
}

func nullable(v sql.NullFloat64) *float64 {
	if !v.Valid {
		return nil
	}
	f := v.Float64
	return &f
}

// areaWhere is the filter of an area query and its arguments. The window
// is a range of the primary key; areaOrder sorts by +track_id, which no
// index can deliver, so that the planner never trades the window's range
// for a walk of points_track over every track to save the sort.
func areaWhere(q AreaQuery) (string, []any) {
	where := `FROM points WHERE t BETWEEN ? AND ?`
	args := []any{q.From.UnixNano(), q.To.UnixNano()}
	if b := q.BBox; b != nil && b.CrossesAntimeridian() {
		where += ` AND (lon >= ? OR lon <= ?) AND lat BETWEEN ? AND ?`
		args = append(args, b[0], b[2], b[1], b[3])
	} else if b != nil {
		where += ` AND lon BETWEEN ? AND ? AND lat BETWEEN ? AND ?`
		args = append(args, b[0], b[2], b[1], b[3])
	}
	if q.Protocol != "" {
		where += ` AND protocol = ?`
		args = append(args, q.Protocol)
	}
	if c := q.Cursor; c != nil {
		where += ` AND (track_id, t) >= (?, ?)`
		args = append(args, c.TrackID, c.Time.UnixNano())
	}
	return where, args
}

const areaOrder = `ORDER BY +track_id, t`

// Next returns the cursor of the page after the one q selects (the first
// point past q.Limit), or nil when q's page is the last. Asked before the
// page is written, so that it can go into the response's headers.
func (s *Store) Next(ctx context.Context, q AreaQuery) (*Cursor, error) {
	where, args := areaWhere(q)
	// Counting up to one past the page reads the window once without
	// sorting it; only a window that has a next page pays for the sort.
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 `+where+` LIMIT ?)`, append(args, q.Limit+1)...).Scan(&n); err != nil {
		return nil, wrap("area", err)
	}
	if n <= q.Limit {
		return nil, nil
	}
	var c Cursor
	var t int64
	err := s.db.QueryRowContext(ctx, `SELECT track_id, t `+where+` `+areaOrder+` LIMIT 1 OFFSET ?`,
		append(args, q.Limit)...).Scan(&c.TrackID, &t)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, wrap("area", err)
	}
	c.Time = time.Unix(0, t).UTC()
	return &c, nil
}

// Area calls fn for at most q.Limit points of q, ordered by track and time.
func (s *Store) Area(ctx context.Context, q AreaQuery, fn func(*Point) error) error {
	where, args := areaWhere(q)
	rows, err := s.db.QueryContext(ctx, `SELECT `+pointCols+` `+where+` `+areaOrder+` LIMIT ?`, append(args, q.Limit)...)
	if err != nil {
		return wrap("area", err)
	}
	defer rows.Close()
	var p Point
	for rows.Next() {
		if err := scanPoint(rows, &p); err != nil {
			return err
		}
		if err := fn(&p); err != nil {
			return err
		}
	}
	return wrap("area", rows.Err())
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

// Stats are the size of the store.
type Stats struct {
	Points int64
	// Bytes is the space the data occupies (pages in use, free pages
	// excluded: SQLite reuses them rather than shrinking the file).
	Bytes int64
	// Oldest and Newest are the times of the oldest and newest point
	// (zero when empty).
	Oldest, Newest time.Time
}

// Stats measures the store.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	var pages, free, size int64
	for _, q := range []struct {
		sql string
		dst *int64
	}{{"PRAGMA page_count", &pages}, {"PRAGMA freelist_count", &free}, {"PRAGMA page_size", &size}} {
		if err := s.db.QueryRowContext(ctx, q.sql).Scan(q.dst); err != nil {
			return st, wrap("stats", err)
		}
	}
	st.Bytes = (pages - free) * size
	var lo, hi sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT min(t), max(t) FROM points`).Scan(&lo, &hi); err != nil {
		return st, wrap("stats", err)
	}
	if lo.Valid {
		st.Oldest, st.Newest = time.Unix(0, lo.Int64).UTC(), time.Unix(0, hi.Int64).UTC()
	}
	return st, nil
}

// Prune applies the retention limits: it deletes every point older than
// now − maxAge (maxAge ≤ 0: no age limit), then, while the data occupies
// more than maxBytes (≤ 0: no size limit), the oldest twentieth of the
// remaining time span. It returns how many points it deleted.
func (s *Store) Prune(ctx context.Context, now time.Time, maxAge time.Duration, maxBytes int64) (int64, error) {
	var deleted int64
	if maxAge > 0 {
		res, err := s.db.ExecContext(ctx, `DELETE FROM points WHERE t < ?`, now.Add(-maxAge).UnixNano())
		if err != nil {
			return 0, wrap("prune", err)
		}
		n, _ := res.RowsAffected()
		deleted += n
	}
	for i := 0; maxBytes > 0 && i < 40; i++ {
		st, err := s.Stats(ctx)
		if err != nil || st.Bytes <= maxBytes || st.Oldest.IsZero() {
			return deleted, err
		}
		cut := st.Oldest.UnixNano() + max(st.Newest.Sub(st.Oldest).Nanoseconds()/20, 1)
		res, err := s.db.ExecContext(ctx, `DELETE FROM points WHERE t < ?`, cut)
		if err != nil {
			return deleted, wrap("prune", err)
		}
		n, _ := res.RowsAffected()
		deleted += n
	}
	return deleted, nil
}

// checkpoint folds the write-ahead log into the database file, so that
// the WAL does not grow without bound between SQLite's own checkpoints.
func (s *Store) checkpoint(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
	return wrap("checkpoint", err)
}
