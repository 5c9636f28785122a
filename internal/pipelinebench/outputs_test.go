package pipelinebench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"testing"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/worker"
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
// with one client reading it: from the Mode S messages the fusion feed
// decodes (modeS), as inside cuasd serve; from the raw frames, decoded
// again, when modeS is nil or CUAS_BENCH_SBS_NATS=1 (as in another
// process).
//
// Each client runs in a process of its own (readAll), as Virtual Radar
// Server or a feeder script does: the CPU the benchmarks measure is this
// process's, cuasd's side of the socket only.
func startOutputs(ctx context.Context, t *testing.T, b *bus.Bus, modeS *worker.ModeSTap) {
	t.Helper()
	if os.Getenv("CUAS_BENCH_SBS") == "1" {
		o, err := sbs.Listen("127.0.0.1:0", false, nopLog())
		if err != nil {
			t.Fatal(err)
		}
		ev := output.Conn(b.Conn)
		if modeS != nil && os.Getenv("CUAS_BENCH_SBS_NATS") != "1" {
			ev = output.InProcess(b.Conn, nil, nil, modeS)
		}
		go func() { _ = o.Run(ctx, ev, nopReporter{}) }()
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

// readerEnv makes the test binary, run again by readAll, a stream client
// instead of the tests (TestMain).
const readerEnv = "CUAS_BENCH_READER"

// TestMain runs the tests, or, with readerEnv set, is the client process
// readAll starts.
func TestMain(m *testing.M) {
	if os.Getenv(readerEnv) == "1" {
		os.Exit(readStream(os.NewFile(3, "stream"), os.Stdout))
	}
	os.Exit(m.Run())
}

// readStream reads the stream on f to its end, as a client does, and
// writes how many bytes and lines it read to out.
func readStream(f *os.File, out io.Writer) int {
	buf := make([]byte, 256<<10)
	var n, lines int64
	for {
		k, err := f.Read(buf)
		n += int64(k)
		lines += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if err != nil {
			break
		}
	}
	fmt.Fprintf(out, "%d %d\n", n, lines)
	return 0
}

// readAll connects one client to the output on addr, reading everything
// until ctx ends, in a process of its own: the test binary run again with
// readerEnv, handed the connected socket. At the end of the test it
// checks that the client read something and the output dropped nothing,
// and logs how much was read.
func readAll(ctx context.Context, t *testing.T, name, addr string, dropped func() uint64) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.(*net.TCPConn).File()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), readerEnv+"=1")
	cmd.ExtraFiles, cmd.Stdout, cmd.Stderr = []*os.File{f}, &out, os.Stderr
	err = cmd.Start()
	f.Close()
	if err != nil {
		c.Close()
		t.Fatal(err)
	}
	// The socket is shared with the client: shutting it down ends the
	// client's reading (closing this process's descriptor would not).
	stop := context.AfterFunc(ctx, func() { _ = c.(*net.TCPConn).CloseRead(); c.Close() })
	t.Cleanup(func() {
		if stop() { // the test ended before ctx
			_ = c.(*net.TCPConn).CloseRead()
			c.Close()
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("%s client: %v", name, err)
			return
		}
		var n, lines int64
		if _, err := fmt.Sscan(out.String(), &n, &lines); err != nil || n == 0 {
			t.Errorf("%s client read %q: want a byte count above 0", name, out.String())
		}
		d := dropped()
		if d != 0 {
			t.Errorf("%s output dropped %d chunks for its client", name, d)
		}
		t.Logf("%s client (its own process) read %d bytes, %d lines; %d chunks dropped", name, n, lines, d)
	})
}
