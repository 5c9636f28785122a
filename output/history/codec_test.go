package history

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// firstFormat are points packed by the first format (commit f88737d's
// codec, before packV2), as a chunk's data and as a pending record: stores
// written then must still read them.
var firstFormat = struct{ chunk, pending string }{
	chunk:   "000000000000c04940bfb67efacf9abfbf3100000000004a9340e17a14ae47e1da3f0a6261726f6d6574726963046164736203727831076d6f6e69746f7280cab5ee0134d93f4f03c04940e3c798bb9690bfbf10e17a14ae47e1da3f808c8d9e02c8bab88d06c04940d200de02098abfbf3f00000000004a93400000000000c86c400000000000805640000000000000f8bfe17a14ae47e1da3f0967656f6d65747269630461647362077278312c72783205616c657274",
	pending: "0b616473623a3443413146410380c0f080faf3dff5180000000000c04940bfb67efacf9abfbf3100000000004a9340e17a14ae47e1da3f0a6261726f6d6574726963046164736203727831076d6f6e69746f7280cab5ee0134d93f4f03c04940e3c798bb9690bfbf10e17a14ae47e1da3f808c8d9e02c8bab88d06c04940d200de02098abfbf3f00000000004a93400000000000c86c400000000000805640000000000000f8bfe17a14ae47e1da3f0967656f6d65747269630461647362077278312c72783205616c657274",
}

// firstFormatPoints are the points firstFormat packs.
func firstFormatPoints() []Point {
	base := time.Date(2026, 11, 26, 5, 0, 0, 0, time.UTC)
	alt, spd, hdg, vr, lam := 1234.5, 230.25, 90.0, -1.5, 0.42
	return []Point{
		{TrackID: "adsb:4CA1FA", Time: base, Lat: 51.5, Lon: -0.123456, AltM: &alt, AltKind: "barometric", Protocol: "adsb", Sensor: "rx1", Decision: "monitor", Lambda: &lam},
		{TrackID: "adsb:4CA1FA", Time: base.Add(500 * time.Millisecond), Lat: 51.500101, Lon: -0.1233, AltKind: "barometric", Protocol: "adsb", Sensor: "rx1", Decision: "monitor", Lambda: &lam},
		{TrackID: "adsb:4CA1FA", Time: base.Add(1100 * time.Millisecond), Lat: 51.50020000000001, Lon: -0.1232, AltM: &alt, SpeedMps: &spd, HeadingDeg: &hdg, VRateMps: &vr, AltKind: "geometric", Protocol: "adsb", Sensor: "rx1,rx2", Decision: "alert", Lambda: &lam},
	}
}

// secondFormat are points packed by the second format (packV2, every
// velocity whole; commit 860f0b9's codec), as a chunk's data and as a
// pending record: stores written then must still read them.
var secondFormat = struct{ chunk, pending string }{
	chunk:   "0100f1c0cf8e31ff880ff2c001e17a14ae47e1da3f0a6261726f6d6574726963046164736203727831076d6f6e69746f7280cab5ee0150ca01b802808c8d9e023fc8bab88d06c04940d200de02098abfbf00000000004a93400000000000c86c400000000000805640000000000000f8bf0967656f6d65747269630461647362077278312c72783205616c65727480cee4cd025f90039003b8020ad7a3703df26c403333333333d356400000000000001ac0",
	pending: "0b616473623a344341314641040180c0f080faf3dff518f1c0cf8e31ff880ff2c001e17a14ae47e1da3f0a6261726f6d6574726963046164736203727831076d6f6e69746f7280cab5ee0150ca01b802808c8d9e023fc8bab88d06c04940d200de02098abfbf00000000004a93400000000000c86c400000000000805640000000000000f8bf0967656f6d65747269630461647362077278312c72783205616c65727480cee4cd025f90039003b8020ad7a3703df26c403333333333d356400000000000001ac0",
}

