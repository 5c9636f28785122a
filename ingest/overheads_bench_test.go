package ingest

import (
	"testing"
	"time"

	"github.com/cuasd/cuasd/bus"
)

// BenchmarkBatchOverheads measures, per Mode S frame of a 512-frame batch,
// the small costs the performance issue removed from the adapters' hot
// path, each beside what replaced it: a SHA-256 de-duplication id per batch
// (now none: adapters never publish a batch twice), a clock read per frame
// (now one per 64 frames) and a new 8 KiB buffer per batch (now reused).
func BenchmarkBatchOverheads(b *testing.B) {
	frame := []byte{0x8d, 0x40, 0x6b, 0x90, 0x20, 0x15, 0xa6, 0x78, 0xd4, 0xd2, 0x20, 0xaa, 0x4b, 0xda}
	var batch []byte
	for range batchMax {
		batch = bus.AppendLP(batch, frame)
	}
	perFrame := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/batchMax, "ns/frame")
	}
	b.Run("id=sha256", func(b *testing.B) {
		for b.Loop() {
			_ = MsgID("adsb", "rx1", 1, batch)
		}
		perFrame(b)
	})
	b.Run("clock=every-frame", func(b *testing.B) {
		var t int64
		for b.Loop() {
			for range batchMax {
				t += time.Now().UnixNano()
			}
		}
		perFrame(b)
		_ = t
	})
	b.Run("clock=every-64-frames", func(b *testing.B) {
		var t int64
		for b.Loop() {
			for i := range batchMax {
				if i&63 == 0 {
					t += time.Now().UnixNano()
				}
			}
		}
		perFrame(b)
		_ = t
	})
	b.Run("buffer=new-per-batch", func(b *testing.B) {
		for b.Loop() {
			buf := make([]byte, 0, 16*batchMax)
			for range batchMax {
				buf = bus.AppendLP(buf, frame)
			}
			sink = buf
		}
		perFrame(b)
	})
	b.Run("buffer=reused", func(b *testing.B) {
		buf := make([]byte, 0, 16*batchMax)
		for b.Loop() {
			buf = buf[:0]
			for range batchMax {
				buf = bus.AppendLP(buf, frame)
			}
			sink = buf
		}
		perFrame(b)
	})
}

// sink keeps the benchmark's buffers alive, as a published batch is.
var sink []byte
