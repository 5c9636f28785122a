package pipelinebench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/internal/cputime"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/output/history"
	"github.com/cuasd/cuasd/output/sbs"
)

// TestOutputsToggled measures what the history recorder and per-message
// SBS add to the pipeline (issue 30's second speed target) inside one
// process: the latency phase's paced load (~52,000 frames/s) with the
// gate's track events runs throughout, and both outputs, attached as
// cuasd serve attaches them (the recorder fed fusion's fixes, SBS fed the
// fusion feed's decoded messages, one SBS client in a process of its
// own), are attached for every other window of CUAS_BENCH_SECONDS
// (default 10) and detached again, the recorder's close (its last
// compaction) inside its window. CUAS_BENCH_PAIRS (default 6) pairs of
// windows, in the order off-on, on-off, off-on, …, after a 5-s warm-up.
//
// Separate runs with and without the outputs (TestPipelineThroughputAndLatency
// twice) differ by up to ±20 % from run to run on the shared VM, the
// same frames costing fusion half as much again in one process as in
// another; windows of one process share its heap, its maps and its
// neighbours, so a pair's difference is the outputs' cost with much of
// that noise gone. Run with CUAS_BENCH_TOGGLE=1.
func TestOutputsToggled(t *testing.T) {
	if os.Getenv("CUAS_BENCH_TOGGLE") != "1" {
		t.Skip("set CUAS_BENCH_TOGGLE=1 to measure history and per-message SBS in one process, toggled")
	}
	t.Setenv("CUAS_BENCH_EVENTS", "1")
	for _, k := range []string{"CUAS_BENCH_HISTORY", "CUAS_BENCH_SBS", "CUAS_BENCH_OUTPUTS", "CUAS_BENCH_COT"} {
		t.Setenv(k, "")
	}
	window, pairs := pacedSeconds(), 6
	if v, err := strconv.Atoi(os.Getenv("CUAS_BENCH_PAIRS")); err == nil && v > 0 {
		pairs = v
	}
	const warm = 5
	ticks := generate(2000, 200, 50000, warm+2*pairs*window+2*pairs+5)
	r := newRig(t)
	defer r.stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	offering := make(chan struct{})
	go func() { defer close(offering); r.offerPaced(ctx, t, ticks) }()
	defer func() { cancel(); <-offering }() // before r.stop
	time.Sleep(warm * time.Second)
	dir := t.TempDir()
	var off, on []float64 // µs of CPU per frame offered
	for i := range 2 * pairs {
		attach := (i%4 == 1) || (i%4 == 2) // off-on, on-off, …
		us := measureWindow(ctx, t, r, time.Duration(window)*time.Second, attach, dir)
		if attach {
			on = append(on, us)
		} else {
			off = append(off, us)
		}
	}
	logToggled(t, off, on)
}

// measureWindow runs one window, with the outputs attached for it when
// attach, and returns the process's CPU in it per frame offered.
func measureWindow(ctx context.Context, t *testing.T, r *rig, d time.Duration, attach bool, dir string) float64 {
	cpu0, n0 := cputime.Process(), r.offered.Load()
	detach := func() {}
	if attach {
		detach = attachOutputs(ctx, t, r, dir)
	}
	time.Sleep(d)
	detach()
	cpu, n := cputime.Process()-cpu0, r.offered.Load()-n0
	return cpu.Seconds() * 1e6 / float64(n)
}

// attachOutputs starts the recorder and SBS with its client, as cuasd
// serve runs them, and returns what stops them and waits until they have
// (the recorder's close included).
func attachOutputs(ctx context.Context, t *testing.T, r *rig, dir string) (detach func()) {
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{}, 2)
	rec := history.New(history.Config{Path: filepath.Join(dir, "history.db"), Logger: nopLog(), Registry: prometheus.NewRegistry()})
	go func() {
		defer func() { done <- struct{}{} }()
		if err := rec.Run(wctx, output.InProcess(r.b.Conn, r.gate, output.StoreFixes(r.store), nil), nopReporter{}); err != nil {
			t.Errorf("history recorder: %v", err)
		}
	}()
	o, err := sbs.Listen("127.0.0.1:0", false, nopLog())
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer func() { done <- struct{}{} }()
		_ = o.Run(wctx, output.InProcess(r.b.Conn, nil, nil, r.modeS), nopReporter{})
	}()
	readAll(wctx, t, "SBS", o.Addr(), o.Dropped)
	return func() { cancel(); <-done; <-done }
}

// logToggled reports the windows and each pair's difference.
func logToggled(t *testing.T, off, on []float64) {
	t.Log(pairSummary("TOGGLED (history + per-message SBS, pairs of windows in one process)", off, on))
}

// median of v (not modified).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