// secondFormatPoints are the points secondFormat packs: the first
// format's, and a compact position with a velocity (whole in the second
// format, compact in the third).
func secondFormatPoints() []Point {
	pts := firstFormatPoints()
	alt, spd, hdg, vr := 1250.1, 231.57, 91.3, -6.5
	p := pts[2]
	p.Time, p.Lat, p.Lon, p.AltM, p.SpeedMps, p.HeadingDeg, p.VRateMps = p.Time.Add(700*time.Millisecond), 51.500301, -0.1231, &alt, &spd, &hdg, &vr
	return append(pts, p)
}

func TestReadsSecondFormat(t *testing.T) {
	want := secondFormatPoints()
	chunk := checkReadsFormat(t, secondFormat.chunk, secondFormat.pending, want)
	// The third format packs the same points, the last one's velocity
	// compact: 23157, 913 and -650 as zigzag varints (3 + 2 + 2 bytes)
	// where they took 3 × 8.
	c := chunksOf(want, chunkBytes(pageSize))[0]
	if len(c.data) != len(chunk)-17 || c.data[0] != packV3 {
		t.Errorf("the third format packs them in %d bytes (marker %#x), want %d", len(c.data), c.data[0], len(chunk)-17)
	}
}

func TestReadsFirstFormat(t *testing.T) {
	checkReadsFormat(t, firstFormat.chunk, firstFormat.pending, firstFormatPoints())
}

// checkReadsFormat fails unless a chunk's data and a pending record (in
// hex) read back as want; it returns the chunk's bytes.
func checkReadsFormat(t *testing.T, chunkHex, pendingHex string, want []Point) []byte {
	t.Helper()
	chunk, _ := hex.DecodeString(chunkHex)
	var got []Point
	if err := eachPoint(chunk, want[0].Time.UnixNano(), want[0].TrackID, func(p *Point) error { got = append(got, *p); return nil }); err != nil {
		t.Fatal(err)
	}
	checkSamePoints(t, "chunk", got, want)
	pending, _ := hex.DecodeString(pendingHex)
	got, err := unpackPending(pending, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkSamePoints(t, "pending", got, want)
	return chunk
}

// checkSamePoints fails unless got and want are the same points, every
// float bit for bit.
func checkSamePoints(t *testing.T, what string, got, want []Point) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d points, want %d", what, len(got), len(want))
	}
	bits := func(v *float64) any {
		if v == nil {
			return nil
		}
		return math.Float64bits(*v)
	}
	for i := range want {
		g, w := &got[i], &want[i]
		same := g.TrackID == w.TrackID && g.Time.Equal(w.Time) && g.Time.Location() == time.UTC &&
			math.Float64bits(g.Lat) == math.Float64bits(w.Lat) && math.Float64bits(g.Lon) == math.Float64bits(w.Lon) &&
			bits(g.AltM) == bits(w.AltM) && bits(g.SpeedMps) == bits(w.SpeedMps) && bits(g.HeadingDeg) == bits(w.HeadingDeg) &&
			bits(g.VRateMps) == bits(w.VRateMps) && bits(g.Lambda) == bits(w.Lambda) &&
			g.AltKind == w.AltKind && g.Protocol == w.Protocol && g.Sensor == w.Sensor && g.Decision == w.Decision
		if !same {
			t.Fatalf("%s: point %d\n got  %s\n want %s", what, i, describe(g), describe(w))
		}
	}
}

func describe(p *Point) string {
	f := func(v *float64) string {
		if v == nil {
			return "nil"
		}
		return formatFloat(*v)
	}
	return p.TrackID + " " + p.Time.Format(time.RFC3339Nano) + " " + formatFloat(p.Lat) + "," + formatFloat(p.Lon) +
		" alt " + f(p.AltM) + " spd " + f(p.SpeedMps) + " hdg " + f(p.HeadingDeg) + " vr " + f(p.VRateMps) + " Λ " + f(p.Lambda) +
		" [" + p.AltKind + "|" + p.Protocol + "|" + p.Sensor + "|" + p.Decision + "]"
}

