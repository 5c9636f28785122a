package ledger

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

func BenchmarkStoreAppendJetStream(b *testing.B) {
	for _, size := range []int{1200, 10000, 40000, 400000} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			js, _ := StartNATS(b, filepath.Join(b.TempDir(), "js"))
			st, err := openJetStreamStore(context.Background(), js, 10e9)
			if err != nil {
				b.Fatal(err)
			}
			body := make([]byte, size)
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

func BenchmarkStoreAppendFileBaseline(b *testing.B) {
	for _, size := range []int{1200, 10000, 40000, 400000} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			f, err := os.OpenFile(filepath.Join(b.TempDir(), "seg"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			body := make([]byte, size)
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
