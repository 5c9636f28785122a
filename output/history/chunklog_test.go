package history

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// logBatches are the batches of the golden first-format pending log
// (testdata/pending-v1.hex: commit 726cb23's Store inserted them and was
// killed): interleaved tracks, measurements and strings that come and
// change, a point older than its track's newest held one, a repeat, a
// second track of another protocol.
func logBatches() [][]Point {
	a := func(ms int, lat, lon float64) Point {
		return Point{TrackID: "adsb:4CA1FA", Protocol: "adsb", Sensor: "rx1", Time: t0.Add(time.Duration(ms) * time.Millisecond),
			Lat: lat, Lon: lon, AltM: f64(10363.2), AltKind: "barometric", SpeedMps: f64(231.57), HeadingDeg: f64(91.3), VRateMps: f64(-6.5)}
	}
	d := func(ms int, lat, lon float64) Point {
		return Point{TrackID: "remoteid:1581F5FJD", Protocol: "remoteid", Sensor: "rid1,rid2", Time: t0.Add(time.Duration(ms) * time.Millisecond),
			Lat: lat, Lon: lon, Decision: "alert", Lambda: f64(0.73)}
	}
	b1 := []Point{a(0, 51.5, -0.123456), d(10, 52.1, 4.3), a(500, 51.500101, -0.1233), d(1010, 52.100011, 4.300012)}
	b2 := []Point{a(1100, 51.5002, -0.1232), a(700, 51.50015, -0.12325), d(2010, 52.100022, 4.3000231)}
	b2[0].Decision, b2[0].Lambda = "monitor", f64(0.12)
	b3 := []Point{a(1100, 51.5002, -0.1232), d(3010, 52.1, 4.3)}
	b3[1].AltM, b3[1].AltKind = f64(120.5), "geometric"
	return [][]Point{b1, b2, b3}
}

// modelTracks is every track's points of m in time order.
func modelTracks(m model) map[string][]Point {
	out := map[string][]Point{}
	for id, pts := range m {
		for _, p := range pts {
			out[id] = append(out[id], p)
		}
		slices.SortFunc(out[id], func(a, b Point) int { return a.Time.Compare(b.Time) })
	}
	return out
}

// checkStoreHolds fails unless st holds exactly m's points, every value
// bit for bit.
func checkStoreHolds(t *testing.T, st *Store, m model) {
	t.Helper()
	for id, want := range modelTracks(m) {
		got := collectTrack(t, st, TrackQuery{ID: id, From: t0.Add(-time.Hour), To: t0.Add(240 * time.Hour)})
		checkSamePoints(t, id, got, want)
	}
}

// reopen kills st and opens its database again, reading its pending log.
func reopen(t *testing.T, st *Store, path string) *Store {
	t.Helper()
	kill(st)
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// TestReadsFirstPendingLog: a pending log of the first format (each
// run's points packed on their own), left by a killed cuasd of before,
// is read back — with a torn record after it too — and the log is of
// the second format from then on.
func TestReadsFirstPendingLog(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "pending-v1.hex"))
	if err != nil {
		t.Fatal(err)
	}
	golden, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	m := model{}
	for _, b := range logBatches() {
		m.add(b)
	}
	for _, torn := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "history.db")
		log := slices.Clone(golden)
		if torn {
			log = append(log, 90, 0, 0, 0, 1, 2, 3, 4, 11, 'a', 'd', 's') // cut short
		}
		if err := os.WriteFile(path+".pending", log, 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		checkStoreHolds(t, st, m)
		if data, err := os.ReadFile(path + ".pending"); err != nil || string(data) != pendingMagic {
			t.Fatalf("torn %v: the log after Open is %q (%v), want only the second format's header", torn, data, err)
		}
		// What follows is logged in the second format and read back.
		more := track("adsb:4CA1FA", "adsb", t0.Add(time.Minute), time.Second, 5, 51.6, -0.1)
		insert(t, st, more)
		m.add(more)
		st = reopen(t, st, path)
		checkStoreHolds(t, st, m)
		_ = st.Close()
		for _, b := range more {
			delete(m[b.TrackID], b.Time.UnixNano())
		}
	}
}