// formatFloat shows v and its bits (-0 and NaNs differ only there).
func formatFloat(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64) + "/" + strconv.FormatUint(math.Float64bits(v), 16)
}

// randomPoints are n points of one track, in time order, mixing what
// fusion makes (positions in 1e-6°, altitudes in 0.1 m: compact) with
// values that are not (more digits, -0, NaN, ±Inf, huge), and measurements,
// Λ and strings that come, go, repeat and change.
func randomPoints(rng *rand.Rand, n int) []Point {
	odd := []float64{math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1e300, -1e-300, 9007199254.740993, 0.1 + 0.2}
	value := func(scale float64) float64 {
		switch rng.IntN(6) {
		case 0:
			return odd[rng.IntN(len(odd))]
		case 1:
			return rng.NormFloat64() * 100
		}
		return math.Round(rng.NormFloat64()*100*scale) / scale
	}
	opt := func(scale float64) *float64 {
		if rng.IntN(3) == 0 {
			return nil
		}
		v := value(scale)
		return &v
	}
	var pts []Point
	tm := t0.UnixNano()
	var lambda *float64
	strs := [][4]string{{"barometric", "adsb", "rx1", "monitor"}, {"geometric", "adsb", "rx1,rx2", "alert"}, {"", "", "", ""}}
	s := strs[0]
	for range n {
		tm += 1 + rng.Int64N(int64(3*time.Second))
		if rng.IntN(4) == 0 {
			l := value(1e3)
			lambda = &l
		} else if rng.IntN(6) == 0 {
			lambda = nil
		}
		if rng.IntN(5) == 0 {
			s = strs[rng.IntN(len(strs))]
		}
		pts = append(pts, Point{TrackID: "rid:X", Time: time.Unix(0, tm).UTC(), Lat: value(1e6), Lon: value(1e6), AltM: opt(10),
			SpeedMps: opt(10), HeadingDeg: opt(10), VRateMps: opt(10), Lambda: lambda, AltKind: s[0], Protocol: s[1], Sensor: s[2], Decision: s[3]})
	}
	return pts
}

// TestPackedPointsRoundTrip packs random points as a pending run and as
// chunks and reads every one back bit for bit.
func TestPackedPointsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		want := randomPoints(rng, 1+rng.IntN(600))
		got, err := unpackPending(packPending(nil, []run{{id: "rid:X", pts: want}}), nil)
		if err != nil {
			t.Fatalf("round %d: pending: %v", round, err)
		}
		checkSamePoints(t, "pending", got, want)
		got = got[:0]
		for _, c := range chunksOf(want, chunkBytes(pageSize)) {
			if err := c.points(func(p *Point) error { got = append(got, *p); return nil }); err != nil {
				t.Fatalf("round %d: chunk: %v", round, err)
			}
		}
		checkSamePoints(t, "chunks", got, want)
	}
}

// TestFusionPointsAreCompact: a fix as fusion makes it (1e-6°, 0.1 m) is
// packed in a few bytes, the aim of the second format.
func TestFusionPointsAreCompact(t *testing.T) {
	var pts []Point
	alt, lam := 10000.0, 0.12
	for i := range 100 {
		lat := math.Round((51.5+float64(i)*1.7e-4)*1e6) / 1e6
		lon := math.Round((-0.1+float64(i)*2.9e-4)*1e6) / 1e6
		a := math.Round((alt+float64(i)*7.6)*10) / 10
		pts = append(pts, Point{TrackID: "adsb:4CA1FA", Time: t0.Add(time.Duration(i) * 450 * time.Millisecond), Lat: lat, Lon: lon, AltM: &a,
			AltKind: "barometric", Protocol: "adsb", Sensor: "rx1", Decision: "monitor", Lambda: &lam})
	}
	c := chunksOf(pts, chunkBytes(pageSize))[0]
	// The first point ~40 bytes with its strings and Λ; then each the
	// time (5 bytes for 0.45 s in nanoseconds), flags (1), and lat, lon
	// and alt deltas (2 each); 37 bytes in the first format.
	if per := float64(len(c.data)) / float64(len(pts)); per > 13 {
		t.Fatalf("%.1f bytes a point, want at most 13", per)
	}
}

