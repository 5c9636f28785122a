package history

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver ("sqlite")
)

// schema: history is stored as chunks, one row per track per stretch of
// time (at most maxChunkPoints points over at most maxChunkSpan), its
// points packed in data (codec.go) and its time range and bounding box
// in indexed columns. A row per point cost ~4 µs of SQLite work per fix
// (two b-tree inserts and their WAL pages); a chunk row spreads that over
// tens of points.
//
// chunks is clustered by its start time: an area query reads the
// window's range of the primary key and filters the boxes of the rows,
// then the points. chunks_bucket (index.go) serves one track's window,
// bucket by bucket of time. One track's chunks never overlap in time
// (Insert keeps them apart), so a track's points come out in time order
// chunk after chunk.
//
// New points are first held in memory, packed as the chunks they will
// become, and appended to <path>.pending (pendingLog), one record per
// Insert: that write is what makes them survive a killed process. Every
// compactEvery the held points are written as chunk rows in one
// transaction and the log emptied. Queries read the chunks and the held
// points. Writing each Insert as a row instead cost a transaction per
// flush and, at compaction, deleting those rows again.
var schema = `
CREATE TABLE IF NOT EXISTS chunks (
	t0       INTEGER NOT NULL,
	track_id TEXT NOT NULL,
	t1       INTEGER NOT NULL,
	n        INTEGER NOT NULL,
	min_lat  REAL NOT NULL,
	max_lat  REAL NOT NULL,
	min_lon  REAL NOT NULL,
	max_lon  REAL NOT NULL,
	protocol TEXT NOT NULL DEFAULT '',
	data     BLOB NOT NULL,
	PRIMARY KEY (t0, track_id)
) WITHOUT ROWID;
` + trackIndex + ";\n"

const (
	// maxChunkSpan bounds the time a chunk covers, so that a window's
	// chunks start at most this long before the window.
	maxChunkSpan = 2 * time.Minute
	// maxChunkPoints bounds a chunk's points (and the work of reading a
	// chunk for a few of them).
	maxChunkPoints = 512
	// pageSize is the page size of a new database: a chunk row stays
	// in its b-tree page up to about a quarter of a page (see chunkBytes),
	// and 16 KiB pages let a chunk keep about 400 compact points there
	// (2 minutes of a track at 3 fixes a second).
	pageSize = 16384
	// compactEvery is how long points stay in pending before they become
	// chunks; compactPoints compacts sooner when that many are held.
	compactEvery  = 30 * time.Second
	compactPoints = 1 << 18
	// writerCacheKiB is the page cache of the writer's connection. A
	// compaction appends chunk rows at the end of the table and its index
	// entries to a few index pages, so it needs little cache beyond the
	// pages it dirties; the 32 MiB of a query's connection were filled with
	// pages written once (each a fresh 16-KiB allocation of the pure-Go
	// libc, faulted in, and handed back to the kernel one madvise each when
	// the database closed: 2,000 of them, a third of the recorder's CPU
	// in BenchmarkRecorderFedFixes with its close). 3 MiB stays below the
	// 4 MiB of freed memory that allocator keeps committed per size.
	writerCacheKiB = 3072
)

