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
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/worker"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/gate/board"
	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/internal/cputime"
	"github.com/cuasd/cuasd/sim"
)

type rig struct {
	b     *bus.Bus
	reg   *prometheus.Registry
	store *fusion.Store
	pub   *ingest.Publisher
	stop  func()
	cot   *cotBench // CUAS_BENCH_COT=1 (issue 18)
	// gate and modeS are what in-process outputs attach to (the gate's
	// track events, the fusion feed's decoded Mode S messages);
	// TestOutputsToggled attaches them itself.
	gate  *board.Gate
	modeS *worker.ModeSTap
	// offered counts the frames offerPaced has published.
	offered atomic.Int64
}

// startBus starts an embedded JetStream (file storage, sync interval 1 s)
// with the cuasd streams, sized for the benchmark's volume.
func startBus(ctx context.Context, t *testing.T) *bus.Bus {
	t.Helper()
	b, err := bus.Start(ctx, bus.Options{DataDir: t.TempDir(), Listen: "127.0.0.1:0", MaxMemory: 256 << 20, MaxStore: 32 << 30,
		SyncInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	l := bus.DefaultLimits()
	l.RawMaxBytes, l.ObsMaxBytes = 8<<30, 8<<30
	if err := b.EnsureStreams(ctx, l); err != nil {
		t.Fatal(err)
	}
	return b
}

func newRig(t *testing.T) *rig {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b := startBus(ctx, t)
	reg := prometheus.NewRegistry()
	store := fusion.NewStore(fusion.Config{TTL: 10 * time.Minute})
	reg.MustRegister(store.Collector())
	// The fusion feed decodes every raw frame in place into the store, as
	// cuasd serve runs it (no observation stream in between).
	mav, _ := worker.NewMAVLink(nil)
	modeS := &worker.ModeSTap{} // per-message SBS's feed, as in cuasd serve (issue 30)
	feed := worker.NewFeed(b.JetStream(), worker.FeedConfig{
		Decoders: []worker.FrameDecoder{&worker.ADSB{}, worker.NewRemoteID(), mav},
		Apply:    store.ApplyBatch, Replay: 10 * time.Minute, Metrics: worker.NewMetrics(reg), Log: nopLog(),
		ModeS: modeS,
	}, reg)
	var wg sync.WaitGroup
	startOutputs(ctx, t, b, modeS)                         // CUAS_BENCH_OUTPUTS=1: Beast out (issue 21)
	gate, waitEvents := startEvents(ctx, t, b, store, reg) // CUAS_BENCH_EVENTS=1, CUAS_BENCH_HISTORY=1 (issue 20)
	cotSink := startCoT(ctx, t, b, gate, reg)              // CUAS_BENCH_COT=1 (issue 18)
	wg.Add(1)
	go func() { defer wg.Done(); _ = feed.Run(ctx) }()
	return &rig{b: b, reg: reg, store: store, pub: ingest.NewPublisher(b.JetStream(), reg), cot: cotSink, gate: gate, modeS: modeS, stop: func() {
		cancel()
		wg.Wait()
		waitEvents()
		_ = b.Close(context.Background())
	}}
}

// pacedSeconds is how long the latency phase offers its paced load:
// CUAS_BENCH_SECONDS, default 10. Longer runs measure small costs (an
// output's) above the noise between runs.
func pacedSeconds() int {
	if v, err := strconv.Atoi(os.Getenv("CUAS_BENCH_SECONDS")); err == nil && v > 0 {
		return v
	}
	return 10
}

// phase reports whether CUAS_BENCH_PHASES (comma-separated: batched,
// single, latency, ceiling; default all) selects the named phase, so that one phase
// can be profiled alone.
func phase(name string) bool {
	v := os.Getenv("CUAS_BENCH_PHASES")
	if v == "" {
		return true
	}
	for _, p := range strings.Split(v, ",") {
		if strings.TrimSpace(p) == name {
			return true
		}
	}
	return false
}

// newBareRig is an embedded JetStream with the cuasd streams and no
// workers: what JetStream alone does on this machine.
func newBareRig(t *testing.T) *rig {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b := startBus(ctx, t)
	reg := prometheus.NewRegistry()
	return &rig{b: b, reg: reg, pub: ingest.NewPublisher(b.JetStream(), reg), stop: func() {
		cancel()
		_ = b.Close(context.Background())
	}}
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

// offerPaced publishes ticks, one lp-framed batch per protocol each 10 ms
// tick, each publish on its own goroutine (they wait for JetStream's
// acknowledgement), as the latency phase offers its load.
func (r *rig) offerPaced(ctx context.Context, t *testing.T, ticks [][]map[string][][]byte) {
	tk := time.NewTicker(10 * time.Millisecond)
	defer tk.Stop()
	for _, sec := range ticks {
		for _, tick := range sec {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
			}
			for proto, frames := range tick {
				r.offered.Add(int64(len(frames)))
				var body []byte
				for _, f := range frames {
					body = bus.AppendLP(body, f)
				}
				go func(proto string, body []byte, k int) {
					if _, err := r.pub.PublishBatch(ctx, "bench", proto, "bench", body, k, 0, ""); err != nil && ctx.Err() == nil {
						t.Errorf("publish: %v", err)
					}
				}(proto, body, len(frames))
			}
		}
	}
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
	if phase("batched") {
		r := newRig(t)
		ticks := generate(5000, 500, 600000, 10)
		n := count(ticks)
		start, cpu0 := time.Now(), cputime.Process()
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
						if _, err := r.pub.PublishBatch(ctx, "bench", proto, "bench", body, k, 0, ""); err != nil && ctx.Err() == nil {
							t.Errorf("publish: %v", err)
						}
					}(proto, body, len(frames))
				}
			}
		}
		wg.Wait()
		pubDur := time.Since(start)
		drain, applied := r.waitDrained(float64(n), 2*time.Minute)
		total, cpu := time.Since(start), cputime.Process()-cpu0
		t.Logf("BATCHED: %d frames published in %.2fs (%.0f frames/s accepted by JetStream); all %0.f observations applied after %.2fs: sustained %.0f frames/s end to end (drain %.2fs), %.2f µs of CPU per frame = %.0f frames per CPU-second (publisher included)",
			n, pubDur.Seconds(), float64(n)/pubDur.Seconds(), applied, total.Seconds(), applied/total.Seconds(), drain.Seconds(), cpu.Seconds()*1e6/float64(n), float64(n)/cpu.Seconds())
		r.logEvents(t, "BATCHED")
		r.stop()
	}

	// 2. One frame per message.
	if phase("single") {
		r := newRig(t)
		ticks := generate(2000, 200, 150000, 6)
		n := count(ticks)
		start, cpu0 := time.Now(), cputime.Process()
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
		total, cpu := time.Since(start), cputime.Process()-cpu0
		t.Logf("SINGLE: %d frames, one message each, published in %.2fs (%.0f frames/s); %0.f applied after %.2fs: sustained %.0f frames/s end to end, %.1f µs of CPU per frame (publisher included)",
			n, pubDur.Seconds(), float64(n)/pubDur.Seconds(), applied, total.Seconds(), applied/total.Seconds(), cpu.Seconds()*1e6/float64(n))
		r.stop()
	}

	// 3. Latency at a paced 50,000 frames/s (batched per 10 ms tick).
	if phase("latency") {
		r := newRig(t)
		ticks := generate(2000, 200, 50000, pacedSeconds())
		n := count(ticks)
		start, cpu0 := time.Now(), cputime.Process()
		r.offerPaced(context.Background(), t, ticks)
		offered := time.Since(start)
		_, applied := r.waitDrained(float64(n), time.Minute)
		h, tracks := r.latency(), r.store.Len()
		r.logEvents(t, "LATENCY")
		// The CPU until the rig has stopped: the history recorder's last
		// compaction of what it holds is part of recording it.
		r.stop()
		cpu, wall := cputime.Process()-cpu0, time.Since(start)
		t.Logf("LATENCY at %.0f frames/s offered (%d frames in %.1fs, %0.f applied): frame-to-track p50 %.1f ms, p99 %.1f ms (histogram interpolation), tracks %d; %.2f s of CPU from the first frame until the rig stopped (%.1f s) = %.2f µs per frame, %.2f cores",
			float64(n)/offered.Seconds(), n, offered.Seconds(), applied,
			quantile(h, 0.5)*1000, quantile(h, 0.99)*1000, tracks, cpu.Seconds(), wall.Seconds(), cpu.Seconds()*1e6/float64(n), cpu.Seconds()/wall.Seconds())
	}

	// 4. The ceiling of phase 2 on this machine: JetStream alone, with no
	// decoder or fusion, storing one frame per message (through the same
	// Publisher; then bare, with headers only, with ids only) and fetching
	// and acknowledging them as a decoder worker does. The CPU time per
	// frame of storing plus fetching and acknowledging bounds what any
	// pipeline that stores and acknowledges each frame can sustain here.
	if phase("ceiling") {
		ticks := generate(2000, 200, 150000, 6)
		var frames [][]byte
		for _, sec := range ticks {
			for _, tick := range sec {
				for _, fs := range tick {
					frames = append(frames, fs...)
				}
			}
		}
		ctx := context.Background()
		{
			r := newBareRig(t)
			start, cpu0 := time.Now(), cputime.Process()
			sem := make(chan struct{}, 8)
			var wg sync.WaitGroup
			for i := 0; i < len(frames); i += 64 {
				chunk := frames[i:min(i+64, len(frames))]
				fs := make([]ingest.Frame, len(chunk))
				for k, f := range chunk {
					fs[k] = ingest.Frame{Data: f}
				}
				sem <- struct{}{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					if _, err := r.pub.PublishFrames(ctx, "bench", "adsb", "bench", fs); err != nil {
						t.Errorf("publish: %v", err)
					}
				}()
			}
			wg.Wait()
			d, cpu := time.Since(start), cputime.Process()-cpu0
			t.Logf("CEILING (JetStream alone, Publisher with headers and ids): %d frames in %.2fs: %.0f frames/s, %.1f µs of CPU per frame", len(frames), d.Seconds(), float64(len(frames))/d.Seconds(), cpu.Seconds()*1e6/float64(len(frames)))
			r.stop()
		}
		var storeBare, fetchAck float64 // µs of CPU per frame
		for _, v := range []struct {
			name         string
			headers, ids bool
		}{{"bare messages, no headers", false, false}, {"receive-time and sensor headers, no id", true, false}, {"Nats-Msg-Id only", false, true}} {
			r := newBareRig(t)
			start, cpu0 := time.Now(), cputime.Process()
			futs := make([]jetstream.PubAckFuture, 0, 4096)
			for i, f := range frames {
				m := &nats.Msg{Subject: "cuas.raw.adsb.bench", Data: f}
				if v.headers || v.ids {
					m.Header = nats.Header{}
				}
				if v.headers {
					m.Header.Set(bus.HeaderRecvTime, strconv.FormatInt(time.Now().UnixNano(), 10))
					m.Header.Set(bus.HeaderSensor, "bench")
				}
				if v.ids {
					m.Header.Set(bus.HeaderMsgID, ingest.MsgID("adsb", "bench", int64(i), f))
				}
				fut, err := r.b.JS.PublishMsgAsync(m)
				if err != nil {
					t.Fatal(err)
				}
				futs = append(futs, fut)
				if len(futs) == cap(futs) || i == len(frames)-1 {
					for _, fut := range futs {
						select {
						case <-fut.Ok():
						case err := <-fut.Err():
							t.Fatal(err)
						}
					}
					futs = futs[:0]
				}
			}
			d, cpu := time.Since(start), cputime.Process()-cpu0
			t.Logf("CEILING (JetStream alone, %s): %d frames in %.2fs: %.0f frames/s, %.1f µs of CPU per frame", v.name, len(frames), d.Seconds(), float64(len(frames))/d.Seconds(), cpu.Seconds()*1e6/float64(len(frames)))
			if !v.headers && !v.ids {
				storeBare = cpu.Seconds() * 1e6 / float64(len(frames))
				// Consuming them as a decoder worker does, doing nothing
				// else: fetch batches and acknowledge every message; then,
				// for comparison, with no acknowledgements at all.
				for _, ack := range []jetstream.AckPolicy{jetstream.AckExplicitPolicy, jetstream.AckNonePolicy} {
					cons, err := r.b.JS.CreateOrUpdateConsumer(ctx, bus.StreamRaw, jetstream.ConsumerConfig{
						Durable: "ceiling-" + ack.String(), AckPolicy: ack, MaxAckPending: 20000})
					if err != nil {
						t.Fatal(err)
					}
					cstart, ccpu0, got := time.Now(), cputime.Process(), 0
					for got < len(frames) {
						batch, err := cons.FetchNoWait(256)
						if err != nil {
							t.Fatal(err)
						}
						for m := range batch.Messages() {
							if ack == jetstream.AckExplicitPolicy {
								_ = m.Ack()
							}
							got++
						}
					}
					cd, ccpu := time.Since(cstart), cputime.Process()-ccpu0
					t.Logf("CEILING (JetStream alone, fetching those messages, %s): %d in %.2fs: %.0f messages/s, %.1f µs of CPU per message", ack, got, cd.Seconds(), float64(got)/cd.Seconds(), ccpu.Seconds()*1e6/float64(got))
					if ack == jetstream.AckExplicitPolicy {
						fetchAck = ccpu.Seconds() * 1e6 / float64(got)
					}
				}
			}
			r.stop()
		}
		t.Logf("CEILING: storing a bare one-frame message and fetching and acknowledging it costs %.1f µs of CPU (NATS server and client together): at most %.0f frames/s on %d cores before any decoding, observation or fusion work",
			storeBare+fetchAck, float64(runtime.NumCPU())*1e6/(storeBare+fetchAck), runtime.NumCPU())
	}
}