// FuzzPackedPoints: any bytes as a chunk's data or a pending record give
// points or an error, never a panic.
func FuzzPackedPoints(f *testing.F) {
	chunk, _ := hex.DecodeString(firstFormat.chunk)
	pending, _ := hex.DecodeString(firstFormat.pending)
	f.Add(chunk)
	f.Add(pending)
	chunk, _ = hex.DecodeString(secondFormat.chunk)
	pending, _ = hex.DecodeString(secondFormat.pending)
	f.Add(chunk)
	f.Add(pending)
	rng := rand.New(rand.NewPCG(5, 6))
	f.Add(chunksOf(randomPoints(rng, 5), chunkBytes(pageSize))[0].data)
	f.Add(packPending(nil, []run{{id: "x", pts: randomPoints(rng, 5)}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = eachPoint(b, 0, "x", func(*Point) error { return nil })
		_, _ = unpackPending(b, nil)
	})
}

// TestStoredBytesPerFix: fixes as fusion makes them take about what they
// pack into once stored — chunk rows stay in their b-tree pages instead of
// each spilling a few hundred bytes into an overflow page of its own
// (36 bytes a fix before chunkBytes), with the pages of a new database
// and with the 4 KiB pages of one created before pageSize.
func TestStoredBytesPerFix(t *testing.T) {
	for _, page := range []int{0, 4096} {
		t.Run(fmt.Sprintf("page_size=%d", page), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history.db")
			if page != 0 { // a database created with 4 KiB pages
				db, err := sql.Open("sqlite", "file:"+path+"?_pragma=page_size(4096)&_pragma=journal_mode(WAL)")
				if err == nil {
					_, err = db.Exec(schema)
				}
				if err != nil || db.Close() != nil {
					t.Fatal(err)
				}
			}
			st, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var got int
			if err := st.db.QueryRow(`PRAGMA page_size`).Scan(&got); err != nil || got != cmp.Or(page, pageSize) {
				t.Fatalf("page size %d (%v), want %d", got, err, cmp.Or(page, pageSize))
			}
			checkBytesPerFix(t, st)
		})
	}
}

func checkBytesPerFix(t *testing.T, st *Store) {
	t.Helper()
	alt := 1000.0
	const tracks, perTrack = 20, 3600
	for k := range tracks {
		pts := make([]Point, 0, perTrack)
		for s := range perTrack { // 1 Hz for an hour, 0.1 m of altitude apart
			a := math.Round((alt+float64(s%50))*10) / 10
			pts = append(pts, Point{TrackID: "adsb:" + strconv.Itoa(k), Protocol: "adsb", Sensor: "rx1", AltKind: "barometric", Decision: "monitor",
				Time: t0.Add(time.Duration(s) * time.Second), Lat: math.Round((50+float64(k)+float64(s)*1e-5)*1e6) / 1e6,
				Lon: math.Round((float64(s)*2e-5)*1e6) / 1e6, AltM: &a})
		}
		insert(t, st, pts)
	}
	stats, err := st.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if per := float64(stats.Bytes) / float64(stats.Points); stats.Points != tracks*perTrack || per > 16 {
		t.Fatalf("%d points in %d bytes of pages: %.1f bytes a fix, want at most 16", stats.Points, stats.Bytes, per)
	}
}

// packPending is the first pending-log format's writer (before the log
// recorded the chunks' own bytes, chunklog.go), kept to check that its
// records are still read: per run, its track id, its number of points and
// the points packed after time 0.
func packPending(b []byte, runs []run) []byte {
	for _, r := range runs {
		if len(r.pts) > 0 {
			b = appendString(b, r.id)
			b = binary.AppendUvarint(b, uint64(len(r.pts)))
			b = appendPoints(b, 0, r.pts)
		}
	}
	return b
}