// randomBatches are batches of a few tracks' points as a recorder
// commits them: mostly new, each track's in time order, interleaved, with
// strings and measurements that change (randomPoints), now and then a
// point older than its track's newest (the held chunks packed again), a
// repeat, or a track's points over more than a chunk holds.
// storable makes the i-th of randomPoints' points one Insert stores
// (checkPoints): a position on the globe, measurements finite; extreme
// values that are storable (1e300, -0, tiny) stay.
func storable(p *Point, i int) {
	if !(p.Lat >= -90 && p.Lat <= 90) || !(p.Lon >= -180 && p.Lon <= 180) {
		p.Lat, p.Lon = 1e-6*float64(i), -2e-6*float64(i)
	}
	for _, v := range []**float64{&p.AltM, &p.SpeedMps, &p.HeadingDeg, &p.VRateMps, &p.Lambda} {
		if !finite(*v) {
			x := math.Copysign(1e300, **v)
			*v = &x
		}
	}
}

func randomBatches(rng *rand.Rand, n int) [][]Point {
	ids := []string{"adsb:A", "adsb:B", "remoteid:C", "mavlink:D"}
	streams := make([][]Point, len(ids))
	for k := range streams {
		streams[k] = randomPoints(rng, 300+rng.IntN(900))
		for i := range streams[k] {
			p := &streams[k][i]
			p.TrackID = ids[k]
			storable(p, i)
		}
	}
	var out [][]Point
	next := make([]int, len(ids))
	for range n {
		var b []Point
		for range 1 + rng.IntN(120) {
			k := rng.IntN(len(ids))
			if next[k] == len(streams[k]) {
				continue
			}
			p := streams[k][next[k]]
			switch rng.IntN(25) {
			case 0: // older than held ones, unless it is a repeat
				if next[k] > 3 {
					p = streams[k][next[k]-3]
					p.Time = p.Time.Add(time.Nanosecond)
				}
			case 1:
				if next[k] > 0 {
					p = streams[k][next[k]-1]
				}
			default:
				next[k]++
			}
			b = append(b, p)
		}
		out = append(out, b)
	}
	return out
}

// heldImage is what a store holds in memory, chunk by chunk, by track.
func heldImage(st *Store) map[string][]chunk {
	out := map[string][]chunk{}
	for _, t := range st.holding {
		for _, c := range t.held {
			cc := *c
			cc.data = slices.Clone(c.data)
			out[t.id] = append(out[t.id], cc)
		}
	}
	return out
}

// replayedImage is the chunks a pending log's records rebuild, by track.
func replayedImage(t *testing.T, path string) map[string][]chunk {
	t.Helper()
	l, records, first, err := openPendingLog(path)
	if err != nil || first {
		t.Fatalf("pending log: first format %v, %v", first, err)
	}
	defer l.close()
	r := chunkReplay{byID: map[string]*replayedTrack{}}
	for _, rec := range records {
		if err := r.record(rec); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string][]chunk{}
	for _, tr := range r.tracks {
		for i, data := range tr.chunks {
			out[tr.id] = append(out[tr.id], chunk{t0: tr.t0s[i], data: data})
		}
	}
	return out
}

// checkSameChunks fails unless the chunks of got and want have the same
// start times and packed bytes (and, when withState, the same time
// ranges, boxes, counts and packing state).
func checkSameChunks(t *testing.T, got, want map[string][]chunk, withState bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d tracks, want %d", len(got), len(want))
	}
	for id, w := range want {
		g := got[id]
		if len(g) != len(w) {
			t.Fatalf("%s: %d chunks, want %d", id, len(g), len(w))
		}
		for i := range w {
			if g[i].t0 != w[i].t0 || string(g[i].data) != string(w[i].data) {
				t.Fatalf("%s chunk %d: t0 %d, %x\nwant t0 %d, %x", id, i, g[i].t0, g[i].data, w[i].t0, w[i].data)
			}
			a, b := g[i], w[i]
			a.data, b.data = nil, nil
			if withState && !sameChunkState(&a, &b) {
				t.Fatalf("%s chunk %d: %+v\nwant %+v", id, i, a, b)
			}
		}
	}
}

func sameChunkState(a, b *chunk) bool {
	return a.track == b.track && a.t0 == b.t0 && a.t1 == b.t1 && a.n == b.n && a.protocol == b.protocol &&
		sameBits(a.minLat, b.minLat) && sameBits(a.maxLat, b.maxLat) && sameBits(a.minLon, b.minLon) && sameBits(a.maxLon, b.maxLon) &&
		samePackState(a.st, b.st) && sameStrings(&a.last, &b.last)
}

