package history

import (
	"context"
	"database/sql"
	"time"
)

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

// Stats measures the store (after writing the points held in memory as
// chunks).
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.compact(ctx); err != nil {
		return Stats{}, err
	}
	return s.stats(ctx)
}

func (s *Store) stats(ctx context.Context) (Stats, error) {
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
	var lo, hi, n sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT min(t0), max(t1), sum(n) FROM chunks`).Scan(&lo, &hi, &n); err != nil {
		return st, wrap("stats", err)
	}
	if lo.Valid {
		st.Oldest, st.Newest, st.Points = time.Unix(0, lo.Int64).UTC(), time.Unix(0, hi.Int64).UTC(), n.Int64
	}
	return st, nil
}

// Prune applies the retention limits: it deletes every point older than
// now − maxAge (maxAge ≤ 0: no age limit), then, while the data occupies
// more than maxBytes (≤ 0: no size limit), the oldest twentieth of the
// remaining time span. It returns how many points it deleted.
func (s *Store) Prune(ctx context.Context, now time.Time, maxAge time.Duration, maxBytes int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.compact(ctx); err != nil {
		return 0, err
	}
	var deleted int64
	if maxAge > 0 {
		n, err := s.deleteBefore(ctx, now.Add(-maxAge).UnixNano())
		if err != nil {
			return 0, err
		}
		deleted += n
	}
	for i := 0; maxBytes > 0 && i < 40; i++ {
		st, err := s.stats(ctx)
		if err != nil || st.Bytes <= maxBytes || st.Oldest.IsZero() {
			return deleted, err
		}
		cut := st.Oldest.UnixNano() + max(st.Newest.Sub(st.Oldest).Nanoseconds()/20, 1)
		n, err := s.deleteBefore(ctx, cut)
		if err != nil {
			return deleted, err
		}
		deleted += n
	}
	return deleted, nil
}

// deleteBefore deletes every point older than cut (Unix ns): the chunks
// that end before it, and the older points of those that straddle it
// (written again without them). s.mu is held; nothing is held in memory.
func (s *Store) deleteBefore(ctx context.Context, cut int64) (int64, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, wrap("prune", err)
	}
	defer func() { _ = tx.Rollback() }()
	var whole sql.NullInt64
	// t0 < cut bounds both to a range of the primary key: without it,
	// every minute's retention would read the whole table.
	if err := tx.QueryRowContext(ctx, `SELECT sum(n) FROM chunks WHERE t0 < ? AND t1 < ?`, cut, cut).Scan(&whole); err != nil {
		return 0, wrap("prune", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM chunks WHERE t0 < ? AND t1 < ?`, cut, cut); err != nil {
		return 0, wrap("prune", err)
	}
	deleted := whole.Int64
	rows, err := tx.QueryContext(ctx, `SELECT track_id, t0, data FROM chunks WHERE t0 BETWEEN ? AND ? AND t1 >= ?`, cut-int64(maxChunkSpan), cut-1, cut)
	if err != nil {
		return 0, wrap("prune", err)
	}
	keep := map[string][]Point{}
	for rows.Next() {
		var id string
		var t0 int64
		var data []byte
		if err := rows.Scan(&id, &t0, &data); err != nil {
			rows.Close()
			return 0, wrap("prune", err)
		}
		err := eachPoint(data, t0, id, func(p *Point) error {
			if p.Time.UnixNano() < cut {
				deleted++
			} else {
				keep[id] = append(keep[id], *p)
			}
			return nil
		})
		if err != nil {
			rows.Close()
			return 0, err
		}
	}
	rows.Close()
	if _, err := tx.ExecContext(ctx, `DELETE FROM chunks WHERE t0 BETWEEN ? AND ? AND t1 >= ?`, cut-int64(maxChunkSpan), cut-1, cut); err != nil {
		return 0, wrap("prune", err)
	}
	for _, pts := range keep {
		if err := s.writeChunks(ctx, tx, chunksOf(pts, s.chunkBytes)); err != nil {
			return 0, err
		}
	}
	s.pruneTracks() // tracks may have lost every chunk
	return deleted, wrap("prune", tx.Commit())
}

// checkpoint folds the write-ahead log into the database file, so that
// the WAL does not grow without bound between SQLite's own checkpoints.
func (s *Store) checkpoint(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
	return wrap("checkpoint", err)
}

// migrate moves the points of a database written by the first layout
// (one row per point in table points) into chunks, and drops that table.
func (s *Store) migrate(ctx context.Context) error {
	var one int
	err := s.db.QueryRowContext(ctx, `SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'points'`).Scan(&one)
	if err == sql.ErrNoRows {
		return nil
	}
	if err != nil {
		return wrap("migrate", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT track_id, t, lat, lon, alt, alt_kind, speed, heading, vrate, protocol, sensor, decision, lambda FROM points ORDER BY track_id, t`)
	if err != nil {
		return wrap("migrate", err)
	}
	// Rows are read on their own connection while Insert writes: the
	// table being read is not the one written.
	var batch []Point
	for rows.Next() {
		var p Point
		if err := scanOldPoint(rows, &p); err != nil {
			rows.Close()
			return err
		}
		if batch = append(batch, p); len(batch) == 1<<16 {
			if _, err := s.Insert(ctx, batch); err != nil {
				rows.Close()
				return err
			}
			batch = batch[:0]
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return wrap("migrate", err)
	}
	if _, err := s.Insert(ctx, batch); err != nil {
		return err
	}
	if err := s.Compact(ctx); err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `DROP TABLE points`)
	return wrap("migrate", err)
}

func scanOldPoint(r *sql.Rows, p *Point) error {
	var t int64
	var alt, speed, heading, vrate, lambda sql.NullFloat64
	if err := r.Scan(&p.TrackID, &t, &p.Lat, &p.Lon, &alt, &p.AltKind, &speed, &heading, &vrate,
		&p.Protocol, &p.Sensor, &p.Decision, &lambda); err != nil {
		return wrap("migrate", err)
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
