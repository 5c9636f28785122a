// Package pipelinebench measures the whole pipeline — JetStream ingest,
// decoder workers, observations, fusion — on an embedded cuasd, the way
// `make bench-pipeline` reports it. It is skipped unless
// CUAS_BENCH_PIPELINE=1, because it saturates the machine for a minute.
package pipelinebench

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/pipeline"
	"github.com/cuasd/cuasd/sim"
)

type rig struct {
	b     *bus.Bus
	reg   *prometheus.Registry
	store *fusion.Store
	pub   *ingest.Publisher
	stop  func()
}

func newRig(t *testing.T) *rig {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	b, err := bus.Start(ctx, bus.Options{DataDir: dir, Listen: "off", MaxMemory: 256 << 20, MaxStore: 32 << 30,
		SyncInterval: time.Second, Server: func(o *server.Options) {}})
	if err != nil {
		t.Fatal(err)
	}
	l := bus.DefaultLimits()
	l.RawMaxBytes, l.ObsMaxBytes = 8<<30, 8<<30
	if err := b.EnsureStreams(ctx, l); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	store := fusion.NewStore(fusion.Config{TTL: 10 * time.Minute})
	m := pipeline.NewMetrics(reg)
	var wg sync.WaitGroup
	for k := 0; k < workersPerProtocol(); k++ {
		mav, _ := pipeline.NewMAVLink(nil)
		for _, d := range []pipeline.FrameDecoder{&pipeline.ADSB{}, pipeline.NewRemoteID(), mav} {
			w := pipeline.NewWorker(b.JS, d, m, nopLog())
			wg.Add(1)
			go func() { defer wg.Done(); _ = w.Run(ctx) }()
		}
	}
	cons := fusion.NewConsumer(b.JS, store, nopLog(), reg, nil)
	wg.Add(1)
	go func() { defer wg.Done(); _ = cons.Run(ctx) }()
	return &rig{b: b, reg: reg, store: store, pub: ingest.NewPublisher(b.JS, reg), stop: func() {
		cancel()
		wg.Wait()
		_ = b.Close(context.Background())
	}}
}

// workersPerProtocol is CUAS_BENCH_WORKERS (default 1).
func workersPerProtocol() int {
	if n, err := strconv.Atoi(os.Getenv("CUAS_BENCH_WORKERS")); err == nil && n > 0 {
		return n
	}
	return 1
}

func (r *rig) counter(name string) float64 {
	mfs, _ := r.reg.Gather()
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			total += m.GetCounter().GetValue()
		}
	}
	return total
}

func (r *rig) latency() *dto.Histogram {
	mfs, _ := r.reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == "cuasd_frame_to_track_seconds" {
			return mf.GetMetric()[0].GetHistogram()
		}
	}
	return nil
}

// quantile interpolates a quantile from histogram buckets (upper bound of
// the bucket that holds it, as Prometheus's histogram_quantile does).
func quantile(h *dto.Histogram, q float64) float64 {
	if h == nil || h.GetSampleCount() == 0 {
		return math.NaN()
	}
	rank := q * float64(h.GetSampleCount())
	prevCount, prevBound := 0.0, 0.0
	bs := h.GetBucket()
	sort.Slice(bs, func(i, j int) bool { return bs[i].GetUpperBound() < bs[j].GetUpperBound() })
	for _, b := range bs {
		c := float64(b.GetCumulativeCount())
		if c >= rank {
			if c == prevCount {
				return b.GetUpperBound()
			}
			return prevBound + (b.GetUpperBound()-prevBound)*(rank-prevCount)/(c-prevCount)
		}
		prevCount, prevBound = c, b.GetUpperBound()
	}
	return math.Inf(1)
}

// generate pre-builds n seconds of simulated traffic at rate frames/s, by
// protocol, in ticks of 10 ms.
func generate(aircraft, drones int, rate float64, seconds int) [][]map[string][][]byte {
	w := sim.NewWorld(sim.Config{Aircraft: aircraft, Drones: drones, MAVLink: 10, Rate: rate, Tick: 10 * time.Millisecond}, time.Unix(1_700_000_000, 0))
	now := time.Unix(1_700_000_000, 0)
	var ticks [][]map[string][][]byte
	for s := 0; s < seconds; s++ {
		var sec []map[string][][]byte
		for i := 0; i < 100; i++ {
			now = now.Add(10 * time.Millisecond)
			out := map[string][][]byte{}
			w.Step(now, 10*time.Millisecond, out)
			sec = append(sec, out)
		}
		ticks = append(ticks, sec)
	}
	return ticks
}

func count(ticks [][]map[string][][]byte) int {
	n := 0
	for _, s := range ticks {
		for _, t := range s {
			for _, f := range t {
				n += len(f)
			}
		}
	}
	return n
}

