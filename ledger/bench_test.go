package ledger_test

import (
	"context"
	"encoding/json"
	"flag"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuasd/cuasd/ledger"
)

// gateRecord is shaped like a gate decision record (inputs, the 13 axis
// values, Λ, decision, caps, version, doctrine, time): about 900 bytes, so
// an envelope is about 1.4 KB.
var gateRecord = json.RawMessage(`{"inputs":{"track":{"id":"rid:1581F5FKD229400P","lat":52.520008,"lon":13.404954,"alt_m":118.5,` +
	`"speed_mps":14.2,"heading_deg":271.5,"sources":["remoteid","adsb"],"last_seen":"2026-05-01T12:00:00.123Z"},` +
	`"geofence":{"id":"hq","center":[52.5201,13.4049],"radius_m":500}},` +
	`"axes":{"breach":1,"proximity":0.93,"altitude":0.41,"speed":0.37,"heading":0.88,"identity":0.2,"spoof":0.05,` +
	`"swarm":0,"loiter":0.61,"payload":0.1,"time_of_day":0.3,"allowlist":0,"history":0.12},` +
	`"lambda":0.6132,"decision":"alert","caps":["breach-floor","identity-unverified"],"human_decision_required":true,` +
	`"service_version":"v0.1.0","doctrine":"v11","time":"2026-05-01T12:00:00.456Z","note":"decision support only"}`)

var reopenEntries = flag.Int("ledger.reopen-entries", 20000,
	"size of the log BenchmarkReopen builds and reopens (the target is 1000000 in under 5 s)")

// BenchmarkAppendParallel measures signed, durable appends from many
// concurrent clients against a SyncAlways JetStream server: each receipt is
// signed, stored (fsync'ed before the ack) and proven.
func BenchmarkAppendParallel(b *testing.B) {
	for _, clients := range []int{1, 16, 64} {
		b.Run("clients="+itoa(clients), func(b *testing.B) {
			l, _, _ := openLog(b, b.TempDir(), ledger.Options{})
			rec := gateRecord
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
	rec := gateRecord
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
	envBytes := 0
	if es, _, err := l.Entries(context.Background(), 0, 1); err == nil && len(es) == 1 {
		env, _ := json.Marshal(es[0].Envelope)
		envBytes = len(env)
	}
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
	b.ReportMetric(float64(envBytes), "envelope-bytes")
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
