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
func startOutputs(ctx context.Context, t *testing.T, b *bus.Bus) {
	t.Helper()
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
	c, err := net.Dial("tcp", o.Addr())
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		n, _ := io.Copy(io.Discard, c)
		t.Logf("Beast out client read %d bytes; %d chunks dropped", n, o.Dropped())
	}()
	context.AfterFunc(ctx, func() { c.Close() })
}