// Store is the history database. It is safe for concurrent use: queries
// run while the recorder inserts (SQLite in WAL mode; mu orders the
// points held in memory with the chunks).
type Store struct {
	db *sql.DB
	// w is the writer's connection, its own for the store's life: every
	// write transaction (compaction, merge, retention) runs on it, with a
	// page cache of writerCacheKiB (see there).
	w    *sql.Conn
	path string
	log  *pendingLog
	// migration is what Open did to an older track index.
	migration IndexMigration
	// pend is the pending record being made, marks what an Insert held,
	// and grp groups points by track, all reused (s.mu held).
	pend  []byte
	marks []holdMark
	grp   grouper
	// fedRest are the fed points of an insertFed that take the general
	// path (s.mu held).
	fedRest []Point
	// epoch counts the prunings of tracks (trackHandle; s.mu held).
	epoch uint64
	// logGen counts the pending log's emptyings (and failed writes): a
	// track whose logGen is another has no index in the log (s.mu held).
	// logNext is the next index.
	logGen, logNext uint64
	// tracks is what the store keeps of each track it has heard of, found
	// by one map look-up per point (the grouper's): the points it holds
	// in memory and the end of its newest chunk. holding are those that
	// hold points (s.mu held). At the pipeline benchmark's 2,209 tracks a
	// commit of 2,048 fed fixes is ~2,000 runs of one point, and a map
	// of held chunks, one of chunk ends and the grouper's own, each looked
	// up per run, were a fifth of the recorder's time.
	tracks  map[string]*trackState
	holding []*trackState
	// free are the packed-point buffers of the chunks the last
	// compaction wrote, for the chunks that follow (s.mu held): a new
	// chunk's buffer grew from nothing to ~4 KB by appends, a dozen
	// allocations and copies per chunk (the pipeline benchmark's
	// allocation profile).
	free [][]byte

	// mu: Insert and compaction write; a query reads while it takes a
	// read snapshot of the database and a copy of what it needs of held,
	// so that it never sees a point both in memory and in a chunk, or in
	// neither, and then streams without it.
	mu sync.RWMutex
	// heldN counts the points committed to pending and not yet to chunks
	// (trackState.held).
	heldN  int
	heldAt time.Time // the last compaction
	// newest bounds the end of every chunk (Unix ns): a point after it is
	// newer than all its track's chunks without asking the database.
	newest int64
	// chunkBytes bounds a chunk's packed points (see chunkBytes).
	chunkBytes int
}

// chunkBytes is how many bytes of packed points a chunk may hold so that
// its row stays in its b-tree page with pages of pageSize bytes. SQLite
// keeps a row of a WITHOUT ROWID table in its page up to
// (pageSize-12)·64/255−23 bytes (1,002 with 4 KiB pages) and spills the
// rest into overflow pages of its own: with 4 KiB pages, 120 compact
// points (1.2 KB) took a whole overflow page for their last 200 bytes —
// 362 MB for 10 M points that pack into 100 MB. 128 bytes are left for
// the row's other columns (times, box, track id, protocol).
func chunkBytes(pageSize int) int { return (pageSize-12)*64/255 - 23 - 128 }

