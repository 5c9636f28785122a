package history

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/internal/cputime"
	"github.com/cuasd/cuasd/output"
)

// benchEventFixes is a track event of an ADS-B track with an assessment,
// carrying n fixes: about 2 at real broadcast rates, 13 on average in the
// pipeline benchmark's paced phase.
func benchEventFixes(b *testing.B, n int) []byte {
	b.Helper()
	lat, lon, alt := 51.5, -0.1, 10000.0
	var hist []events.Point
	for i := range n {
		hist = append(hist, events.Point{T: t0.Add(time.Duration(i) * 77 * time.Millisecond), Lat: micro(lat + float64(i)*1.234567e-4), Lon: micro(lon + float64(i)*2.345678e-4), AltM: &alt})
	}
	ev := events.TrackEvent{
		Header: events.Header{V: events.Version, Type: events.TypeTrackUpdate, Time: t0, Instance: "default"},
		Track: events.Track{TrackID: "adsb:4CA1FA", Protocols: []string{"adsb"}, ICAO: "4CA1FA", Callsign: "RYR1AB",
			Lat: &lat, Lon: &lon, AltM: &alt, AltKind: "barometric", SpeedMps: f64(230), HeadingDeg: f64(90), VRateMps: f64(0),
			Sensors: []string{"rx1"}, FirstSeen: t0, LastSeen: t0, Observations: 100,
			History: hist},
		Assessment: &events.Assessment{Decision: "monitor", Lambda: 0.12, HumanDecision: true, Caps: []string{}},
	}
	data, err := json.Marshal(ev)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkRecorderInsert measures the recorder's whole insert path per
// event (13 fixes, as in the pipeline benchmark): the handler turning the
// event into points and queueing them — fed the typed event in process,
// as in cuasd serve, or decoding it from NATS, as in a process of its own
// — and the writer committing them in batches of 2048 points. Each event
// is a new time, so every point is new.
func BenchmarkRecorderInsert(b *testing.B) {
	const fixes, tracks = 13, 256
	// One event per track in a batch, as the recorder's batches (250 ms)
	// hold: tracks' events come at most once a second.
	data := benchEventFixes(b, fixes)
	evs := make([]events.TrackEvent, tracks)
	msgs := make([][]byte, tracks)
	for k := range evs {
		if err := json.Unmarshal(data, &evs[k]); err != nil {
			b.Fatal(err)
		}
		evs[k].Track.TrackID = fmt.Sprintf("adsb:%06X", k)
		msgs[k], _ = json.Marshal(&evs[k])
	}
	for _, fed := range []bool{true, false} {
		name := map[bool]string{true: "fed", false: "nats"}[fed]
		b.Run(name, func(b *testing.B) {
			st, err := Open(filepath.Join(b.TempDir(), "history.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			r := New(Config{Path: "unused", QueueLen: 1 << 20})
			batch := make([]Point, 0, tracks*fixes)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := i % tracks
				if fed {
					r.onTrackEvent("cuas.track.adsb.X", &evs[k])
				} else {
					r.onTrack(&nats.Msg{Subject: "cuas.track.adsb.X", Data: msgs[k]})
				}
				pts := <-r.q.C()
				for j := range pts { // every round of the tracks a second later
					pts[j].Time = pts[j].Time.Add(time.Duration(i/tracks) * time.Second)
				}
				batch = append(batch, pts...)
				if k == tracks-1 {
					if _, err := st.Insert(ctx, batch); err != nil {
						b.Fatal(err)
					}
					batch = batch[:0]
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(fixes*b.N), "ns/point")
		})
	}
}

// BenchmarkPointsOf is the handler's share: JSON decode and conversion,
// for an event of 2 fixes (real broadcast rates) and of 13 (the pipeline
// benchmark's paced phase).
func BenchmarkPointsOf(b *testing.B) {
	for _, n := range []int{2, 13} {
		b.Run(fmt.Sprintf("fixes=%d", n), func(b *testing.B) {
			data := benchEventFixes(b, n)
			dst := make([]Point, 0, 16)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				ev, err := decodeTrackEvent(data)
				if err != nil {
					b.Fatal(err)
				}
				dst = pointsOf(ev, "adsb", nil, dst[:0])
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*b.N), "ns/point")
		})
	}
}

// micro rounds a coordinate to 1e-6° as fusion does (fusion.Round).
func micro(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// BenchmarkStoreInsert is the store's share: batches of 2048 new points
// as the recorder commits them (runs of ~10 fixes of 200 tracks, each
// track's run its event's fixes since the previous one), compactions
// included (one every compactPoints points here, as no 30 s pass).
func BenchmarkStoreInsert(b *testing.B) { benchStoreInsert(b, false) }

// BenchmarkStoreInsertFed: batches as the recorder commits fed fixes
// (issue 30): every accepted fix in the order fusion accepted them, so a
// batch interleaves the tracks (200 tracks, 10 fixes each 100 ms apart,
// a second of traffic per batch), compactions included.
func BenchmarkStoreInsertFed(b *testing.B) { benchStoreInsert(b, true) }

// benchStoreInsert inserts a second of 200 tracks' 10 fixes a batch, each
// track's together (as events bring them) or interleaved (fed).
func benchStoreInsert(b *testing.B, fed bool) {
	st, err := Open(filepath.Join(b.TempDir(), "history.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	const tracks, perSecond = 200, 10
	batch := make([]Point, 0, tracks*perSecond)
	ids := make([]string, tracks)
	for k := range ids {
		ids[k] = fmt.Sprintf("adsb:%06X", k)
	}
	alt := 1000.0
	point := func(sec, j, k int) Point {
		p := Point{TrackID: ids[k], Protocol: "adsb", Sensor: "rx1", AltKind: "barometric", AltM: &alt,
			Time: t0.Add(time.Duration(sec)*time.Second + time.Duration(j)*100*time.Millisecond), Lat: micro(51 + float64(sec)*1e-4), Lon: micro(float64(k) * 1e-3)}
		if fed {
			p.Time, p.Lat = p.Time.Add(time.Duration(k)*time.Microsecond), micro(51+float64(sec*perSecond+j)*1e-5)
		}
		return p
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i, sec := 0, 0; i < b.N; sec++ {
		batch = batch[:0]
		for n := range tracks * perSecond {
			if fed {
				batch = append(batch, point(sec, n/tracks, n%tracks))
			} else {
				batch = append(batch, point(sec, n%perSecond, n/perSecond))
			}
		}
		if _, err := st.Insert(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
		i += len(batch)
	}
}

// BenchmarkRecorderFedFixes is the recorder's whole path per fed fix
// (issue 30): onFix on fusion's goroutine, then the writer turning the
// queued fixes into points and committing them (compactions included),
// the tracks interleaved as fusion accepts them. tracks=200: 2,000 fixes
// a flush, 10 per track. tracks=2209: the pipeline benchmark's paced
// phase (2,209 tracks, ~25,500 fixes a second, each track's fixes ~87 ms
// apart), 2,048 fixes a commit, so about one fix per track per commit:
// what the recorder costs per fix in that process, where the per-track
// work of a commit and a compaction is spread over few points.
func BenchmarkRecorderFedFixes(b *testing.B) {
	for _, c := range []struct{ tracks, perFlush int }{{200, 2000}, {2209, 2048}} {
		b.Run(fmt.Sprintf("tracks=%d", c.tracks), func(b *testing.B) { benchRecorderFedFixes(b, c.tracks, c.perFlush) })
	}
}

func benchRecorderFedFixes(b *testing.B, tracks, perFlush int) {
	st, err := Open(filepath.Join(b.TempDir(), "history.db"))
	if err != nil {
		b.Fatal(err)
	}
	fed, cpu := 0, cputime.Process()
	defer func() {
		// The close (the last compaction, the page cache let go) is not in
		// ns/op; the pipeline benchmark's window has it, so it is reported
		// beside, per fix, and in cpu-ns/op: the process's CPU time (the
		// pipeline benchmark's measure, steadier than the wall clock on a
		// loaded machine) from the first fix to the store closed.
		start := time.Now()
		if err := st.Close(); err != nil {
			b.Error(err)
		}
		n := float64(max(fed, 1))
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/n, "close-ns/op")
		if c := cputime.Process() - cpu; c > 0 {
			b.ReportMetric(float64(c.Nanoseconds())/n, "cpu-ns/op")
		}
	}()
	r := New(Config{Path: "unused"})
	ids := make([]string, tracks)
	for k := range ids {
		ids[k] = fmt.Sprintf("adsb:%06X", k)
	}
	// Each track's fixes ~87 ms apart, as at 25,500 fixes a second over
	// 2,209 tracks (and 100 ms over 200).
	step := int64(87*time.Millisecond) / int64(tracks)
	ctx := context.Background()
	// As fusion hands them: unrounded (CPR's positions, feet × 0.3048,
	// computed velocities).
	f := output.Fix{Protocol: "adsb", Sensor: "rx1", HasAlt: true, AltKind: "barometric", HasVel: true}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		fed++
		k, n := i%tracks, float64(i/tracks)
		f.TrackID, f.UnixNano = ids[k], t0.UnixNano()+int64(i)*step
		f.Lat, f.Lon = 51+n*1e-5*math.Pi/3, float64(k)*1e-3*math.E/2+n*1e-5/math.Sqrt2
		f.AltM = (30000 - 25*float64(i/tracks%200)) * 0.3048
		f.SpeedMps, f.HeadingDeg, f.VRateMps = 120+math.Sqrt(n), 90+1/(n+3), -0.3048*64/60
		r.onFix(&f)
		if i%perFlush == perFlush-1 {
			if err := r.commitFixes(ctx, st); err != nil {
				b.Fatal(err)
			}
		}
	}
}
