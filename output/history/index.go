package history

import (
	"context"
	"database/sql"
	"math"
	"strconv"
	"strings"
	"time"
)

// The track index, chunks_bucket, orders the chunks by (time bucket,
// track, start): within a bucket of bucketNs, a track's chunks are
// together in time order, and the buckets follow one another in time.
//
// Why buckets: an index on (track_id, t0) puts each new chunk's entry at
// the end of its own track's range, so once the index has more leaf pages
// than there are live tracks, every compaction (one chunk a track) wrote
// one 16-KiB index page per track: 2.2 MB of WAL a compaction of 2,209
// tracks over a new store's first ten minutes, 20.3 MB at 300 chunks a
// track (BenchmarkCompaction), towards 35 MB every 30 s a week on. Keyed by bucket first, new entries land
// only in the newest bucket's pages, whatever the store's age: a
// compaction touches at most the pages of one bucket's entries (all live
// tracks' chunks of bucketNs), older buckets never again.
//
// One track's window is read by walking the buckets it covers, one seek
// of the index each, in one statement (trackWalk): a 24-hour window is 288
// seeks.
const (
	// bucketNs is the width of a bucket (ns of t0). A compaction writes
	// into the pages of the newest bucket, which holds about
	// bucketNs/compactEvery chunks of every live track by its end (10
	// here), and a track's window costs a seek per bucket. 5 minutes keeps
	// both small: 118 WAL frames a compaction of 2,209 tracks, ~100 of
	// them the table's, where 10 minutes wrote 139 and 1 minute 103; 288
	// seeks for a day (BENCHMARKS.md, "A long-lived store's compactions").
	// Changed, stores are migrated at open (migrateTrackIndex).
	bucketNs = int64(5 * time.Minute)
)

var (
	// bucketExpr is a chunk's bucket as SQLite computes it: t0/bucketNs,
	// truncated toward zero as Go's division is (bucketOf), so that the
	// buckets of a window computed in Go are those SQLite stored.
	bucketExpr = `t0` + bucketDiv
	bucketDiv  = `/` + strconv.FormatInt(bucketNs, 10)
	// trackIndex is the index's definition; a statement uses it only
	// where it writes bucketExpr exactly so.
	trackIndex = `CREATE INDEX IF NOT EXISTS chunks_bucket ON chunks (` + bucketExpr + `, track_id, t0)`
)

// bucketOf is the bucket of time t (Unix ns), as bucketExpr computes it.
func bucketOf(t int64) int64 { return t / bucketNs }

// trackWalk is a statement on one track's chunks through chunks_bucket:
// verb ("SELECT cols" or "DELETE") on the chunks of the track (the third
// argument) in the buckets from the first argument to the second
// (bucketOf), clamped to the buckets the store holds (so a window
// reaching back to 1970 walks only those), that also meet cond (its
// arguments follow). order, when not empty, is "ASC" or "DESC": the
// rows then come in that order of t0 (the index's, no sort), and limit
// may follow. The walk's buckets come from a recursive CTE, which SQLite
// makes into a sorted list and seeks the index for each, in order.
func trackWalk(verb, cond, order, limit string) string {
	s := `WITH RECURSIVE b(k, hi) AS (SELECT max(?1, (SELECT min(t0) FROM chunks)` + bucketDiv +
		`), min(?2, (SELECT max(t0) FROM chunks)` + bucketDiv + `)` +
		// min(t0) and max(t0) are the primary key's ends: a seek each.
		` UNION ALL SELECT k+1, hi FROM b WHERE k < hi) ` +
		verb + ` FROM chunks WHERE ` + bucketExpr + ` IN (SELECT k FROM b) AND track_id = ?3` + cond
	if order != "" {
		s += ` ORDER BY ` + bucketExpr + ` ` + order + `, t0 ` + order + limit
	}
	return s
}

// The statements on one track's chunks (arguments: the buckets of the
// earliest and latest t0 to look at, the track, then cond's).
var (
	// sqlTrackWindow: the chunks that may hold points in [lo, hi]
	// (starting at most maxChunkSpan before lo), in time order, with
	// their ends and numbers of points (count); sqlTrackPoints: without.
	sqlTrackWindow = trackWalk(`SELECT t0, t1, n, data`, ` AND t0 BETWEEN ?4 AND ?5 AND t1 >= ?6`, "ASC", "")
	sqlTrackPoints = trackWalk(`SELECT t0, data`, ` AND t0 BETWEEN ?4 AND ?5 AND t1 >= ?6`, "ASC", "")
	// sqlTrackFrom: the chunks ending at or after a time, in time order.
	sqlTrackFrom = trackWalk(`SELECT t0, data`, ` AND t1 >= ?4`, "ASC", "")
	// sqlTrackDeleteFrom deletes those chunks.
	sqlTrackDeleteFrom = trackWalk(`DELETE`, ` AND t1 >= ?4`, "", "")
	// sqlTrackEndFrom: the end of the newest chunk, if it ends at or
	// after a time.
	sqlTrackEndFrom = trackWalk(`SELECT t1`, ` AND t1 >= ?4`, "DESC", " LIMIT 1")
	// sqlTrackAny: whether the track has a chunk (newest buckets first:
	// a live track's is there).
	sqlTrackAny = trackWalk(`SELECT 1`, ``, "DESC", " LIMIT 1")
)

// firstBucket and lastBucket bound every bucket: a walk between them
// covers every bucket the store holds (and only those: trackWalk clamps).
const (
	firstBucket = math.MinInt64 / bucketNs
	lastBucket  = math.MaxInt64 / bucketNs
)

// migrateTrackIndex replaces the track index of a store written before
// chunks_bucket (chunks_track, on (track_id, t0)), or with buckets of
// another width (whose expression no statement here would match), with
// chunks_bucket, in one transaction (a store killed meanwhile keeps its
// old index and is migrated at its next start), and logs how long it
// took (the recorder logs it): building the index reads every chunk's
// key, about a second for 660,000 chunks.
func migrateTrackIndex(ctx context.Context, db *sql.DB) (IndexMigration, error) {
	stale, err := staleTrackIndexes(ctx, db)
	if err != nil || len(stale) == 0 {
		return IndexMigration{}, err
	}
	start := time.Now()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return IndexMigration{}, wrap("migrate", err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, name := range stale {
		if _, err := tx.ExecContext(ctx, `DROP INDEX `+name); err != nil {
			return IndexMigration{}, wrap("migrate", err)
		}
	}
	if _, err := tx.ExecContext(ctx, trackIndex); err != nil {
		return IndexMigration{}, wrap("migrate", err)
	}
	if err := tx.Commit(); err != nil {
		return IndexMigration{}, wrap("migrate", err)
	}
	return IndexMigration{Replaced: stale, Took: time.Since(start)}, nil
}

// IndexMigration is what Open did to an older store's track index: the
// indexes it replaced with chunks_bucket (none: nothing to do) and how
// long that took.
type IndexMigration struct {
	Replaced []string
	Took     time.Duration
}

// Migration reports what Open did to the store's track index.
func (s *Store) Migration() IndexMigration { return s.migration }

// staleTrackIndexes are the names of the store's track indexes other than
// chunks_bucket as trackIndex defines it.
func staleTrackIndexes(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name IN ('chunks_track', 'chunks_bucket')`)
	if err != nil {
		return nil, wrap("migrate", err)
	}
	defer rows.Close()
	var stale []string
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			return nil, wrap("migrate", err)
		}
		if name == "chunks_track" || !strings.Contains(def, "("+bucketExpr+",") {
			stale = append(stale, name)
		}
	}
	return stale, wrap("migrate", rows.Err())
}