// waitDrained waits until fusion applied want observations (or stalls).
func (r *rig) waitDrained(want float64, limit time.Duration) (time.Duration, float64) {
	start := time.Now()
	last, lastChange := -1.0, time.Now()
	for {
		got := r.counter("cuasd_observations_applied_total")
		if got >= want {
			return time.Since(start), got
		}
		if got != last {
			last, lastChange = got, time.Now()
		}
		if time.Since(lastChange) > 5*time.Second || time.Since(start) > limit {
			return time.Since(start), got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func machine() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "model name") {
			return strings.TrimSpace(strings.SplitN(l, ":", 2)[1]) + fmt.Sprintf(", %d cores", runtime.NumCPU())
		}
	}
	return fmt.Sprintf("%d cores", runtime.NumCPU())
}

func TestPipelineThroughputAndLatency(t *testing.T) {
	if os.Getenv("CUAS_BENCH_PIPELINE") != "1" {
		t.Skip("set CUAS_BENCH_PIPELINE=1 (make bench-pipeline) to run the pipeline load benchmark")
	}
	t.Logf("machine: %s, %s", machine(), runtime.Version())

	// 1. Batched publish (one lp-framed message per protocol and 10 ms
	// tick), as fast as JetStream accepts it.
	{
		r := newRig(t)
		ticks := generate(5000, 500, 600000, 10)
		n := count(ticks)
		start := time.Now()
		ctx := context.Background()
		sem := make(chan struct{}, 8)
		var wg sync.WaitGroup
		for _, sec := range ticks {
			for _, tick := range sec {
				for proto, frames := range tick {
					var body []byte
					for _, f := range frames {
						body = bus.AppendLP(body, f)
					}
					sem <- struct{}{}
					wg.Add(1)
					go func(proto string, body []byte, k int) {
						defer wg.Done()
						defer func() { <-sem }()
						if _, err := r.pub.PublishBatch(ctx, "bench", proto, "bench", body, k, 0, ""); err != nil {
							t.Errorf("publish: %v", err)
						}
					}(proto, body, len(frames))
				}
			}
		}
		wg.Wait()
		pubDur := time.Since(start)
		drain, applied := r.waitDrained(float64(n), 2*time.Minute)
		total := time.Since(start)
		t.Logf("BATCHED: %d frames published in %.2fs (%.0f frames/s accepted by JetStream); all %0.f observations applied after %.2fs: sustained %.0f frames/s end to end (drain %.2fs)",
			n, pubDur.Seconds(), float64(n)/pubDur.Seconds(), applied, total.Seconds(), applied/total.Seconds(), drain.Seconds())
		r.stop()
	}

	// 2. One frame per message.
	{
		r := newRig(t)
		ticks := generate(2000, 200, 150000, 6)
		n := count(ticks)
		start := time.Now()
		ctx := context.Background()
		sem := make(chan struct{}, 8)
		var wg sync.WaitGroup
		for _, sec := range ticks {
			for _, tick := range sec {
				for proto, frames := range tick {
					fs := make([]ingest.Frame, len(frames))
					for i, f := range frames {
						fs[i] = ingest.Frame{Data: f}
					}
					sem <- struct{}{}
					wg.Add(1)
					go func(proto string, fs []ingest.Frame) {
						defer wg.Done()
						defer func() { <-sem }()
						if _, err := r.pub.PublishFrames(ctx, "bench", proto, "bench", fs); err != nil {
							t.Errorf("publish: %v", err)
						}
					}(proto, fs)
				}
			}
		}
		wg.Wait()
		pubDur := time.Since(start)
		_, applied := r.waitDrained(float64(n), 2*time.Minute)
		total := time.Since(start)
		t.Logf("SINGLE: %d frames, one message each, published in %.2fs (%.0f frames/s); %0.f applied after %.2fs: sustained %.0f frames/s end to end",
			n, pubDur.Seconds(), float64(n)/pubDur.Seconds(), applied, total.Seconds(), applied/total.Seconds())
		r.stop()
	}

	// 3. Latency at a paced 50,000 frames/s (batched per 10 ms tick).
	{
		r := newRig(t)
		ticks := generate(2000, 200, 50000, 10)
		n := count(ticks)
		ctx := context.Background()
		tk := time.NewTicker(10 * time.Millisecond)
		start := time.Now()
		for _, sec := range ticks {
			for _, tick := range sec {
				<-tk.C
				for proto, frames := range tick {
					var body []byte
					for _, f := range frames {
						body = bus.AppendLP(body, f)
					}
					go func(proto string, body []byte, k int) {
						if _, err := r.pub.PublishBatch(ctx, "bench", proto, "bench", body, k, 0, ""); err != nil {
							t.Errorf("publish: %v", err)
						}
					}(proto, body, len(frames))
				}
			}
		}
		tk.Stop()
		_, applied := r.waitDrained(float64(n), time.Minute)
		h := r.latency()
		t.Logf("LATENCY at %.0f frames/s offered (%d frames in %.1fs, %0.f applied): frame-to-track p50 %.1f ms, p99 %.1f ms (histogram interpolation), tracks %d",
			float64(n)/time.Since(start).Seconds(), n, time.Since(start).Seconds(), applied,
			quantile(h, 0.5)*1000, quantile(h, 0.99)*1000, r.store.Len())
		r.stop()
	}
}
