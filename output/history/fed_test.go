package history

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// randomFed is n batches of fed points of four tracks, interleaved:
// unrounded values (some rounding to −0, some unknown), decisions, Λ and
// strings that come and change, times mostly increasing by track and now
// and then a repeat or older than the track's newest (which the recorder
// never hands, but the store must still store right).
func randomFed(rng *rand.Rand, n int) [][]fedPoint {
	ids := []string{"adsb:A", "adsb:B", "remoteid:C", "mavlink:D"}
	last := make([]int64, len(ids))
	strs := [][4]string{{"barometric", "adsb", "rx1", "monitor"}, {"geometric", "adsb", "rx1,rx2", "alert"}, {"", "remoteid", "", ""}}
	v := func(scale float64) float64 {
		if rng.IntN(8) == 0 {
			return -rng.Float64() / scale / 3 // rounds to −0
		}
		return (rng.Float64() - 0.5) * 170
	}
	var out [][]fedPoint
	for range n {
		var b []fedPoint
		for range 1 + rng.IntN(150) {
			k := rng.IntN(len(ids))
			switch rng.IntN(30) {
			case 0: // a repeat
			case 1: // older
				last[k] -= rng.Int64N(int64(5 * time.Second))
			default:
				last[k] += 1 + rng.Int64N(int64(2*time.Second))
			}
			s := strs[rng.IntN(len(strs))]
			if rng.IntN(4) > 0 {
				s = strs[k%2]
			}
			p := fedPoint{id: ids[k], t: t0.UnixNano() + int64(k)*int64(time.Millisecond) + last[k], protocol: s[1], sensor: s[2]}
			p.setUnit(0, v(1e6))
			p.setUnit(1, v(1e6))
			if rng.IntN(3) > 0 {
				p.hasAlt, p.altKind = true, s[0]
				p.setUnit(2, v(10))
			}
			if rng.IntN(3) > 0 {
				p.hasVel = true
				p.setUnit(3, v(100))
				p.setUnit(4, v(10))
				p.setUnit(5, v(100))
			}
			if rng.IntN(3) > 0 {
				p.decision, p.hasLambda, p.lambda = s[3], true, float64(rng.IntN(4))/8
			}
			b = append(b, p)
		}
		out = append(out, b)
	}
	return out
}

