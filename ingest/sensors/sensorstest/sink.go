// Package sensorstest holds test helpers of the sensor inputs: a Sink that
// records what a source publishes, decoded with cuasd's own Remote ID
// decoder.
package sensorstest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/worker"
	"github.com/cuasd/cuasd/ingest"
)

// Published is one frame a source published, with the observation cuasd's
// Remote ID decoder makes of it.
type Published struct {
	Protocol, Adapter, Sensor string
	Frame                     ingest.Frame
	Obs                       []decode.Observation
	Err                       error
}

// Sink is an ingest.Sink that records. Changed is signalled (without
// blocking) after every call.
type Sink struct {
	mu      sync.Mutex
	dec     *worker.RemoteID
	pub     []Published
	dropped map[string]int
	Changed chan struct{}
}

// NewSink returns an empty recording sink.
func NewSink() *Sink {
	return &Sink{dec: worker.NewRemoteID(), dropped: map[string]int{}, Changed: make(chan struct{}, 1)}
}

func (s *Sink) signal() {
	select {
	case s.Changed <- struct{}{}:
	default:
	}
}

// PublishFrames implements ingest.Sink.
func (s *Sink) PublishFrames(_ context.Context, adapter, protocol, sensor string, frames []ingest.Frame) (ingest.Result, error) {
	s.mu.Lock()
	for _, f := range frames {
		p := Published{Protocol: protocol, Adapter: adapter, Sensor: sensor, Frame: f}
		p.Frame.Data = append([]byte(nil), f.Data...)
		p.Obs, p.Err = s.dec.Decode(p.Frame.Data, worker.Meta{Sensor: sensor, RecvUnixNano: f.RecvUnixNano, Carrier: f.Carrier}, nil)
		s.pub = append(s.pub, p)
	}
	s.mu.Unlock()
	s.signal()
	return ingest.Result{Accepted: len(frames)}, nil
}

// PublishBatch implements ingest.Sink (the sensor inputs do not batch).
func (s *Sink) PublishBatch(context.Context, string, string, string, []byte, int, int64, string) (ingest.Result, error) {
	panic("sensorstest: PublishBatch not expected")
}

// Dropped implements ingest.Sink; counts are kept by protocol/reason.
func (s *Sink) Dropped(protocol, _, reason string, n int) {
	s.mu.Lock()
	s.dropped[protocol+"/"+reason] += n
	s.mu.Unlock()
	s.signal()
}

// Frames returns what was published so far.
func (s *Sink) Frames() []Published {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Published(nil), s.pub...)
}

// Drops returns the drop counts by "protocol/reason".
func (s *Sink) Drops() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.dropped {
		out[k] = v
	}
	return out
}

// Wait blocks until cond holds (checked after every change) or ctx ends;
// it reports whether cond held.
func (s *Sink) Wait(ctx context.Context, cond func() bool) bool {
	for !cond() {
		select {
		case <-s.Changed:
		case <-ctx.Done():
			return cond()
		}
	}
	return true
}

var _ ingest.Sink = (*Sink)(nil)

// Missing skips tb with why, or fails it under CI=true, where a real
// counterpart must never be skipped silently.
func Missing(tb testing.TB, why string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s: required under CI=true", why)
	}
	tb.Skipf("skipping: %s", why)
}

// PythonZMQ returns Debian's python3 when it has pyzmq (python3-zmq, a
// binding of the real libzmq), or skips (fails under CI=true).
func PythonZMQ(tb testing.TB) string {
	tb.Helper()
	const py = "/usr/bin/python3"
	if out, err := exec.Command(py, "-c", "import zmq; print(zmq.zmq_version())").CombinedOutput(); err != nil {
		Missing(tb, py+" with python3-zmq is not available ("+strings.TrimSpace(string(out))+"); apt-get install python3-zmq")
	}
	return py
}

// CountSink is an ingest.Sink that only counts, for benchmarks.
type CountSink struct {
	Frames, Drops atomic.Int64
}

// PublishFrames implements ingest.Sink.
func (c *CountSink) PublishFrames(_ context.Context, _, _, _ string, frames []ingest.Frame) (ingest.Result, error) {
	c.Frames.Add(int64(len(frames)))
	return ingest.Result{Accepted: len(frames)}, nil
}

// PublishBatch implements ingest.Sink.
func (c *CountSink) PublishBatch(_ context.Context, _, _, _ string, _ []byte, n int, _ int64, _ string) (ingest.Result, error) {
	c.Frames.Add(int64(n))
	return ingest.Result{Accepted: n}, nil
}

// Dropped implements ingest.Sink.
func (c *CountSink) Dropped(_, _, _ string, n int) { c.Drops.Add(int64(n)) }
