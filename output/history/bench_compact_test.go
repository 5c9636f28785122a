package history

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkCompaction measures one compaction of 2,209 tracks (the
// pipeline benchmark's) holding 40 points each (30 s at 0.75 s), in a new
// store (young: its first compactions) and in one already holding 300
// chunks of each track (aged: 2.5 hours of them), with the WAL bytes each
// writes (wal-bytes/op; SQLite's own checkpoints off on the writer's
// connection, the WAL emptied before each compaction). Only the
// compaction is timed. Run it with -benchtime=20x: 20 compactions are
// 10 minutes of the points' clock, whole buckets of the track index.
func BenchmarkCompaction(b *testing.B) {
	for _, age := range []int{0, 300} {
		name := "young"
		if age > 0 {
			name = fmt.Sprintf("aged=%d", age)
		}
		b.Run(name, func(b *testing.B) {
			st, _ := openTemp(b)
			ids := trackIDs(2209)
			start := t0.Add(24 * time.Hour).Truncate(10 * time.Minute)
			if age > 0 {
				ageTracks(b, st, ids, start, age)
			}
			ctx := context.Background()
			if _, err := st.w.ExecContext(ctx, `PRAGMA wal_autocheckpoint(0)`); err != nil {
				b.Fatal(err)
			}
			pts := make([]Point, 0, 40*len(ids))
			frames := 0
			b.ResetTimer()
			for k := 0; k < b.N; k++ {
				b.StopTimer()
				pts = pts[:0]
				for i, id := range ids {
					pts = append(pts, track(id, "adsb", start.Add(time.Duration(k)*compactEvery), 750*time.Millisecond, 40, 40+float64(i%20), float64(i%30))...)
				}
				if _, err := st.w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
					b.Fatal(err)
				}
				insert(b, st, pts)
				b.StartTimer()
				if err := st.Compact(ctx); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				var busy, log, done int
				if err := st.w.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &done); err != nil {
					b.Fatal(err)
				}
				frames += log
				b.StartTimer()
			}
			b.ReportMetric(float64(frames)*(pageSize+24)/float64(b.N), "wal-bytes/op")
			b.ReportMetric(float64(frames)/float64(b.N), "wal-frames/op")
		})
	}
}
