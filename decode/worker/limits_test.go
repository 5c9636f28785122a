package worker

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/internal/natstest"
	"github.com/cuasd/cuasd/internal/ratelimit"
)

// TestRawSensorLimitsInStorageTime: a sensor publishing straight to
// cuas.raw (no intake in between) beyond its limit has the excess skipped
// and counted, while another sensor's frames are all decoded; the fusion
// feed, a feed started later that catches up the stream at full speed
// (a restart's replay) and the shared worker (CUAS_OBS) skip exactly the
// same frames, because the tokens are spent at the storage time.
func TestRawSensorLimitsInStorageTime(t *testing.T) {
	const rate = 40 // frames a second
	lim := ratelimit.Limits{FramesPerSecond: rate}
	frames := vectorFrames(t)
	s := natstest.StartWithStreams(t, bus.DefaultLimits())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	publish := func(sensor string, n int) {
		var body []byte
		for i := range n {
			body = bus.AppendLP(body, frames[i%len(frames)])
		}
		msg := nats.NewMsg(bus.RawSubject("adsb", sensor))
		msg.Data = body
		msg.Header.Set(bus.HeaderFraming, bus.FramingLP)
		if _, err := s.JS.PublishMsg(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	// The flood: 30 messages of 20 frames, as fast as JetStream stores
	// them; the calm sensor: 5 frames now and then.
	start := time.Now()
	for i := range 30 {
		publish("flood", 20)
		if i%10 == 0 {
			publish("calm", 5)
		}
	}
	span := time.Since(start).Seconds()
	perFrame := func(sensor string) int { // observations of one frame batch
		var obs []decode.Observation
		for i := range 5 {
			obs, _ = (&ADSB{}).Decode(frames[i%len(frames)], Meta{Sensor: sensor}, obs)
		}
		return len(obs)
	}
	calmWant := 3 * perFrame("calm")

	live, late := &collector{}, &collector{}
	m := NewMetrics(nil)
	runFeed := func(c *collector, m *Metrics) {
		f := NewFeed(bus.NewJetStream(s.JS), FeedConfig{Decoders: []FrameDecoder{&ADSB{}}, Apply: c.apply, Replay: time.Hour, Metrics: m, Limits: lim}, nil)
		done := make(chan struct{})
		go func() { defer close(done); _ = f.Run(ctx) }()
		t.Cleanup(func() { <-done })
	}
	runFeed(live, m)
	bySensor := func(c *collector) map[string]int {
		c.mu.Lock()
		defer c.mu.Unlock()
		out := map[string]int{}
		for _, o := range c.obs {
			out[o.Sensor]++
		}
		return out
	}
	waitFor(t, "the calm sensor's frames", func() bool { return bySensor(live)["calm"] == calmWant })
	waitFor(t, "the skipped frames counted", func() bool { return testutil.ToFloat64(m.rateLimited.WithLabelValues("adsb")) > 0 })
	time.Sleep(300 * time.Millisecond) // anything else the feed would apply
	skipped := int(testutil.ToFloat64(m.rateLimited.WithLabelValues("adsb")))
	floodFrames := 30 * 20
	// The flood was stored over span seconds: at most a second's worth to
	// start with plus the rate over the span passes.
	if max := rate * (1 + span + 0.5); float64(floodFrames-skipped) > max || skipped == 0 {
		t.Fatalf("%d of %d flood frames decoded over %.2f s of storage time, want at most %.0f", floodFrames-skipped, floodFrames, span, max)
	}
	if got := bySensor(live)["calm"]; got != calmWant {
		t.Errorf("calm sensor: %d observations, want all %d", got, calmWant)
	}

	// A feed started later replays the stream at full speed: the same frames pass.
	runFeed(late, NewMetrics(nil))
	want := bySensor(live)
	waitFor(t, "the replay", func() bool { return bySensor(late)["calm"] == calmWant && bySensor(late)["flood"] >= want["flood"] })
	time.Sleep(300 * time.Millisecond)
	if got := bySensor(late); got["flood"] != want["flood"] {
		t.Errorf("replay decoded %d flood observations, live %d", got["flood"], want["flood"])
	}

	// The shared worker publishes the same observations to CUAS_OBS.
	go func() {
		_ = NewWorker(bus.NewJetStream(s.JS), &ADSB{}, nil, slog.New(slog.NewTextHandler(io.Discard, nil))).WithLimits(lim).Run(ctx)
	}()
	var mu sync.Mutex
	viaObs := map[string]int{}
	cons, err := s.JS.OrderedConsumer(ctx, bus.StreamObs, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(msg jetstream.Msg) {
		mu.Lock()
		defer mu.Unlock()
		_ = decode.EachInBatch(msg.Data(), func(o *decode.Observation) error { viaObs[o.Sensor]++; return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	waitFor(t, "CUAS_OBS", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return viaObs["calm"] == calmWant && viaObs["flood"] >= want["flood"]
	})
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if viaObs["flood"] != want["flood"] {
		t.Errorf("CUAS_OBS holds %d flood observations, the feed applied %d", viaObs["flood"], want["flood"])
	}
	t.Logf("flood: %d frames stored over %.2f s, %d skipped; calm: all %d observations", floodFrames, span, skipped, calmWant)
}