// samePackState compares two packing states, Λ by its bits (NaN too).
func samePackState(a, b packState) bool {
	la, lb := a.lambda, b.lambda
	a.lambda, b.lambda = 0, 0
	return a == b && sameBits(la, lb)
}

func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b)
}

// TestPendingLogRebuildsTheHeldChunks: the second format's records
// rebuild, byte for byte, the chunks the store held — appended to, new,
// packed again — and a killed store's points are read back, every value
// bit for bit; compactions in between empty the log.
func TestPendingLogRebuildsTheHeldChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 2))
	st, path := openTemp(t)
	m := model{}
	for round := range 6 {
		for _, b := range randomBatches(rng, 40) {
			insert(t, st, b)
			m.add(b)
			checkSameChunks(t, replayedImage(t, path+".pending"), heldImage(st), false)
		}
		st = reopen(t, st, path)
		checkStoreHolds(t, st, m)
		if round%2 == 1 {
			if err := st.Compact(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestPendingLogWriteFails: when the log's write fails, Insert fails,
// the chunks held are as before it (bytes, ranges, packing state), and
// the next Inserts are logged and read back after a kill — the tracks the
// failed record named among them, named again.
func TestPendingLogWriteFails(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 3))
	st, path := openTemp(t)
	m := model{}
	batches := randomBatches(rng, 60)
	for i, b := range batches {
		if i%7 != 3 {
			insert(t, st, b)
			m.add(b)
			continue
		}
		if i%2 == 0 {
			// The failed record is the first after the log was emptied:
			// it names the tracks, and the next must name them again.
			if err := st.Compact(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		insertLogUnwritable(t, st, path, fmt.Sprintf("batch %d: Insert of %d points", i, len(b)), func() (int, error) {
			return st.Insert(context.Background(), b)
		})
	}
	st = reopen(t, st, path)
	checkStoreHolds(t, st, m)
}

// insertLogUnwritable runs insert with st's pending log (at path) open
// read-only, so that its write fails, and fails unless insert returns an
// error and leaves the held chunks as they were (bytes, ranges, packing
// state).
func insertLogUnwritable(t *testing.T, st *Store, path, what string, insert func() (int, error)) {
	t.Helper()
	before := heldImage(st)
	good := st.log.f
	ro, err := os.Open(path + ".pending")
	if err != nil {
		t.Fatal(err)
	}
	st.log.f = ro
	n, err := insert()
	st.log.f = good
	_ = ro.Close()
	if err == nil {
		t.Fatalf("%s returned %d and no error with the log unwritable", what, n)
	}
	checkSameChunks(t, heldImage(st), before, true)
}

// TestPendingLogTornRecord: a record of the second format cut anywhere
// (a kill mid-write) is ignored with what follows, the records before it
// read back.
func TestPendingLogTornRecord(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 4))
	st, path := openTemp(t)
	batches := randomBatches(rng, 3)
	m := model{}
	for _, b := range batches[:2] {
		insert(t, st, b)
		m.add(b)
	}
	before, err := os.ReadFile(path + ".pending")
	if err != nil {
		t.Fatal(err)
	}
	insert(t, st, batches[2])
	kill(st)
	whole, err := os.ReadFile(path + ".pending")
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{1, 4, 8, 9, (len(whole) - len(before)) / 2, len(whole) - len(before) - 1} {
		dir := t.TempDir()
		p := filepath.Join(dir, "history.db")
		copyFile(t, path, p)
		if err := os.WriteFile(p+".pending", whole[:len(before)+cut], 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		checkStoreHolds(t, st, m)
		_ = st.Close()
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// FuzzChunkLog: any bytes as a second-format record rebuild chunks or
// give an error, never a panic, and what they rebuild unpacks or errs.
func FuzzChunkLog(f *testing.F) {
	rng := rand.New(rand.NewPCG(30, 5))
	dir := f.TempDir()
	st, err := Open(filepath.Join(dir, "history.db"))
	if err != nil {
		f.Fatal(err)
	}
	for _, b := range randomBatches(rng, 4) {
		if _, err := st.Insert(context.Background(), b); err != nil {
			f.Fatal(err)
		}
		f.Add(slices.Clone(st.pend))
	}
	kill(st)
	f.Add([]byte{segTrack, 0, 1, 'x', segChunk, 0, 0, 2, packV3, 0})
	f.Add([]byte{segAppend, 0, 1, 0})
	f.Fuzz(func(t *testing.T, rec []byte) {
		_, _ = replayChunkLog([][]byte{rec, rec}, nil)
	})
}
