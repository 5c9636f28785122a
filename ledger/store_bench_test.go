package ledger

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// storeBenchSizes are batch bodies of about 1, 10, 100 and 600 receipts of
// 1.5 KB (the last near the 1 MiB NATS payload limit).
var storeBenchSizes = []int{1500, 15_000, 150_000, 900_000}

// BenchmarkStoreAppendJetStream is one durable batch write into the
// CUAS_LEDGER stream on a SyncAlways server: publish, write, fsync, ack.
func BenchmarkStoreAppendJetStream(b *testing.B) {
	for _, size := range storeBenchSizes {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			js, _ := StartNATS(b, filepath.Join(b.TempDir(), "js"))
			st, err := openJetStreamStore(context.Background(), js, &Options{Instance: "default", StoreTimeout: 10 * time.Second, Replicas: 1})
			if err != nil {
				b.Fatal(err)
			}
			body := make([]byte, size)
			b.SetBytes(int64(size))
			i := 0
			for b.Loop() {
				i++
				if err := st.append(context.Background(), body, "id"+strconv.Itoa(i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStoreAppendFileBaseline is the floor any embedded store pays for
// the same batch: one write to an append-only file and one fdatasync. It
// is the measurement behind keeping JetStream (docs/design/ledger.md).
func BenchmarkStoreAppendFileBaseline(b *testing.B) {
	for _, size := range storeBenchSizes {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			f, err := os.OpenFile(filepath.Join(b.TempDir(), "seg"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			body := make([]byte, size)
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := f.Write(body); err != nil {
					b.Fatal(err)
				}
				if err := syscall.Fdatasync(int(f.Fd())); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
