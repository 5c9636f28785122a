package ledger_test

import (
	"context"
	"flag"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuasd/cuasd/ledger"
)

var reopenEntries = flag.Int("ledger.reopen-entries", 20000,
	"size of the log BenchmarkReopen builds and reopens (the target is 1000000 in under 5 s)")

// BenchmarkAppendParallel measures signed, durable appends from many
// concurrent clients against a SyncAlways JetStream server: each receipt is
// signed, stored (fsync'ed before the ack) and proven.
func BenchmarkAppendParallel(b *testing.B) {
	for _, clients := range []int{1, 16, 64} {
		b.Run("clients="+itoa(clients), func(b *testing.B) {
			l, _, _ := openLog(b, b.TempDir(), ledger.Options{})
			rec := record(1)
			var batches atomic.Int64
			b.SetParallelism((clients + 1) / 2) // GOMAXPROCS is 2 here
			b.ReportAllocs()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					r, err := l.Append(ctx, "track", ledger.PredicateTypeGateDecision, rec)
					if err != nil {
						b.Error(err)
						return
					}
					if r.Index == r.TreeSize-1 {
						batches.Add(1)
					}
				}
			})
			el := time.Since(start)
			b.ReportMetric(float64(b.N)/el.Seconds(), "receipts/s")
			if n := batches.Load(); n > 0 {
				b.ReportMetric(float64(b.N)/float64(n), "receipts/batch")
			}
		})
	}
}

// BenchmarkReopen builds a log of -ledger.reopen-entries receipts once,
// then measures restarting JetStream on its directory and Open: replaying
// every batch, re-hashing every entry, and checking every checkpoint root
// and the last checkpoint's signature.
func BenchmarkReopen(b *testing.B) {
	n := *reopenEntries
	dir := b.TempDir()
	l, _, stop := openLog(b, dir, ledger.Options{Instance: "bench"})
	var wg sync.WaitGroup
	var next atomic.Int64
	rec := record(7)
	for range 128 {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if _, err := l.Append(context.Background(), "track", ledger.PredicateTypeGateDecision, rec); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	want := l.Checkpoint()
	stop()
	b.ResetTimer()
	for b.Loop() {
		js, stopNATS := ledger.StartNATS(b, filepath.Join(dir, "js"))
		l2, err := ledger.Open(context.Background(), js, ledger.Options{Instance: "bench", DataDir: dir, Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		if cp := l2.Checkpoint(); cp.Size != want.Size || string(cp.Root) != string(want.Root) {
			b.Fatalf("reopened at %d, want %d", cp.Size, want.Size)
		}
		l2.Close()
		stopNATS()
	}
	b.ReportMetric(float64(want.Size), "entries")
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}
