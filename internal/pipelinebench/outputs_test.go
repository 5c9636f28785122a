package pipelinebench

import (
	"context"
	"io"
	"net"
	"os"
	"testing"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/output/beastout"
	"github.com/cuasd/cuasd/output/readsbjson"
	"github.com/cuasd/cuasd/output/sbs"
)

type nopReporter struct{}

func (nopReporter) Up()            {}
func (nopReporter) Retrying(error) {}

// startOutputs runs the frame-level readsb work (issue 21) when
// CUAS_BENCH_OUTPUTS=1: Beast out with one client reading it, and the
// aircraft.json writer counting messages from the raw frames
// (--readsb-frames); the pipeline figures with and without them are their
// cost. (The track-level work, aircraft.json entries and SBS, follows the
// track events, at most one per track and second, which this rig does not
// publish.)
//
// CUAS_BENCH_SBS=1 runs SBS BaseStation out as cuasd serve's --sbs-listen
// does by default since issue 30, one line per decoded ADS-B message,
// with one client reading it.
func startOutputs(ctx context.Context, t *testing.T, b *bus.Bus) {
	t.Helper()
	if os.Getenv("CUAS_BENCH_SBS") == "1" {
		o, err := sbs.Listen("127.0.0.1:0", false, nopLog())
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = o.Run(ctx, output.Conn(b.Conn), nopReporter{}) }()
		readAll(ctx, t, "SBS", o.Addr(), o.Dropped)
	}
	if os.Getenv("CUAS_BENCH_OUTPUTS") != "1" {
		return
	}
	o, err := beastout.Listen("127.0.0.1:0", false, nopLog())
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = o.Run(ctx, output.Conn(b.Conn), nopReporter{}) }()
	w, err := readsbjson.New(readsbjson.Config{Frames: true, Log: nopLog()})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = w.Run(ctx, output.Conn(b.Conn), nopReporter{}) }()
	readAll(ctx, t, "Beast out", o.Addr(), o.Dropped)
}

// readAll is one client reading everything an output serves on addr
// until ctx ends, then logging how much it read and the output dropped.
func readAll(ctx context.Context, t *testing.T, name, addr string, dropped func() uint64) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		n, _ := io.Copy(io.Discard, c)
		t.Logf("%s client read %d bytes; %d chunks dropped", name, n, dropped())
	}()
	context.AfterFunc(ctx, func() { c.Close() })
}