// Open opens (creating if needed) the history database at path. WAL with
// synchronous=NORMAL: committed chunks survive a killed process; a power
// cut can lose the last commits, like JetStream's default sync interval.
// Points a killed process left in <path>.pending are read back.
func Open(path string) (*Store, error) {
	if err := create(path); err != nil {
		return nil, err
	}
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(NORMAL)", "busy_timeout(10000)", "cache_size(-32768)"} {
		q.Add("_pragma", p)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, wrap("open", err)
	}
	db.SetMaxOpenConns(9) // queries hold one while they stream (8), the writer its own
	migration, err := migrateTrackIndex(context.Background(), db)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	if _, err := db.Exec(schema); err != nil {
		_ = db.Close()
		return nil, wrap("open "+path, err)
	}
	ctx := context.Background()
	w, err := writerConn(ctx, db)
	if err != nil {
		_ = db.Close()
		return nil, wrap("open "+path, err)
	}
	s := &Store{db: db, w: w, path: path, tracks: map[string]*trackState{}, heldAt: time.Now(), logGen: 1, migration: migration}
	s.grp.tracks = s.tracks
	var page int
	if err := db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&page); err != nil {
		_ = s.closeDB()
		return nil, wrap("open "+path, err)
	}
	s.chunkBytes = chunkBytes(page)
	// The newest chunk starts at max(t0) (the primary key's last entry)
	// and ends at most maxChunkSpan later.
	var t0 sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT max(t0) FROM chunks`).Scan(&t0); err != nil {
		_ = s.closeDB()
		return nil, wrap("open "+path, err)
	}
	if t0.Valid {
		s.newest = t0.Int64 + int64(maxChunkSpan)
	}
	if err := s.loadPending(ctx); err != nil {
		_ = s.closeDB()
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		_ = s.log.close()
		_ = s.closeDB()
		return nil, err
	}
	return s, nil
}

// writerConn is a connection of db for the writer, with its page cache
// (writerCacheKiB).
func writerConn(ctx context.Context, db *sql.DB) (*sql.Conn, error) {
	w, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := w.ExecContext(ctx, fmt.Sprintf("PRAGMA cache_size(%d)", -writerCacheKiB)); err != nil {
		_ = w.Close()
		return nil, err
	}
	return w, nil
}

// closeDB closes the writer's connection and the database.
func (s *Store) closeDB() error { return errors.Join(s.w.Close(), s.db.Close()) }

// create creates the database at path with pages of pageSize bytes,
// unless it exists. The page size of a database is fixed when its first
// table is written and cannot change in WAL mode, and the driver applies
// the pragmas of a connection in alphabetical order (journal_mode before
// page_size), so a new database is made by a connection of its own.
func create(path string) error {
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil // there (or unreadable: Open reports it)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma="+url.QueryEscape(fmt.Sprintf("page_size(%d)", pageSize)))
	if err == nil {
		_, err = db.Exec(schema)
		err = errors.Join(err, db.Close())
	}
	return wrap("create "+path, err)
}

// Close writes the points in memory as chunks and closes the database.
func (s *Store) Close() error {
	s.mu.Lock()
	err := s.compact(context.Background())
	s.mu.Unlock()
	return errors.Join(err, s.log.close(), wrap("close", s.closeDB()))
}

// loadPending opens the pending log, reads back the points a killed
// process left in it and writes them as chunks (which empties it).
func (s *Store) loadPending(ctx context.Context) error {
	l, records, first, err := openPendingLog(s.path + ".pending")
	if err != nil {
		return err
	}
	s.log = l
	var pts []Point
	if first {
		for _, rec := range records {
			if pts, err = unpackPending(rec, pts); err != nil {
				break
			}
		}
	} else {
		pts, err = replayChunkLog(records, pts)
	}
	if err != nil {
		_ = l.close()
		return wrap("open: pending", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// They may be in chunks already (killed after a compaction's commit,
	// before the log was emptied): stored like any insert, repeats
	// ignored, without logging them again.
	if len(pts) > 0 {
		if _, err := s.insert(ctx, s.grp.runs(pts), false); err != nil {
			_ = l.close()
			return err
		}
	}
	if err := s.compact(ctx); err != nil {
		_ = l.close()
		return err
	}
	return nil
}

// unpackPending appends to dst the points of a pending record of the
// first format: per run of points, its track id, its number of points
// and the points packed after time 0 (appendPoints).
func unpackPending(b []byte, dst []Point) ([]Point, error) {
	for len(b) > 0 {
		id, rest, err := readString(b)
		if err != nil {
			return dst, err
		}
		n, k := uvarint(rest)
		if k <= 0 {
			return dst, errCorrupt
		}
		r := newPointReader(rest[k:], 0, id)
		for i := uint64(0); i < n; i++ {
			var p Point
			if ok, err := r.next(&p); !ok || err != nil {
				return dst, errors.Join(errCorrupt, err)
			}
			dst = append(dst, p)
		}
		b = r.b
	}
	return dst, nil
}

// run is points of one track in time order.
type run struct {
	id  string
	pts []Point
	// strict says no two points share a time.
	strict bool
	// t is the track's state (the grouper's runs).
	t *trackState
}

// trackState is what a Store keeps of one track (s.mu held).
type trackState struct {
	id string
	// held are the track's points committed to pending and not yet to
	// chunks, packed as the chunks they will be (the last one still
	// filling); every one is newer than the track's stored chunks.
	held []*chunk
	// end is the end (Unix ns) of the track's newest chunk when endKnown
	// (0 otherwise).
	end      int64
	endKnown bool
	// gen and k: in the grouper's call gen, the track's group is k (in
	// insertFed's, k ≥ 0: its points are held; fedLast is the time of the
	// last one).
	gen     uint64
	k       int32
	fedLast int64
	// logIdx is the track's index in the pending log when logGen is the
	// store's.
	logGen, logIdx uint64
}

// trackHandle is where a fed track's state was found in a store: the
// recorder keeps one with each track and hands it with the track's fed
// points, which spares the store's map look-up per point while the store
// is the one it was found in and has forgotten no track since (epoch).
// Only the store reads and writes it (s.mu held).
type trackHandle struct {
	st    *Store
	t     *trackState
	epoch uint64
}

// forgetEnd forgets the track's chunk end (the chunks may have changed).
func (t *trackState) forgetEnd() { t.end, t.endKnown = 0, false }

// noteEnd notes a chunk of the track written to end at t1.
func (t *trackState) noteEnd(t1 int64) {
	if t1 > t.end {
		t.end, t.endKnown = t1, true
	}
}

// grouper splits points into runs of one track each, reusing its
// buffers from call to call (a Store's is used under s.mu). It finds
// each point's track in tracks (a Store's), adding the tracks it has not
// seen.
type grouper struct {
	tracks map[string]*trackState
	gen    uint64
	sts    []*trackState
	counts []int
	next   []int
	of     []int32
	all    []Point
	out    []run
}

// runs splits pts into runs of one track each, in the order of their
// tracks' first points, each in time order (stable: of two points at one
// time the first comes first); a run with no two points at one time is
// strict, which spares classify a look at the held points for every
// point. When each track's points are together and in time order in pts
// (a recorder's batch of events, a run per event) the runs are views of
// pts; otherwise (the recorder's fed fixes, issue 30: every accepted fix
// in fusion's order, the tracks interleaved) they are views of a copy.
// The runs (and the copy) are valid until the next call. One map look-up per point and no sort of
// the runs: at the pipeline benchmark's 2,209 tracks a fed batch of 2,048
// fixes is ~2,000 runs of one or two points.
func (g *grouper) runs(pts []Point) []run {
	if g.tracks == nil {
		g.tracks = map[string]*trackState{}
	}
	g.gen++
	clear(g.sts) // the last call's
	g.sts, g.counts = g.sts[:0], g.counts[:0]
	g.of = slices.Grow(g.of[:0], len(pts))[:len(pts)]
	together := true
	for i := range pts {
		t := trackOf(g.tracks, pts[i].TrackID)
		if t.gen != g.gen {
			t.gen, t.k = g.gen, int32(len(g.sts))
			g.sts, g.counts = append(g.sts, t), append(g.counts, 0)
		} else if g.of[i-1] != t.k {
			together = false
		}
		g.counts[t.k]++
		g.of[i] = t.k
	}
	byTime := func(a, b Point) int { return a.Time.Compare(b.Time) }
	src := pts
	if together {
		for k, off := 0, 0; k < len(g.sts) && together; k++ {
			together = slices.IsSortedFunc(pts[off:off+g.counts[k]], byTime)
			off += g.counts[k]
		}
	}
	if !together {
		src = g.gather(pts)
	}
	clear(g.out) // the last call's
	runs := slices.Grow(g.out[:0], len(g.sts))[:len(g.sts)]
	g.out = runs
	for k, off := 0, 0; k < len(g.sts); k++ {
		grp := src[off : off+g.counts[k] : off+g.counts[k]]
		off += g.counts[k]
		if !together && !slices.IsSortedFunc(grp, byTime) {
			slices.SortStableFunc(grp, byTime)
		}
		runs[k] = run{g.sts[k].id, grp, strictlyTimed(grp), g.sts[k]}
	}
	return runs
}

// gather copies pts into g.all, each track's points together, the tracks
// in g.sts' order, and returns it.
func (g *grouper) gather(pts []Point) []Point {
	g.next = slices.Grow(g.next[:0], len(g.counts))[:len(g.counts)]
	for k, off := 0, 0; k < len(g.counts); k++ {
		g.next[k] = off
		off += g.counts[k]
	}
	clear(g.all) // drop the last call's strings and pointers
	g.all = slices.Grow(g.all[:0], len(pts))[:len(pts)]
	for i := range pts {
		g.all[g.next[g.of[i]]] = pts[i]
		g.next[g.of[i]]++
	}
	return g.all
}

// strictlyTimed reports whether pts (time order) has no two points at
// one time.
func strictlyTimed(pts []Point) bool {
	for k := 1; k < len(pts); k++ {
		if !pts[k].Time.After(pts[k-1].Time) {
			return false
		}
	}
	return true
}

// sortPoints sorts pts by track and time (stable).
func sortPoints(pts []Point) []Point {
	slices.SortStableFunc(pts, func(a, b Point) int {
		if c := strings.Compare(a.TrackID, b.TrackID); c != 0 {
			return c
		}
		return a.Time.Compare(b.Time)
	})
	return pts
}

// hold adds new points of one track (time order, none at the time of a
// point held) to memory: appended to its filling chunk, or, for points
// older than its newest held one (rare), by packing its held points
// again.
func (s *Store) hold(t *trackState, pts []Point) {
	if len(pts) == 0 {
		return
	}
	s.heldN += len(pts)
	if cs := t.held; len(cs) > 0 && pts[0].Time.UnixNano() <= cs[len(cs)-1].t1 {
		all := heldPoints(cs)
		for _, p := range pts {
			all = insertSorted(all, p)
		}
		t.held = chunksOf(all, s.chunkBytes)
		return
	}
	for i := range pts {
		s.fillingChunk(t, pts[i].Time.UnixNano(), pts[i].Protocol).add(&pts[i])
	}
}

// fillingChunk is the held chunk of t that a point at at (Unix ns) of
// protocol, newer than t's held points, goes into: the last, or a new one
// when t holds none or the point does not fit the last. A track that
// held nothing joins s.holding (s.mu held).
func (s *Store) fillingChunk(t *trackState, at int64, protocol string) *chunk {
	cs := t.held
	if len(cs) == 0 {
		s.holding = append(s.holding, t)
	}
	if len(cs) == 0 || !cs[len(cs)-1].fitsAt(at, protocol, s.chunkBytes) {
		cs = append(cs, s.newChunk())
		t.held = cs
	}
	return cs[len(cs)-1]
}

// trackOf is the state of track id in m, added when new.
func trackOf(m map[string]*trackState, id string) *trackState {
	t := m[id]
	if t == nil {
		t = &trackState{id: id}
		m[id] = t
	}
	return t
}

// pruneTracks forgets the chunk ends of the tracks, and the tracks that
// hold no points (s.mu held, no insert under way): what was kept of a
// track is then bounded as the map of chunk ends it replaces was.
func (s *Store) pruneTracks() {
	s.epoch++ // the handles to the tracks deleted are stale
	for id, t := range s.tracks {
		if len(t.held) == 0 {
			delete(s.tracks, id)
		} else {
			t.forgetEnd()
		}
	}
}

// heldOf is what is held of track id (s.mu held, for reading).
func (s *Store) heldOf(id string) []*chunk {
	if t := s.tracks[id]; t != nil {
		return t.held
	}
	return nil
}

// forgetEnds forgets every track's chunk end (the chunks may have
// changed, or a write that noted them failed).
func (s *Store) forgetEnds() {
	for _, t := range s.tracks {
		t.forgetEnd()
	}
}

// newChunk is an empty chunk, with a buffer of s.free when there is one.
func (s *Store) newChunk() *chunk {
	c := &chunk{}
	if n := len(s.free); n > 0 {
		c.data, s.free[n-1] = s.free[n-1], nil
		s.free = s.free[:n-1]
	}
	return c
}

// heldPoints unpacks chunks.
func heldPoints(cs []*chunk) []Point {
	var out []Point
	for _, c := range cs {
		_ = c.points(func(p *Point) error { out = append(out, *p); return nil }) // our own packing: cannot fail
	}
	return out
}

// insertSorted inserts p into h (time order) unless a point at its time
// is there; the common case, a newer point, appends.
func insertSorted(h []Point, p Point) []Point {
	if n := len(h); n == 0 || h[n-1].Time.Before(p.Time) {
		return append(h, p)
	}
	k, found := slices.BinarySearchFunc(h, p.Time, func(q Point, t time.Time) int { return q.Time.Compare(t) })
	if found {
		return h
	}
	return slices.Insert(h, k, p)
}

// chunkEnd is the end (Unix ns) of track id's newest chunk when that is
// at or after first, the time of the track's next point, else a time
// between that end (or 0 when it has none) and first. Chunks of a track
// do not overlap, so the end is the newest chunk's t1, and when it is at
// or after first that chunk starts at most maxChunkSpan before first:
// only the index's buckets from there on are looked at (a chunk is found
// by walking them down from the newest, a seek each).
func (s *Store) chunkEnd(ctx context.Context, tr *trackState, first int64) (int64, error) {
	if tr.endKnown {
		return tr.end, nil
	}
	if first > s.newest {
		// Newer than every chunk: what matters is only that first is
		// after the end, so newest stands in for it (a later, older
		// point of the track is merged by rewrite, which is right
		// whatever the end is).
		tr.end, tr.endKnown = s.newest, true
		return s.newest, nil
	}
	t := first - 1 // none ends at or after first
	err := s.db.QueryRowContext(ctx, sqlTrackEndFrom, bucketOf(first-int64(maxChunkSpan)), lastBucket, tr.id, first).Scan(&t)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, wrap("insert", err)
	}
	tr.end, tr.endKnown = t, true
	return t, nil
}

// Insert stores pts and returns how many were new (a point at the time
// of a stored point of its track is a repeat and ignored). The new points
// are in the pending log (or in chunks) when it returns.
//
// A batch holding a point that cannot be stored (a latitude or longitude
// out of range or not a number, a measurement not finite) is refused
// whole, with an error naming the point: stored, such a point would make
// every later compaction fail (SQLite keeps NaN as NULL, which a chunk's
// bounding box may not be).
func (s *Store) Insert(ctx context.Context, pts []Point) (int, error) {
	if len(pts) == 0 {
		return 0, nil
	}
	if err := checkPoints(pts); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.insert(ctx, s.grp.runs(pts), true)
}

// checkPoints returns an error for the first point of pts that cannot be
// stored.
func checkPoints(pts []Point) error {
	for i := range pts {
		p := &pts[i]
		// The negated comparisons are false for NaN too.
		bad := ""
		switch {
		case !(p.Lat >= -90 && p.Lat <= 90):
			bad = "latitude " + strconv.FormatFloat(p.Lat, 'g', -1, 64)
		case !(p.Lon >= -180 && p.Lon <= 180):
			bad = "longitude " + strconv.FormatFloat(p.Lon, 'g', -1, 64)
		case !finite(p.AltM) || !finite(p.SpeedMps) || !finite(p.HeadingDeg) || !finite(p.VRateMps) || !finite(p.Lambda):
			bad = "a measurement not finite"
		}
		if bad != "" {
			return wrap("insert", fmt.Errorf("point %d of the batch (track %q at %s): %s", i, p.TrackID, p.Time.UTC().Format(time.RFC3339Nano), bad))
		}
	}
	return nil
}

// finite reports whether v is unknown (nil) or a finite number.
func finite(v *float64) bool { return v == nil || !math.IsNaN(*v) && !math.IsInf(*v, 0) }

// insert stores runs, appending the new points to the pending log when
// logIt. s.mu is held.
func (s *Store) insert(ctx context.Context, runs []run, logIt bool) (int, error) {
	n, old, err := s.classify(ctx, runs)
	if err != nil {
		return 0, err
	}
	if n > 0 && logIt {
		if err := s.holdLogged(runs); err != nil {
			return 0, err
		}
	} else {
		for _, r := range runs {
			s.hold(r.t, r.pts)
		}
	}
	if len(old) > 0 {
		k, err := s.merge(ctx, old)
		if err != nil {
			return 0, err
		}
		n += k
	}
	return n, s.compactWhenDue(ctx)
}

// compactWhenDue compacts when compactEvery has passed since the last
// compaction or compactPoints are held (s.mu held).
func (s *Store) compactWhenDue(ctx context.Context) error {
	if s.heldN >= compactPoints || time.Since(s.heldAt) >= compactEvery {
		return s.compact(ctx)
	}
	return nil
}

// merge merges runs of points older than their tracks' newest chunks into
// the chunks, in one transaction, and returns how many were new.
func (s *Store) merge(ctx context.Context, old [][]Point) (int, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, wrap("insert", err)
	}
	defer func() { _ = tx.Rollback() }()
	n := 0
	for _, r := range old {
		k, err := s.rewrite(ctx, tx, r)
		if err != nil {
			s.forgetEnds()
			return 0, err
		}
		n += k
	}
	if err := tx.Commit(); err != nil {
		s.forgetEnds()
		return 0, wrap("insert", err)
	}
	return n, nil
}

// classify leaves in runs the new points, newer than their track's
// chunks and not repeats of held points, and returns their number and,
// by track, the points at or before the end of their track's chunks,
// which must be merged into the chunks (rare: a replay, a restart). A run
// that is all new, the common case, is left as it is.
func (s *Store) classify(ctx context.Context, runs []run) (int, [][]Point, error) {
	var old [][]Point
	n := 0
	for i := range runs {
		r := &runs[i]
		end, err := s.chunkEnd(ctx, r.t, r.pts[0].Time.UnixNano())
		if err != nil {
			return 0, nil, err
		}
		cs := r.t.held
		if first := r.pts[0].Time.UnixNano(); r.strict && first > end && (len(cs) == 0 || first > cs[len(cs)-1].t1) {
			n += len(r.pts)
			continue
		}
		var fresh, before []Point
		for k, p := range r.pts {
			switch t := p.Time.UnixNano(); {
			case k > 0 && p.Time.Equal(r.pts[k-1].Time):
			case t <= end:
				before = append(before, p)
			case isHeld(cs, t):
			default:
				fresh = append(fresh, p)
			}
		}
		r.pts = fresh
		n += len(fresh)
		if len(before) > 0 {
			old = append(old, before)
		}
	}
	return n, old, nil
}

// isHeld reports whether a point at t (Unix ns) is held in cs.
func isHeld(cs []*chunk, t int64) bool {
	for _, c := range cs {
		if t < c.t0 || t > c.t1 {
			continue
		}
		found := false
		_ = c.points(func(p *Point) error { // our own packing: cannot fail
			found = found || p.Time.UnixNano() == t
			return nil
		})
		return found
	}
	return false
}

// rewrite merges pts (one track, time order, none newer than its chunks)
// into the track's chunks: the chunks from the first of them on are read,
// merged with them (a stored point wins over a repeat), deleted and
// written again. It returns how many were new.
func (s *Store) rewrite(ctx context.Context, tx *sql.Tx, pts []Point) (int, error) {
	id, from := pts[0].TrackID, pts[0].Time.UnixNano()
	var stored []Point
	err := s.storedFrom(ctx, tx, id, from, func(p *Point) error { stored = append(stored, *p); return nil })
	if err != nil {
		return 0, err
	}
	merged := stored
	for _, p := range pts {
		merged = insertSorted(merged, p)
	}
	if _, err := tx.ExecContext(ctx, sqlTrackDeleteFrom, bucketOf(from-int64(maxChunkSpan)), lastBucket, id, from); err != nil {
		return 0, wrap("insert", err)
	}
	return len(merged) - len(stored), s.writeChunks(ctx, tx, chunksOf(merged, s.chunkBytes))
}

// storedFrom calls fn for every point of the chunks of track id that end
// at or after from (Unix ns), in time order.
func (s *Store) storedFrom(ctx context.Context, tx *sql.Tx, id string, from int64, fn func(*Point) error) error {
	// A chunk ending at or after from starts at most maxChunkSpan before.
	rows, err := tx.QueryContext(ctx, sqlTrackFrom, bucketOf(from-int64(maxChunkSpan)), lastBucket, id, from)
	if err != nil {
		return wrap("insert", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t0 int64
		var data []byte
		if err := rows.Scan(&t0, &data); err != nil {
			return wrap("insert", err)
		}
		if err := eachPoint(data, t0, id, fn); err != nil {
			return err
		}
	}
	return wrap("insert", rows.Err())
}

// eachPoint calls fn for each point packed in a chunk's data.
func eachPoint(data []byte, t0 int64, id string, fn func(*Point) error) error {
	r := newPointReader(data, t0, id)
	for {
		var p Point
		ok, err := r.next(&p)
		if err != nil {
			return wrap("read", err)
		}
		if !ok {
			return nil
		}
		if err := fn(&p); err != nil {
			return err
		}
	}
}

// writeChunks inserts chunk rows.
func (s *Store) writeChunks(ctx context.Context, tx *sql.Tx, cs []*chunk) error {
	if len(cs) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO chunks (t0, track_id, t1, n, min_lat, max_lat, min_lon, max_lon, protocol, data) VALUES (?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		return wrap("write", err)
	}
	defer stmt.Close()
	for _, c := range cs {
		if _, err := stmt.ExecContext(ctx, c.t0, c.track, c.t1, c.n, c.minLat, c.maxLat, c.minLon, c.maxLon, c.protocol, c.data); err != nil {
			return wrap("write", err)
		}
		trackOf(s.tracks, c.track).noteEnd(c.t1)
		s.newest = max(s.newest, c.t1)
	}
	return nil
}

// compact writes the points held in memory as chunks, in one
// transaction, then empties the pending log. s.mu is held.
func (s *Store) compact(ctx context.Context) error {
	s.heldAt = time.Now()
	if s.heldN == 0 {
		return s.resetLog() // it may hold repeats read back at Open
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return wrap("compact", err)
	}
	defer func() { _ = tx.Rollback() }()
	var all []*chunk
	for _, t := range s.holding {
		all = append(all, t.held...)
	}
	// Rows of one compaction in key order: fewer b-tree pages touched.
	slices.SortFunc(all, func(a, b *chunk) int {
		if c := cmp.Compare(a.t0, b.t0); c != 0 {
			return c
		}
		return strings.Compare(a.track, b.track)
	})
	if err := s.writeChunks(ctx, tx, all); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		// The chunk ends noted by writeChunks are not stored: forget them.
		s.forgetEnds()
		return wrap("compact", err)
	}
	for _, t := range s.holding {
		t.held = nil
	}
	clear(s.holding)
	s.holding, s.heldN = s.holding[:0], 0
	// Their rows are committed (the driver copied the data) and no query
	// holds them (trackSnapshot copies): their buffers serve the chunks
	// that follow. Those of the compaction before, not taken, are let go.
	clear(s.free)
	s.free = s.free[:0]
	for _, c := range all {
		s.free = append(s.free, c.data[:0])
	}
	// Killed before this, the log is read again at the next start and its
	// points, now in chunks, taken for the repeats they are.
	return s.resetLog()
}

// Compact writes the points held in memory as chunks now (Close does it
// too). Tests and benchmarks use it to measure a store's final layout.
func (s *Store) Compact(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.compact(ctx)
}
