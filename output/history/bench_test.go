package history

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/events"
)

// benchEvent is a typical track event: an ADS-B track with the two fixes
// received since its previous event and an assessment.
func benchEvent(b *testing.B) []byte {
	b.Helper()
	lat, lon, alt := 51.5, -0.1, 10000.0
	ev := events.TrackEvent{
		Header: events.Header{V: events.Version, Type: events.TypeTrackUpdate, Time: t0, Instance: "default"},
		Track: events.Track{TrackID: "adsb:4CA1FA", Protocols: []string{"adsb"}, ICAO: "4CA1FA", Callsign: "RYR1AB",
			Lat: &lat, Lon: &lon, AltM: &alt, AltKind: "barometric", SpeedMps: f64(230), HeadingDeg: f64(90), VRateMps: f64(0),
			Sensors: []string{"rx1"}, FirstSeen: t0, LastSeen: t0, Observations: 100,
			History: []events.Point{{T: t0, Lat: lat, Lon: lon, AltM: &alt}, {T: t0.Add(500 * time.Millisecond), Lat: lat, Lon: lon + 1e-3, AltM: &alt}}},
		Assessment: &events.Assessment{Decision: "monitor", Lambda: 0.12, HumanDecision: true, Caps: []string{}},
	}
	data, err := json.Marshal(ev)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkRecorderInsert measures the recorder's whole insert path per
// event (2 fixes): the subscription handler decoding the event into points
// and queueing them, and the writer committing them in batches of 2048
// points. Each event is a new time, so every point is a new row.
func BenchmarkRecorderInsert(b *testing.B) {
	st, err := Open(filepath.Join(b.TempDir(), "history.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	r := New(Config{Path: "unused", QueueLen: 1 << 20})
	data := benchEvent(b)
	var ev events.TrackEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		b.Fatal(err)
	}
	batch := make([]Point, 0, 4096)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// A distinct time per event, as live traffic has.
		m := &nats.Msg{Subject: "cuas.track.adsb.4CA1FA", Data: data}
		r.onTrack(m)
		pts := <-r.q.C()
		for j := range pts {
			pts[j].Time = pts[j].Time.Add(time.Duration(i) * time.Second)
		}
		batch = append(batch, pts...)
		if len(batch) >= 2048 {
			if _, err := st.Insert(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/point")
}

// BenchmarkPointsOf is the handler's share: JSON decode and conversion.
func BenchmarkPointsOf(b *testing.B) {
	data := benchEvent(b)
	dst := make([]Point, 0, 8)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ev, err := decodeTrackEvent(data)
		if err != nil {
			b.Fatal(err)
		}
		dst = pointsOf(ev, "adsb", nil, dst[:0])
	}
}

// BenchmarkStoreInsert is the store's share: batches of 2048 new points
// as the recorder commits them (runs of ~10 fixes of 200 tracks, each
// track's run its event's fixes since the previous one), compactions
// included (one every compactPoints points here, as no 30 s pass).
func BenchmarkStoreInsert(b *testing.B) {
	st, err := Open(filepath.Join(b.TempDir(), "history.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	const tracks, perEvent = 200, 10
	batch := make([]Point, 0, tracks*perEvent)
	ids := make([]string, tracks)
	for k := range ids {
		ids[k] = fmt.Sprintf("adsb:%06X", k)
	}
	alt := 1000.0
	b.ReportAllocs()
	b.ResetTimer()
	for i, sec := 0, 0; i < b.N; sec++ {
		batch = batch[:0]
		for k := 0; k < tracks; k++ {
			for j := 0; j < perEvent; j++ {
				batch = append(batch, Point{TrackID: ids[k], Protocol: "adsb", Sensor: "rx1", AltKind: "barometric", AltM: &alt,
					Time: t0.Add(time.Duration(sec)*time.Second + time.Duration(j)*100*time.Millisecond), Lat: 51 + float64(sec)*1e-4, Lon: float64(k) * 1e-3})
			}
		}
		if _, err := st.Insert(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
		i += len(batch)
	}
}
