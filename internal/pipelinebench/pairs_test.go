package pipelinebench

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestOutputsPaired measures what the history recorder and per-message
// SBS add to the pipeline at its benchmark rate (issue 30's second speed
// target: under 10 % of its CPU), as `make bench-outputs` runs it:
// CUAS_BENCH_OUTPUT_PAIRS pairs of runs of the latency phase
// (TestPipelineThroughputAndLatency, CUAS_BENCH_SECONDS each, default 15),
// each in a process of its own, one with the gate's track events only and
// one with the events, history fed fusion's fixes and SBS fed the decoded
// messages with one client, in the order events-both, both-events,
// events-both, … so that a drift of the machine's load weighs on both.
//
// Whole runs differ by up to ±20 % on a shared VM, so the figure is the
// median of the pairs' differences (and their mean with its standard
// error), each relative to its own pair's events-only run; one pair
// proves nothing. It reports; it asserts no figure.
func TestOutputsPaired(t *testing.T) {
	pairs, err := strconv.Atoi(os.Getenv("CUAS_BENCH_OUTPUT_PAIRS"))
	if err != nil || pairs <= 0 || os.Getenv("CUAS_BENCH_PIPELINE") != "1" {
		t.Skip("set CUAS_BENCH_PIPELINE=1 CUAS_BENCH_OUTPUT_PAIRS=N (make bench-outputs) to measure history and per-message SBS in pairs of runs")
	}
	seconds := "15"
	if v := os.Getenv("CUAS_BENCH_SECONDS"); v != "" {
		seconds = v
	}
	t.Logf("machine: %s; %d pairs of %s-s runs", machine(), pairs, seconds)
	var ev, both []float64
	for i := range pairs {
		order := []bool{false, true}
		if i%2 == 1 {
			order = []bool{true, false}
		}
		for _, outputs := range order {
			us, line := pipelineRun(t, seconds, outputs)
			if outputs {
				both = append(both, us)
			} else {
				ev = append(ev, us)
			}
			t.Logf("pair %d, %s: %.2f µs per frame (%s)", i+1, modeName(outputs), us, line)
		}
	}
	t.Log(pairSummary("OUTPUTS PAIRED (history + per-message SBS, pairs of runs)", ev, both))
}

func modeName(outputs bool) string {
	if outputs {
		return "events + history + SBS"
	}
	return "events only"
}

// perFrame is the latency phase's CPU figure in its LATENCY line.
var perFrame = regexp.MustCompile(`= ([0-9.]+) µs per frame`)

// pipelineRun runs the latency phase once in a process of its own (this
// test binary again), with the outputs or without, and returns its CPU
// per frame and the line it was read from. The load average before the
// run goes with it.
func pipelineRun(t *testing.T, seconds string, outputs bool) (float64, string) {
	t.Helper()
	load, _ := os.ReadFile("/proc/loadavg")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestPipelineThroughputAndLatency$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "CUAS_BENCH_PIPELINE=1", "CUAS_BENCH_PHASES=latency", "CUAS_BENCH_SECONDS="+seconds,
		"CUAS_BENCH_EVENTS=1", "CUAS_BENCH_OUTPUT_PAIRS=", "CUAS_BENCH_COT=", "CUAS_BENCH_OUTPUTS=",
		"CUAS_BENCH_HISTORY="+onOff(outputs), "CUAS_BENCH_SBS="+onOff(outputs))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s run: %v\n%s", modeName(outputs), err, out)
	}
	m := perFrame.FindSubmatch(out)
	if m == nil {
		t.Fatalf("%s run printed no CPU per frame:\n%s", modeName(outputs), out)
	}
	us, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return us, "load before " + strings.Join(strings.Fields(string(load))[:3], " ")
}

func onOff(on bool) string {
	if on {
		return "1"
	}
	return ""
}

// pairSummary states pairs of figures without (off) and with (on) the
// outputs: each pair's difference in µs per frame and relative to its
// own off figure, the medians, and the mean difference with its standard
// error.
func pairSummary(title string, off, on []float64) string {
	n := min(len(off), len(on))
	if n == 0 {
		return title + ": no pairs"
	}
	d, rel := make([]float64, n), make([]float64, n)
	var b strings.Builder
	for i := range n {
		d[i], rel[i] = on[i]-off[i], (on[i]-off[i])/off[i]*100
		fmt.Fprintf(&b, " [%.2f → %.2f µs, %+.0f %%]", off[i], on[i], rel[i])
	}
	mean, se := meanSE(d)
	return fmt.Sprintf("%s: %d pairs:%s; median %+.2f µs of CPU a frame, %+.1f %% (events only: median %.2f µs a frame); mean %+.2f ± %.2f µs (standard error)",
		title, n, b.String(), median(d), median(rel), median(off), mean, se)
}

// meanSE is the mean of xs and its standard error (0 for one value).
func meanSE(xs []float64) (mean, se float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss/float64(len(xs)-1)) / math.Sqrt(float64(len(xs)))
}
