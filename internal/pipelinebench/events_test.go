package pipelinebench

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/gate/board"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/output/history"
)

// benchEvents says whether the rig runs the continuous gate and its track
// events (CUAS_BENCH_EVENTS=1), and the history recorder too
// (CUAS_BENCH_HISTORY=1, which implies the events): the pipeline figures
// with events only and with events and history are their costs (issue 20).
// CUAS_BENCH_EVENTS=gate runs the gate's sweeps without publishing, so that
// the cost of the events themselves (issue 17) is the difference between
// it and CUAS_BENCH_EVENTS=1. The recorder hears the gate's typed track
// events, as in cuasd serve; CUAS_BENCH_HISTORY_NATS=1 makes it decode
// them from NATS instead, as it does in a process of its own.
func benchEvents() (events, hist bool) {
	hist = os.Getenv("CUAS_BENCH_HISTORY") == "1"
	return hist || cotOn() || os.Getenv("CUAS_BENCH_EVENTS") == "1" || gateOnly(), hist
}

// startEvents starts the gate (board sweeps every 500 ms, announcing
// cuas.track.* and cuas.threat.* events on core NATS, as cuasd serve does)
// and, with CUAS_BENCH_HISTORY=1, the history recorder on a database in a
// temporary directory, subscribed to those events. It returns the wait for
// the recorder to commit what it holds once ctx ends, and the gate (nil
// when no events are on).
func startEvents(ctx context.Context, t *testing.T, b *bus.Bus, store *fusion.Store, reg *prometheus.Registry) (g *board.Gate, wait func()) {
	t.Helper()
	evOn, histOn := benchEvents()
	if !evOn {
		return nil, func() {}
	}
	cfg := board.Config{Store: store, Events: b.Conn, Instance: "bench", Log: nopLog()}
	if gateOnly() && !histOn && !cotOn() {
		cfg.Events = nil // the sweeps, nothing announced
	}
	g = board.New(cfg, reg)
	go func() { _ = g.Run(ctx) }()
	if !histOn {
		return g, func() {}
	}
	rec := history.New(history.Config{Path: filepath.Join(t.TempDir(), "history.db"), Logger: nopLog(), Registry: reg})
	done := make(chan struct{})
	go func() {
		defer close(done)
		// As cuasd serve runs it: fed fusion's accepted fixes (issue 30).
		ev := output.InProcess(b.Conn, g, output.StoreFixes(store), nil)
		if os.Getenv("CUAS_BENCH_HISTORY_NATS") == "1" {
			ev = output.Conn(b.Conn) // as in another process: JSON from NATS
		}
		if err := rec.Run(ctx, ev, nopReporter{}); err != nil {
			t.Errorf("history recorder: %v", err)
		}
	}()
	return g, func() { <-done }
}

// gateOnly is CUAS_BENCH_EVENTS=gate: the gate sweeps, announcing nothing.
func gateOnly() bool { return os.Getenv("CUAS_BENCH_EVENTS") == "gate" }

// logEvents reports what the gate announced and the recorder stored.
func (r *rig) logEvents(t *testing.T, label string) {
	evOn, histOn := benchEvents()
	if !evOn {
		return
	}
	t.Logf("%s: %0.f track events published (%0.f failed), %0.f fixes not carried by any event (the track's ring overflowed between two events), %0.f not handed to the in-process feed (cuasd_track_positions_unfed_total); history (fed fusion's fixes): %v, points stored %0.f, dropped %0.f, failed %0.f",
		label, r.counterWith("cuasd_events_published_total", "kind", "track", "result", "ok"),
		r.counterWith("cuasd_events_published_total", "kind", "track", "result", "error"),
		r.counter("cuasd_track_positions_unannounced_total"), r.counter("cuasd_track_positions_unfed_total"), histOn,
		r.counterWith("cuasd_history_points_total", "result", "stored"),
		r.counterWith("cuasd_history_points_total", "result", "dropped"),
		r.counterWith("cuasd_history_points_total", "result", "failed"))
	r.cot.log(t, r, label) // CUAS_BENCH_COT=1 (issue 18)
}

// counterWith sums the series of counter name whose labels include every
// label=value pair of kv.
func (r *rig) counterWith(name string, kv ...string) float64 {
	mfs, _ := r.reg.Gather()
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(kv); i += 2 {
				if have[kv[i]] != kv[i+1] {
					continue metrics
				}
			}
			total += m.GetCounter().GetValue()
		}
	}
	return total
}
