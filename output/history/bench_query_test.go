package history_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cuasd/cuasd/httpapi"
	"github.com/cuasd/cuasd/output/history"
)

// The query benchmarks run against a store of HISTORY_BENCH_POINTS points
// (default 1,000,000; BENCHMARKS.md reports 10,000,000), built once per
// process: tracks of one hour at one point a second spread over seven
// days (the default retention), with a busy hour in which 5% of the
// tracks fly at once in one 1°×1° area.
var (
	benchOnce  sync.Once
	benchStore *history.Store
	benchErr   error
	benchEnd   = time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	benchBusy  = benchEnd.Add(-36 * time.Hour) // start of the busy hour
)

// TestMain removes the benchmarks' store when the benchmarks are done.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		_ = os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

var benchDir string

func benchPoints() int {
	if n, err := strconv.Atoi(os.Getenv("HISTORY_BENCH_POINTS")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

func buildBenchStore(dir string) (*history.Store, error) {
	st, err := history.Open(filepath.Join(dir, "history.db"))
	if err != nil {
		return nil, err
	}
	tracks := max(benchPoints()/3600, 20)
	span := 7*24*time.Hour - time.Hour
	batch := make([]history.Point, 0, 3600)
	for i := 0; i < tracks; i++ {
		start := benchEnd.Add(-7 * 24 * time.Hour).Add(time.Duration(int64(span) / int64(tracks) * int64(i)))
		lat, lon := 40+float64(i%20), float64(i%30)
		if i%20 == 0 { // the busy hour, over the busy area
			start = benchBusy.Add(time.Duration(i%60) * time.Second)
			lat, lon = 50.5+float64(i%97)/100, -1.5+float64(i%89)/100
		}
		batch = batch[:0]
		for s := 0; s < 3600; s++ {
			alt := 1000.0
			batch = append(batch, history.Point{TrackID: fmt.Sprintf("adsb:%06X", i), Protocol: "adsb", Sensor: "rx1",
				// Rounded to 1e-6° as fusion rounds every fix.
				Time: start.Add(time.Duration(s) * time.Second), Lat: math.Round((lat+float64(s)*1e-6)*1e6) / 1e6, Lon: math.Round((lon+float64(s)*1e-6)*1e6) / 1e6,
				AltM: &alt, AltKind: "barometric", Decision: "monitor"})
		}
		if _, err := st.Insert(context.Background(), batch); err != nil {
			return nil, err
		}
	}
	// As a recorder's store is between compactions: everything in chunks.
	return st, st.Compact(context.Background())
}

func benchServer(b *testing.B) http.Handler {
	b.Helper()
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "history-bench")
		if err != nil {
			benchErr = err
			return
		}
		benchDir = dir
		start := time.Now()
		benchStore, benchErr = buildBenchStore(dir)
		fmt.Fprintf(os.Stderr, "built a history of %d points in %s\n", benchPoints()/3600*3600, time.Since(start).Round(time.Second))
		if benchErr == nil {
			st, err := benchStore.Stats(context.Background())
			fmt.Fprintf(os.Stderr, "store: %d points in %d MB of pages (%v)\n", st.Points, st.Bytes>>20, err)
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return httpapi.NewServer(httpapi.Deps{History: benchStore, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

func benchGet(b *testing.B, h http.Handler, path string) int {
	return benchGetStatus(b, h, path, 200)
}

func benchGetStatus(b *testing.B, h http.Handler, path string, status int) int {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	if rec.Code != status {
		b.Fatalf("%s: %d %s", path, rec.Code, rec.Body.String())
	}
	return rec.Body.Len()
}

// BenchmarkQueryTrackHour: one track's hour (3,600 points) as JSON,
// through the HTTP handler.
func BenchmarkQueryTrackHour(b *testing.B) {
	h := benchServer(b)
	path := "/api/cuas/v1/tracks/adsb:000014/history?from=" + benchBusy.Format(time.RFC3339) + "&to=" + benchBusy.Add(time.Hour).Format(time.RFC3339)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.SetBytes(int64(benchGet(b, h, path)))
	}
}

// BenchmarkQueryTrackDay: the same track's hour asked for in a window of
// 24 hours around it, as a map asking for "the last day" does: the index
// is walked for every 5-minute bucket of the day (index.go), most of
// them empty for this track.
func BenchmarkQueryTrackDay(b *testing.B) {
	h := benchServer(b)
	from := benchBusy.Add(-11*time.Hour - 30*time.Minute)
	path := "/api/cuas/v1/tracks/adsb:000014/history?from=" + from.Format(time.RFC3339) + "&to=" + from.Add(24*time.Hour).Format(time.RFC3339)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.SetBytes(int64(benchGet(b, h, path)))
	}
}

// BenchmarkQueryTrackUnknown: a track the store never held, asked for an
// hour: a 404, after looking for the track in every bucket the store
// holds (7 days).
func BenchmarkQueryTrackUnknown(b *testing.B) {
	h := benchServer(b)
	path := "/api/cuas/v1/tracks/adsb:NEVER0/history?from=" + benchBusy.Format(time.RFC3339) + "&to=" + benchBusy.Add(time.Hour).Format(time.RFC3339)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchGetStatus(b, h, path, http.StatusNotFound)
	}
}

// BenchmarkQueryAreaTenMinutes: ten minutes of the busy area (every track
// of the busy hour, 600 points each) as one JSON page, through the HTTP
// handler.
func BenchmarkQueryAreaTenMinutes(b *testing.B) {
	h := benchServer(b)
	from := benchBusy.Add(20 * time.Minute)
	path := "/api/cuas/v1/history?limit=100000&bbox=-1.5,50.5,-0.5,51.5&from=" + from.Format(time.RFC3339) + "&to=" + from.Add(10*time.Minute).Format(time.RFC3339)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.SetBytes(int64(benchGet(b, h, path)))
	}
}
