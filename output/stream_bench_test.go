package output

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/cuasd/cuasd/internal/cputime"
)

// BenchmarkBroadcastPaced is a Broadcast with one client reading it (in
// this process, as in the pipeline benchmark) fed chunks at a steady
// pace: per-message SBS at the pipeline benchmark's rate (a 48 KB chunk
// every 10 ms) and a feed of small chunks (200 B every 500 µs: --sbs-reduce's
// track events, or Beast out of a quiet receiver). The figure is the
// process's CPU per chunk (cpu-µs/chunk): the writer's wake-ups and
// writes and the client's reads; ns/op is the pace.
func BenchmarkBroadcastPaced(b *testing.B) {
	for _, c := range []struct {
		name string
		size int
		pace time.Duration
	}{{"48KB-every-10ms", 48 << 10, 10 * time.Millisecond}, {"200B-every-500us", 200, 500 * time.Microsecond}} {
		b.Run(c.name, func(b *testing.B) {
			bc, err := ListenBroadcast("127.0.0.1:0", 64<<20, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { _ = bc.Serve(ctx) }()
			client, err := net.Dial("tcp", bc.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer client.Close()
			read := make(chan int64, 1)
			go func() {
				n, _ := io.CopyBuffer(io.Discard, struct{ io.Reader }{client}, make([]byte, 256<<10))
				read <- n
			}()
			for bc.Clients() == 0 {
				time.Sleep(time.Millisecond)
			}
			chunk := make([]byte, c.size)
			tk := time.NewTicker(c.pace)
			defer tk.Stop()
			cpu0 := cputime.Process()
			n := 0
			for b.Loop() {
				<-tk.C
				bc.Send(chunk)
				n++
			}
			time.Sleep(2 * FlushInterval) // the last chunks written
			cpu := cputime.Process() - cpu0
			b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-µs/chunk")
			if bc.Dropped() != 0 {
				b.Fatalf("%d chunks dropped", bc.Dropped())
			}
		})
	}
}
