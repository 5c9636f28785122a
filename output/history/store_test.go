package history

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 26, 5, 0, 0, 0, time.UTC)

func f64(v float64) *float64 { return &v }

// track makes n points of one track, one every step from start, moving
// north-east from (lat, lon).
func track(id, proto string, start time.Time, step time.Duration, n int, lat, lon float64) []Point {
	pts := make([]Point, n)
	for i := range pts {
		pts[i] = Point{TrackID: id, Protocol: proto, Time: start.Add(time.Duration(i) * step),
			Lat: lat + float64(i)*0.001, Lon: lon + float64(i)*0.001, AltM: f64(100 + float64(i)), AltKind: "barometric",
			Sensor: "rx1", Decision: "monitor", Lambda: f64(0.1)}
	}
	return pts
}

func openTemp(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.db")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st, path
}

func insert(t testing.TB, st *Store, pts []Point) int {
	t.Helper()
	n, err := st.Insert(context.Background(), pts)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func collectTrack(t testing.TB, st *Store, q TrackQuery) []Point {
	t.Helper()
	var out []Point
	if _, err := st.Track(context.Background(), q, func(p *Point) error { out = append(out, *p); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestInsertIgnoresRepeats(t *testing.T) {
	st, _ := openTemp(t)
	pts := track("adsb:4CA1FA", "adsb", t0, time.Second, 10, 51, -1)
	if n := insert(t, st, pts); n != 10 {
		t.Fatalf("first insert stored %d, want 10", n)
	}
	if n := insert(t, st, pts[5:]); n != 0 {
		t.Fatalf("repeated points stored %d, want 0", n)
	}
	got := collectTrack(t, st, TrackQuery{ID: "adsb:4CA1FA", From: t0, To: t0.Add(time.Hour)})
	if len(got) != 10 {
		t.Fatalf("%d points, want 10", len(got))
	}
	p := got[3]
	if !p.Time.Equal(t0.Add(3*time.Second)) || p.Lat != 51.003 || *p.AltM != 103 || p.SpeedMps != nil || *p.Lambda != 0.1 || p.Decision != "monitor" {
		t.Fatalf("point 3 read back as %+v", p)
	}
}

// TestInsertInterleavedTracks: batches as the recorder commits fed fixes,
// the tracks interleaved, each in time order: every point is stored once;
// a batch repeating held points (interleaved too, with new ones among
// them) stores only the new ones.
func TestInsertInterleavedTracks(t *testing.T) {
	st, _ := openTemp(t)
	a := track("adsb:A", "adsb", t0, time.Second, 20, 51, -1)
	b := track("adsb:B", "adsb", t0.Add(time.Millisecond), time.Second, 20, 52, -2)
	mix := func(a, b []Point) []Point {
		var out []Point
		for i := range a {
			out = append(out, a[i], b[i])
		}
		return out
	}
	if n := insert(t, st, mix(a[:10], b[:10])); n != 20 {
		t.Fatalf("first batch stored %d, want 20", n)
	}
	// Points 5-9 again (a reconnecting feed), then 10-19 new.
	if n := insert(t, st, mix(a[5:], b[5:])); n != 20 {
		t.Fatalf("second batch stored %d, want the 20 new", n)
	}
	// New points, one of them twice in the batch: stored once.
	a, b = track("adsb:A", "adsb", t0.Add(time.Minute), time.Second, 5, 51, -1), track("adsb:B", "adsb", t0.Add(time.Minute), time.Second, 5, 52, -2)
	if n := insert(t, st, append(mix(a, b), a[2])); n != 10 {
		t.Fatalf("third batch stored %d, want 10 (a point repeated within it once)", n)
	}
	for _, id := range []string{"adsb:A", "adsb:B"} {
		if got := collectTrack(t, st, TrackQuery{ID: id, From: t0, To: t0.Add(time.Hour)}); len(got) != 25 {
			t.Fatalf("%s: %d points, want 25", id, len(got))
		}
	}
}

func TestTrackWindowAndOrder(t *testing.T) {
	st, _ := openTemp(t)
	pts := track("rid:X", "remoteid", t0, time.Second, 100, 10, 10)
	// Inserted newest first: the answer must still be in time order.
	for i := len(pts) - 1; i >= 0; i-- {
		insert(t, st, pts[i:i+1])
	}
	insert(t, st, track("rid:Y", "remoteid", t0, time.Second, 50, 10, 10))
	got := collectTrack(t, st, TrackQuery{ID: "rid:X", From: t0.Add(10 * time.Second), To: t0.Add(19 * time.Second)})
	if len(got) != 10 {
		t.Fatalf("%d points in a 10 s window, want 10", len(got))
	}
	for i, p := range got {
		if want := t0.Add(time.Duration(10+i) * time.Second); !p.Time.Equal(want) || p.TrackID != "rid:X" {
			t.Fatalf("point %d is %s %s, want rid:X at %s", i, p.TrackID, p.Time, want)
		}
	}
}

func TestThinKeepsFirstAndLastEvenly(t *testing.T) {
	st, _ := openTemp(t)
	insert(t, st, track("adsb:A", "adsb", t0, time.Second, 101, 0, 0))
	got := collectTrack(t, st, TrackQuery{ID: "adsb:A", From: t0, To: t0.Add(time.Hour), MaxPoints: 11})
	if len(got) != 11 {
		t.Fatalf("%d points, want 11", len(got))
	}
	for i, p := range got {
		// 101 points thinned to 11: every 10th second.
		if want := t0.Add(time.Duration(10*i) * time.Second); !p.Time.Equal(want) {
			t.Fatalf("kept point %d at %s, want %s", i, p.Time, want)
		}
	}
}

func TestThinner(t *testing.T) {
	for _, c := range []struct{ total, m int }{{10, 2}, {10, 3}, {7, 6}, {1000, 7}, {5, 5}, {5, 9}, {3, 1}} {
		t.Run(fmt.Sprintf("%d_to_%d", c.total, c.m), func(t *testing.T) {
			keep := thinner(c.total, c.m)
			var kept []int
			for i := 0; i < c.total; i++ {
				if keep(i) {
					kept = append(kept, i)
				}
			}
			want := min(c.m, c.total)
			if len(kept) != want || kept[len(kept)-1] != c.total-1 || (want > 1 && kept[0] != 0) {
				t.Fatalf("kept %v, want %d points with the first and last", kept, want)
			}
		})
	}
}

func collectArea(t testing.TB, st *Store, q AreaQuery) []Point {
	t.Helper()
	var out []Point
	if err := st.Area(context.Background(), q, func(p *Point) error { out = append(out, *p); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAreaBoxWindowProtocol(t *testing.T) {
	st, _ := openTemp(t)
	insert(t, st, track("adsb:IN", "adsb", t0, time.Second, 60, 51.0, -1.0))    // in the box
	insert(t, st, track("adsb:OUT", "adsb", t0, time.Second, 60, 40.0, 20.0))   // elsewhere
	insert(t, st, track("rid:IN", "remoteid", t0, time.Second, 60, 51.0, -1.0)) // other protocol
	box := &BBox{-1.5, 50.5, -0.5, 51.5}
	got := collectArea(t, st, AreaQuery{From: t0.Add(10 * time.Second), To: t0.Add(19 * time.Second), BBox: box, Protocol: "adsb", Limit: 1000})
	if len(got) != 10 {
		t.Fatalf("%d points, want the 10 of adsb:IN in the window", len(got))
	}
	for _, p := range got {
		if p.TrackID != "adsb:IN" {
			t.Fatalf("point of %s leaked into the box/protocol filter", p.TrackID)
		}
	}
	all := collectArea(t, st, AreaQuery{From: t0, To: t0.Add(time.Hour), BBox: box, Limit: 1000})
	if len(all) != 120 || all[0].TrackID != "adsb:IN" || all[119].TrackID != "rid:IN" {
		t.Fatalf("%d points (%s … %s), want 120 ordered adsb:IN then rid:IN", len(all), all[0].TrackID, all[len(all)-1].TrackID)
	}
}

func TestAreaPagesCoverEveryPointOnce(t *testing.T) {
	st, _ := openTemp(t)
	for i := 0; i < 7; i++ {
		insert(t, st, track(fmt.Sprintf("adsb:%02d", i), "adsb", t0, time.Second, 33, 0, 0))
	}
	seen := map[string]bool{}
	q := AreaQuery{From: t0, To: t0.Add(time.Hour), Limit: 50}
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("pagination does not end")
		}
		next, err := st.Next(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range collectArea(t, st, q) {
			k := p.TrackID + p.Time.String()
			if seen[k] {
				t.Fatalf("point %s returned twice", k)
			}
			seen[k] = true
		}
		if next == nil {
			break
		}
		c, err := ParseCursor(next.String())
		if err != nil || c.TrackID != next.TrackID || !c.Time.Equal(next.Time) {
			t.Fatalf("cursor %q did not round-trip: %+v %v", next.String(), c, err)
		}
		q.Cursor = c
	}
	if len(seen) != 7*33 {
		t.Fatalf("pages held %d points, want %d", len(seen), 7*33)
	}
}

func TestParseCursorRejectsGarbage(t *testing.T) {
	for _, s := range []string{"", "!!", "bm90IGEgY3Vyc29y", Cursor{}.String()[:2]} {
		if _, err := ParseCursor(s); err == nil {
			t.Errorf("ParseCursor(%q) accepted garbage", s)
		}
	}
}

func TestPruneByAge(t *testing.T) {
	st, _ := openTemp(t)
	insert(t, st, track("adsb:A", "adsb", t0, time.Minute, 60, 0, 0)) // one hour
	n, err := st.Prune(context.Background(), t0.Add(time.Hour), 30*time.Minute, 0)
	if err != nil {
		t.Fatal(err)
	}
	left := collectTrack(t, st, TrackQuery{ID: "adsb:A", From: t0, To: t0.Add(2 * time.Hour)})
	if n != 30 || len(left) != 30 || left[0].Time.Before(t0.Add(30*time.Minute)) {
		t.Fatalf("deleted %d, left %d starting %s; want 30 and 30 from 05:30", n, len(left), left[0].Time)
	}
}

func TestPruneBySize(t *testing.T) {
	st, _ := openTemp(t)
	insert(t, st, track("adsb:A", "adsb", t0, time.Second, 20000, 0, 0))
	before, err := st.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	limit := before.Bytes / 2
	if _, err := st.Prune(context.Background(), t0, 0, limit); err != nil {
		t.Fatal(err)
	}
	after, err := st.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if after.Bytes > limit || !after.Oldest.After(before.Oldest) || !after.Newest.Equal(before.Newest) {
		t.Fatalf("after pruning to %d bytes: %+v (before %+v); want under the limit, oldest gone, newest kept", limit, after, before)
	}
}

// TestSurvivesSIGKILL records in a child process, kills it with SIGKILL
// once it says the batch is committed, and reads the batch back.
func TestSurvivesSIGKILL(t *testing.T) {
	if path := os.Getenv("HISTORY_KILL_CHILD"); path != "" {
		st, err := Open(path)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		if _, err := st.Insert(context.Background(), track("adsb:K", "adsb", t0, time.Second, 500, 1, 1)); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		// And fed fixes, packed straight into their chunks (insertFed).
		fps := make([]fedPoint, 500)
		for i := range fps {
			fps[i] = fedPoint{id: "adsb:F", t: t0.UnixNano() + int64(i)*int64(time.Second), protocol: "adsb"}
			fps[i].setUnit(0, 2+float64(i)*1e-4)
			fps[i].setUnit(1, 2)
		}
		if _, err := st.insertFed(context.Background(), fps); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("committed")
		select {} // wait for the kill
	}
	path := filepath.Join(t.TempDir(), "history.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSurvivesSIGKILL$")
	cmd.Env = append(os.Environ(), "HISTORY_KILL_CHILD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	_ = cmd.Process.Kill() // SIGKILL
	_ = cmd.Wait()
	if line != "committed\n" {
		t.Fatalf("child said %q", line)
	}
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, id := range []string{"adsb:K", "adsb:F"} {
		n, err := st.Count(context.Background(), id, t0, t0.Add(time.Hour))
		if err != nil || n != 500 {
			t.Fatalf("after SIGKILL %d points of %s (%v), want 500", n, id, err)
		}
	}
}

func TestReopenKeepsPoints(t *testing.T) {
	st, path := openTemp(t)
	insert(t, st, track("adsb:R", "adsb", t0, time.Second, 42, 1, 1))
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if n, err := st2.Count(context.Background(), "adsb:R", t0, t0.Add(time.Hour)); err != nil || n != 42 {
		t.Fatalf("after reopening %d points (%v), want 42", n, err)
	}
}

// queryPlan is SQLite's plan for query.
func queryPlan(t *testing.T, st *Store, query string, args ...any) string {
	t.Helper()
	rows, err := st.db.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "; ")
}

// TestQueryPlans: an area query reads the window's range of the primary
// key (never every track through the track index), and every statement
// on one track seeks chunks_bucket for the track in each bucket it walks,
// in the index's order: neither a scan of the table or the index nor a
// sort (a temporary b-tree) of what it reads.
func TestQueryPlans(t *testing.T) {
	st, _ := openTemp(t)
	insert(t, st, track("adsb:A", "adsb", t0, time.Second, 100, 0, 0))
	where, args := areaWhere(AreaQuery{From: t0, To: t0.Add(time.Minute), BBox: &BBox{-1, -1, 1, 1}, Protocol: "adsb",
		Cursor: &Cursor{TrackID: "adsb:A", Time: t0}})
	plan := queryPlan(t, st, `SELECT track_id, t0, data `+where+` `+areaOrder, args...)
	if !strings.Contains(plan, "SEARCH chunks USING PRIMARY KEY (t0>? AND t0<?)") || strings.Contains(plan, "chunks_bucket") {
		t.Errorf("area plan: %s", plan)
	}
	for _, q := range []struct {
		name, sql, seek string
		args            []any
	}{
		{"window", sqlTrackWindow, "(<expr>=? AND track_id=? AND t0>? AND t0<?)", []any{0, 1, "adsb:A", 0, 1, 0}},
		{"points", sqlTrackPoints, "(<expr>=? AND track_id=? AND t0>? AND t0<?)", []any{0, 1, "adsb:A", 0, 1, 0}},
		{"from", sqlTrackFrom, "(<expr>=? AND track_id=?)", []any{0, 1, "adsb:A", 0}},
		{"delete", sqlTrackDeleteFrom, "(<expr>=? AND track_id=?)", []any{0, 1, "adsb:A", 0}},
		{"end", sqlTrackEndFrom, "(<expr>=? AND track_id=?)", []any{0, 1, "adsb:A", 0}},
		{"any", sqlTrackAny, "(<expr>=? AND track_id=?)", []any{0, 1, "adsb:A"}},
	} {
		plan := queryPlan(t, st, q.sql, q.args...)
		if !strings.Contains(strings.Replace(plan, "USING COVERING INDEX", "USING INDEX", 1), "SEARCH chunks USING INDEX chunks_bucket "+q.seek) ||
			strings.Contains(plan, "TEMP B-TREE") || strings.Contains(plan, "SCAN chunks") {
			t.Errorf("track plan %s: %s", q.name, plan)
		}
	}
	// Retention reads only the old end of the table.
	plan = queryPlan(t, st, `SELECT sum(n) FROM chunks WHERE t0 < ? AND t1 < ?`, 1, 1)
	if !strings.Contains(plan, "SEARCH chunks USING PRIMARY KEY (t0<?)") {
		t.Errorf("retention plan: %s", plan)
	}
}

// TestPruneCutsAChunk: the limit falls inside a chunk (points every
// minute pack three to a chunk of ≤ 2 min): its older points go, its
// newer ones stay.
func TestPruneCutsAChunk(t *testing.T) {
	st, _ := openTemp(t)
	insert(t, st, track("adsb:A", "adsb", t0, time.Minute, 60, 0, 0))
	n, err := st.Prune(context.Background(), t0.Add(61*time.Minute), 30*time.Minute, 0) // cut at 05:31
	if err != nil {
		t.Fatal(err)
	}
	left := collectTrack(t, st, TrackQuery{ID: "adsb:A", From: t0, To: t0.Add(2 * time.Hour)})
	if n != 31 || len(left) != 29 || !left[0].Time.Equal(t0.Add(31*time.Minute)) {
		t.Fatalf("deleted %d, left %d from %s; want 31 deleted and 29 from 05:31", n, len(left), left[0].Time)
	}
}

// TestGrouperRuns: runs of one track each in the order of the tracks'
// first points, each in time order, strict when no two share a time;
// views of the input when each track's points are already together and
// in order, and the input never reordered.
func TestGrouperRuns(t *testing.T) {
	a := track("adsb:A", "adsb", t0, time.Second, 3, 51, -1)
	b := track("adsb:B", "adsb", t0, time.Second, 3, 52, -2)
	var g grouper
	check := func(name string, pts []Point, wantView bool, want map[string][]int64, strict map[string]bool) {
		t.Helper()
		in := slices.Clone(pts)
		runs := g.runs(pts)
		if !slices.EqualFunc(in, pts, func(x, y Point) bool { return x.TrackID == y.TrackID && x.Time.Equal(y.Time) }) {
			t.Fatalf("%s: the input was reordered", name)
		}
		if len(runs) != len(want) {
			t.Fatalf("%s: %d runs, want %d", name, len(runs), len(want))
		}
		if view := &runs[0].pts[0] == &pts[0]; view != wantView {
			t.Fatalf("%s: runs are views of the input: %v, want %v", name, view, wantView)
		}
		for _, r := range runs {
			var got []int64
			for _, p := range r.pts {
				if p.TrackID != r.id {
					t.Fatalf("%s: %s in the run of %s", name, p.TrackID, r.id)
				}
				got = append(got, p.Time.Sub(t0).Milliseconds())
			}
			if !slices.Equal(got, want[r.id]) || r.strict != strict[r.id] {
				t.Fatalf("%s: run %s at %v strict %v, want %v strict %v", name, r.id, got, r.strict, want[r.id], strict[r.id])
			}
		}
		if runs[0].id != pts[0].TrackID {
			t.Fatalf("%s: first run %s, want the first point's track %s", name, runs[0].id, pts[0].TrackID)
		}
	}
	ms := []int64{0, 1000, 2000}
	check("together", append(slices.Clone(b), a...), true, map[string][]int64{"adsb:A": ms, "adsb:B": ms}, map[string]bool{"adsb:A": true, "adsb:B": true})
	check("interleaved", []Point{a[0], b[0], a[1], b[1], a[2], b[2]}, false,
		map[string][]int64{"adsb:A": ms, "adsb:B": ms}, map[string]bool{"adsb:A": true, "adsb:B": true})
	check("together, out of order, a repeat", []Point{a[2], a[0], a[2], b[0]}, false,
		map[string][]int64{"adsb:A": {0, 2000, 2000}, "adsb:B": {0}}, map[string]bool{"adsb:A": false, "adsb:B": true})
}

// TestTrackQueryKeepsItsHeldPoints: a track query streams the points held
// in memory after releasing the store's lock; a compaction meanwhile hands
// their chunk's buffer to the next chunk (Store.free), and the query still
// passes its own points, not the next chunk's.
func TestTrackQueryKeepsItsHeldPoints(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	insert(t, st, track("adsb:A", "adsb", t0, time.Second, 10, 51, -1))
	if err := st.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	want := track("adsb:A", "adsb", t0.Add(10*time.Second), time.Second, 10, 51.01, -0.99)
	insert(t, st, want)
	var got []Point
	_, err := st.Track(ctx, TrackQuery{ID: "adsb:A", From: t0.Add(10 * time.Second), To: t0.Add(time.Hour)}, func(p *Point) error {
		if len(got) == 0 { // the held chunk's first point: compact, and fill the next chunk
			if err := st.Compact(ctx); err != nil {
				return err
			}
			if _, err := st.Insert(ctx, track("adsb:B", "adsb", t0.Add(time.Hour), time.Second, 10, -30, 150)); err != nil {
				return err
			}
		}
		got = append(got, *p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d points, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].TrackID != want[i].TrackID || !got[i].Time.Equal(want[i].Time) || got[i].Lat != want[i].Lat || got[i].Lon != want[i].Lon {
			t.Fatalf("point %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestInsertRefusesPointsItCannotStore: a batch with a position out of
// range or not a number, or a measurement not finite, is refused whole
// with an error naming the point, and the store goes on compacting and
// storing. (Stored, a NaN latitude made every later compaction fail: its
// chunk's bounding box would be NULL.)
func TestInsertRefusesPointsItCannotStore(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name string
		bad  func(p *Point)
		want string
	}{
		{"NaN latitude", func(p *Point) { p.Lat = math.NaN() }, "latitude NaN"},
		{"NaN longitude", func(p *Point) { p.Lon = math.NaN() }, "longitude NaN"},
		{"latitude beyond a pole", func(p *Point) { p.Lat = 90.5 }, "latitude 90.5"},
		{"longitude beyond 180", func(p *Point) { p.Lon = -180.25 }, "longitude -180.25"},
		{"infinite altitude", func(p *Point) { p.AltM = &inf }, "not finite"},
		{"NaN speed", func(p *Point) { p.SpeedMps = f64(math.NaN()) }, "not finite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _ := openTemp(t)
			pts := track("adsb:4CA1FA", "adsb", t0, time.Second, 10, 51, -1)
			tc.bad(&pts[4])
			n, err := st.Insert(context.Background(), pts)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "point 4 ") {
				t.Fatalf("Insert = %d, %v; want an error naming point 4's %s", n, err, tc.want)
			}
			more := track("adsb:4CA1FB", "adsb", t0, time.Second, 5, 52, -1)
			insert(t, st, more)
			if err := st.Compact(context.Background()); err != nil {
				t.Fatalf("compaction after the refused batch: %v", err)
			}
			if got := collectTrack(t, st, TrackQuery{ID: "adsb:4CA1FA", From: t0, To: t0.Add(time.Hour)}); len(got) != 0 {
				t.Fatalf("the refused batch's track has %d points, want 0", len(got))
			}
			if got := collectTrack(t, st, TrackQuery{ID: "adsb:4CA1FB", From: t0, To: t0.Add(time.Hour)}); len(got) != 5 {
				t.Fatalf("the next batch's track has %d points, want 5", len(got))
			}
		})
	}
}

// TestWriterHasItsOwnConnection: with every query connection of the pool
// held by a read snapshot (queries streaming to slow clients), the
// writer still compacts and prunes on its own connection, whose page
// cache is writerCacheKiB.
func TestWriterHasItsOwnConnection(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	insert(t, st, track("adsb:AAAAAA", "adsb", t0, time.Second, 50, 51, 0))
	var held []interface{ Rollback() error }
	defer func() {
		for _, tx := range held {
			_ = tx.Rollback()
		}
	}()
	for range st.db.Stats().MaxOpenConnections - 1 {
		tx, err := st.readSnapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, tx)
	}
	// Without a connection of its own the writer would wait for one
	// until the deadline.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := st.Compact(wctx); err != nil {
		t.Fatalf("compact with every query connection held: %v", err)
	}
	if _, err := st.Prune(wctx, t0.Add(time.Hour), time.Hour-30*time.Second, 0); err != nil {
		t.Fatalf("prune with every query connection held: %v", err)
	}
	var kib int
	if err := st.w.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&kib); err != nil {
		t.Fatal(err)
	}
	if kib != -writerCacheKiB {
		t.Errorf("the writer's page cache is %d (KiB when negative), want -%d", kib, writerCacheKiB)
	}
	for _, tx := range held {
		_ = tx.Rollback()
	}
	held = nil
	if got := collectTrack(t, st, TrackQuery{ID: "adsb:AAAAAA", From: t0, To: t0.Add(time.Hour)}); len(got) != 20 {
		t.Errorf("%d points after pruning the first 30 s, want 20", len(got))
	}
}
