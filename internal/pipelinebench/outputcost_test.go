package pipelinebench

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/cuasd/cuasd/internal/cputime"
)

// TestOutputCostPaced offers the latency phase's paced load (2,000
// aircraft and 200 drones, ~52,000 frames/s in 10-ms batches, for
// CUAS_BENCH_SECONDS) to JetStream alone, with no decoder, fusion or
// gate, and the frame-level outputs CUAS_BENCH_SBS=1 and
// CUAS_BENCH_OUTPUTS=1 select: the process's CPU per frame with an output
// less without it is the output's own cost, measured without the rest of
// the pipeline's variance (issue 30: per-message SBS). Run with
// CUAS_BENCH_OUTPUT_COST=1.
func TestOutputCostPaced(t *testing.T) {
	if os.Getenv("CUAS_BENCH_OUTPUT_COST") != "1" {
		t.Skip("set CUAS_BENCH_OUTPUT_COST=1 to measure the frame-level outputs' CPU at the paced rate")
	}
	r := newBareRig(t)
	ctx, cancel := context.WithCancel(context.Background())
	startOutputs(ctx, t, r.b, nil) // no fusion feed: SBS decodes the raw frames itself
	ticks := generate(2000, 200, 50000, pacedSeconds())
	n := count(ticks)
	start, cpu0 := time.Now(), cputime.Process()
	r.offerPaced(ctx, t, ticks)
	time.Sleep(time.Second) // the outputs' last messages
	cancel()
	r.stop()
	cpu, wall := cputime.Process()-cpu0, time.Since(start)
	t.Logf("OUTPUT COST (JetStream alone + SBS=%s OUTPUTS=%s): %d frames in %.1fs; %.2f s of CPU = %.2f µs per frame, %.3f cores",
		os.Getenv("CUAS_BENCH_SBS"), os.Getenv("CUAS_BENCH_OUTPUTS"), n, wall.Seconds(), cpu.Seconds(), cpu.Seconds()*1e6/float64(n), cpu.Seconds()/wall.Seconds())
}
