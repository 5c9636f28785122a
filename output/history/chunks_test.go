package history

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// model is what the store must hold: every point inserted, the first of
// repeats at one (track, time) kept.
type model map[string]map[int64]Point

func (m model) add(pts []Point) int {
	n := 0
	for _, p := range pts {
		if m[p.TrackID] == nil {
			m[p.TrackID] = map[int64]Point{}
		}
		if _, ok := m[p.TrackID][p.Time.UnixNano()]; !ok {
			m[p.TrackID][p.Time.UnixNano()] = p
			n++
		}
	}
	return n
}

// area is the model's answer to q (no limit, no cursor), in track and
// time order.
func (m model) area(q AreaQuery) []Point {
	var out []Point
	for _, pts := range m {
		for _, p := range pts {
			if areaMatch(&q, &p) {
				out = append(out, p)
			}
		}
	}
	return sortPoints(out)
}

// TestChunksMatchAModel inserts random points of a few tracks — new,
// repeated, out of order, across compactions — and checks every track's
// history and paged area queries against a model, with points held in
// memory, in chunks, and both.
func TestChunksMatchAModel(t *testing.T) {
	st, path := openTemp(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	m := model{}
	ids := []string{"adsb:A", "adsb:B", "rid:C", "mav:D"}
	for round := 0; round < 40; round++ {
		var batch []Point
		for i := 0; i < 1+rng.IntN(300); i++ {
			id := ids[rng.IntN(len(ids))]
			// Mostly forward in time, sometimes far back (a replay).
			sec := round*30 + rng.IntN(40)
			if rng.IntN(10) == 0 {
				sec = rng.IntN(round*30 + 1)
			}
			p := Point{TrackID: id, Protocol: strings.Split(id, ":")[0], Time: t0.Add(time.Duration(sec)*time.Second + time.Duration(rng.IntN(4))*250*time.Millisecond),
				Lat: 50 + rng.Float64(), Lon: -1 + rng.Float64()*2, Sensor: "rx" + string(rune('1'+rng.IntN(2)))}
			if rng.IntN(2) == 0 {
				p.AltM = f64(rng.Float64() * 1000)
			}
			batch = append(batch, p)
		}
		want := m.add(batch)
		if got := insert(t, st, batch); got != want {
			t.Fatalf("round %d: Insert says %d new, the model %d", round, got, want)
		}
		switch rng.IntN(4) {
		case 0:
			if err := st.Compact(ctx); err != nil {
				t.Fatal(err)
			}
		case 1:
			if round%10 == 9 { // a restart: what is held comes back from pending
				_ = st.db.Close() // no compaction, as a kill would leave it
				_ = st.log.close()
				var err error
				if st, err = Open(path); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = st.Close() })
			}
		}
		checkAgainstModel(t, st, m, rng)
	}
}

func checkAgainstModel(t *testing.T, st *Store, m model, rng *rand.Rand) {
	t.Helper()
	for id, pts := range m {
		// The whole track, then a window whose ends fall between chunks'
		// ends and inside chunks.
		all := collectTrack(t, st, TrackQuery{ID: id, From: t0.Add(-time.Hour), To: t0.Add(10 * time.Hour)})
		if len(all) != len(pts) {
			t.Fatalf("%s: %d points, want %d", id, len(all), len(pts))
		}
		from := t0.Add(time.Duration(rng.IntN(4800)) * 250 * time.Millisecond)
		to := from.Add(time.Duration(rng.IntN(2400)) * 250 * time.Millisecond)
		want := slices.DeleteFunc(m.area(AreaQuery{From: from, To: to}), func(p Point) bool { return p.TrackID != id })
		got := collectTrack(t, st, TrackQuery{ID: id, From: from, To: to})
		n, err := st.Count(context.Background(), id, from, to)
		if err != nil || n != len(want) || !samePoints(got, want) {
			t.Fatalf("%s %s…%s: %d points (count %d, %v), want %d", id, from, to, len(got), n, err, len(want))
		}
	}
	from := t0.Add(time.Duration(rng.IntN(1200)) * time.Second)
	q := AreaQuery{From: from, To: from.Add(time.Duration(rng.IntN(600)) * time.Second), BBox: &BBox{-1, 50.2, 0.5, 51}, Limit: 1 + rng.IntN(50)}
	if rng.IntN(3) == 0 {
		q.Protocol = "adsb"
	}
	want := m.area(q)
	var got []Point
	for pages := 0; ; pages++ {
		next, err := st.Next(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, collectArea(t, st, q)...)
		if next == nil || pages > 1000 {
			break
		}
		q.Cursor = next
	}
	if !samePoints(got, want) {
		t.Fatalf("area %v: %d points over pages, want %d", q, len(got), len(want))
	}
}

func samePoints(a, b []Point) bool {
	return slices.EqualFunc(a, b, func(p, q Point) bool {
		return p.TrackID == q.TrackID && p.Time.Equal(q.Time) && p.Lat == q.Lat && p.Lon == q.Lon &&
			p.Sensor == q.Sensor && p.Protocol == q.Protocol && (p.AltM == nil) == (q.AltM == nil) && (p.AltM == nil || *p.AltM == *q.AltM)
	})
}

// TestQueriesDoNotHoldUpInserts: a query whose reader stalls (a slow HTTP
// client) does not stop the recorder inserting and compacting.
func TestQueriesDoNotHoldUpInserts(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	insert(t, st, track("adsb:A", "adsb", t0, time.Second, 10, 51, -1))
	reading, release := make(chan struct{}), make(chan struct{})
	queryDone := make(chan error, 1)
	go func() {
		first := true
		queryDone <- st.Area(ctx, AreaQuery{From: t0, To: t0.Add(time.Hour), Limit: 100}, func(*Point) error {
			if first {
				first = false
				close(reading)
				<-release
			}
			return nil
		})
	}()
	<-reading
	inserted := make(chan error, 1)
	go func() {
		_, err := st.Insert(ctx, track("adsb:A", "adsb", t0.Add(time.Minute), time.Second, 10, 51, -1))
		if err == nil {
			err = st.Compact(ctx)
		}
		inserted <- err
	}()
	select {
	case err := <-inserted:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second): // a deadlock, not a slow machine
		t.Fatal("Insert and Compact waited for a stalled query")
	}
	close(release)
	if err := <-queryDone; err != nil {
		t.Fatal(err)
	}
}

// TestQueriesSeeWholeInserts: queries running while batches are inserted
// and compacted see every batch whole or not at all, never a point twice
// (held and in a chunk) or missing.
func TestQueriesSeeWholeInserts(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 60; i++ {
			if _, err := st.Insert(ctx, track("adsb:A", "adsb", t0.Add(time.Duration(i)*10*time.Second), time.Second, 10, 51, -1)); err != nil {
				t.Error(err)
				return
			}
			if i%7 == 0 {
				if err := st.Compact(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		n, err := st.Count(ctx, "adsb:A", t0, t0.Add(time.Hour))
		var area int
		err2 := st.Area(ctx, AreaQuery{From: t0, To: t0.Add(time.Hour), Limit: 10000}, func(*Point) error { area++; return nil })
		if err != nil || err2 != nil || n%10 != 0 || area%10 != 0 {
			t.Fatalf("count %d, area %d (%v, %v): want whole batches of 10", n, area, err, err2)
		}
	}
	if n, _ := st.Count(ctx, "adsb:A", t0, t0.Add(time.Hour)); n != 600 {
		t.Fatalf("%d points at the end, want 600", n)
	}
}