// TestFedPointsStoreAsPoints: fed points packed straight into their
// tracks' chunks (insertFed) make the chunks Insert makes of the same
// points — byte for byte, time ranges, boxes and packing state — and
// count the same new points, through repeats, older points, compactions
// and the points then older than the chunks; a killed store reads them
// back from its pending log.
func TestFedPointsStoreAsPoints(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 5))
	fed, path := openTemp(t)
	pts, _ := openTemp(t)
	ctx := context.Background()
	m := model{}
	for i, b := range randomFed(rng, 200) {
		as := fedPoints(b)
		n, err := fed.insertFed(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		if want := insert(t, pts, as); n != want {
			t.Fatalf("batch %d: insertFed stored %d points, Insert %d", i, n, want)
		}
		m.add(as)
		checkSameChunks(t, heldImage(fed), heldImage(pts), true)
		if i%50 == 49 {
			for _, st := range []*Store{fed, pts} {
				if err := st.Compact(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	checkStoreHolds(t, fed, m)
	fed = reopen(t, fed, path)
	checkStoreHolds(t, fed, m)
}

// TestFedBatchRefusedWhole: a fed batch holding a point Insert cannot
// store (a position off the globe or not a number, a measurement not
// finite) is refused whole, nothing of it held, as Insert refuses it.
func TestFedBatchRefusedWhole(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	for _, bad := range []func(*fedPoint){
		func(p *fedPoint) { p.setUnit(0, math.NaN()) },
		func(p *fedPoint) { p.setUnit(1, 180.0000006) },
		func(p *fedPoint) { p.hasAlt = true; p.setUnit(2, math.Inf(-1)) },
		func(p *fedPoint) { p.hasVel = true; p.setUnit(4, math.NaN()) },
		func(p *fedPoint) { p.hasLambda, p.lambda = true, math.NaN() },
	} {
		b := make([]fedPoint, 3)
		for i := range b {
			b[i] = fedPoint{id: "adsb:A", t: t0.UnixNano() + int64(i), protocol: "adsb"}
			b[i].setUnit(0, 51)
			b[i].setUnit(1, -1)
		}
		bad(&b[1])
		if n, err := st.insertFed(ctx, b); err == nil {
			t.Errorf("%+v: stored %d points, want the batch refused", b[1], n)
		}
		if st.heldN != 0 {
			t.Fatalf("%d points held after a refused batch", st.heldN)
		}
	}
}

// TestFedLogWriteFails: when the pending log's write fails, insertFed
// fails and the held chunks are as before it; what follows is logged and
// read back after a kill.
func TestFedLogWriteFails(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 6))
	st, path := openTemp(t)
	ctx := context.Background()
	m := model{}
	for i, b := range randomFed(rng, 40) {
		if i%7 != 3 {
			if _, err := st.insertFed(ctx, b); err != nil {
				t.Fatal(err)
			}
			m.add(fedPoints(b))
			continue
		}
		insertLogUnwritable(t, st, path, fmt.Sprintf("batch %d: insertFed of %d points", i, len(b)), func() (int, error) {
			return st.insertFed(ctx, b)
		})
	}
	st = reopen(t, st, path)
	checkStoreHolds(t, st, m)
}

// FuzzFedPacksAsPoint: a fed point that is storable packs into the bytes
// (and chunk state) its Point packs into, after a first point or not.
func FuzzFedPacksAsPoint(f *testing.F) {
	f.Add(51.4775, -0.4614, 10363.2, 231.57, 91.3, -6.5, 0.25, byte(0xff))
	f.Add(-1e-7, 179.9999996, -0.04, 0.0, 359.96, 1e-9, 0.0, byte(0x03))
	f.Add(90.0, -180.0, 1e12, -1e9, 1e-300, -0.005, -1.5, byte(0x11))
	f.Fuzz(func(t *testing.T, lat, lon, alt, speed, heading, vrate, lambda float64, which byte) {
		p := fedPoint{id: "adsb:A", t: t0.UnixNano(), protocol: "adsb", sensor: "rx1"}
		p.setUnit(0, lat)
		p.setUnit(1, lon)
		if which&1 != 0 {
			p.hasAlt, p.altKind = true, "barometric"
			p.setUnit(2, alt)
		}
		if which&2 != 0 {
			p.hasVel = true
			p.setUnit(3, speed)
			p.setUnit(4, heading)
			p.setUnit(5, vrate)
		}
		if which&4 != 0 {
			p.hasLambda, p.lambda, p.decision = true, lambda, "monitor"
		}
		if !p.storable() {
			return
		}
		var fed, pts chunk
		if which&8 != 0 { // after a first point, with other values
			first := fedPoint{id: "adsb:A", t: p.t - 1, protocol: "adsb", sensor: "rx2", hasAlt: true, hasLambda: which&16 != 0, lambda: lambda}
			fed.addFed(&first)
			q := first.point()
			pts.add(&q)
		}
		fed.addFed(&p)
		q := p.point()
		pts.add(&q)
		if string(fed.data) != string(pts.data) || !sameChunkState(&fed, &pts) {
			t.Fatalf("%+v: fed packs %x, its Point %x", p, fed.data, pts.data)
		}
	})
}

// TestFedTrackHandle: a fed point's track handle (the recorder's) spares
// the store's look-up only while it is valid: once retention has
// forgotten the track, or in another store, the point's track is looked
// up again — held in a state the store does not know, its points would
// be missing from queries until the next compaction.
func TestFedTrackHandle(t *testing.T) {
	ctx := context.Background()
	var h trackHandle
	fed := func(st *Store, from, n int) {
		t.Helper()
		fps := make([]fedPoint, n)
		for i := range fps {
			fps[i] = fedPoint{id: "adsb:H", t: t0.Add(time.Duration(from+i) * time.Second).UnixNano(), protocol: "adsb", h: &h}
			fps[i].setUnit(0, 51)
			fps[i].setUnit(1, float64(from+i)*1e-4)
		}
		if k, err := st.insertFed(ctx, fps); err != nil || k != n {
			t.Fatalf("insertFed stored %d of %d (%v)", k, n, err)
		}
	}
	held := func(st *Store, want int) {
		t.Helper()
		if got := collectTrack(t, st, TrackQuery{ID: "adsb:H", From: t0, To: t0.Add(time.Hour)}); len(got) != want {
			t.Fatalf("%d points, want %d", len(got), want)
		}
	}
	a, _ := openTemp(t)
	fed(a, 0, 10)
	if h.st != a || h.t == nil {
		t.Fatalf("handle %+v after the first points, want one of the store", h)
	}
	// Retention deletes the first 10 (compacted) and forgets the track,
	// which holds nothing.
	if _, err := a.Prune(ctx, t0.Add(time.Hour), time.Hour-10*time.Second, 0); err != nil {
		t.Fatal(err)
	}
	fed(a, 20, 5)
	held(a, 5)
	b, _ := openTemp(t)
	fed(b, 0, 3)
	held(b, 3)
	held(a, 5)
}
