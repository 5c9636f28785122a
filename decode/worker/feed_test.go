package worker

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/internal/natstest"
	"github.com/cuasd/cuasd/internal/testshared"
	"github.com/cuasd/cuasd/sim"
)

// collector is an Apply that keeps what it was given.
type collector struct {
	mu  sync.Mutex
	obs []decode.Observation
}

func (c *collector) apply(obs []decode.Observation) {
	c.mu.Lock()
	c.obs = append(c.obs, obs...)
	c.mu.Unlock()
}

func (c *collector) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.obs)
}

// vectorFrames are the extended squitters (DF17/18) of the reference
// vectors that the decoder turns into observations.
func vectorFrames(t *testing.T) [][]byte {
	t.Helper()
	raw, err := os.ReadFile(testshared.Path(t, "vectors", "adsb.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vecs []struct {
		Hex string `json:"hex"`
	}
	if err := json.Unmarshal(raw, &vecs); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, v := range vecs {
		b, err := hex.DecodeString(v.Hex)
		if err != nil || len(b) != 14 || (b[0]>>3 != 17 && b[0]>>3 != 18) {
			continue
		}
		if obs, err := (&ADSB{}).Decode(b, Meta{}, nil); err == nil && len(obs) > 0 {
			out = append(out, b)
		}
	}
	if len(out) < 5 {
		t.Fatalf("only %d DF17 vectors", len(out))
	}
	return out
}

func startFeed(t *testing.T, ctx context.Context, js jetstream.JetStream, c *collector) {
	t.Helper()
	startFeedWith(t, ctx, js, c, []FrameDecoder{&ADSB{}})
}

func startFeedWith(t *testing.T, ctx context.Context, js jetstream.JetStream, c *collector, decoders []FrameDecoder) {
	t.Helper()
	f := NewFeed(bus.NewJetStream(js), FeedConfig{Decoders: decoders, Apply: c.apply, Replay: 10 * time.Minute}, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := f.Run(ctx); err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() { <-done })
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFeedDecodesInPlace: two instances' feeds each apply exactly the
// observations the decoder gives for every raw frame (each sees all of
// them), a garbage frame is stored once in CUAS_DEAD with its reason
// although both instances published it, and a feed started later replays
// the stream and rebuilds the same observations.
func TestFeedDecodesInPlace(t *testing.T) {
	s := natstest.StartWithStreams(t, bus.DefaultLimits())
	frames := vectorFrames(t)
	var want []decode.Observation
	for _, f := range frames {
		want, _ = (&ADSB{}).Decode(f, Meta{Sensor: "rx1"}, want)
	}
	garbage := []byte{0x8d, 0x40, 0x6b, 0x90, 0x20, 0x15, 0xa6, 0x78, 0xd4, 0xd2, 0x20, 0xaa, 0x4b, 0xdb} // last CRC byte changed

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, b := &collector{}, &collector{}
	startFeed(t, ctx, s.JS, a)
	js2, err := jetstream.New(s.Connect(t)) // the second instance's own connection
	if err != nil {
		t.Fatal(err)
	}
	startFeed(t, ctx, js2, b)

	var batch []byte
	for _, f := range append(frames, garbage) {
		batch = bus.AppendLP(batch, f)
	}
	msg := nats.NewMsg(bus.RawSubject("adsb", "rx1"))
	msg.Data = batch
	msg.Header.Set(bus.HeaderFraming, bus.FramingLP)
	if _, err := s.JS.PublishMsg(ctx, msg); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both feeds", func() bool { return a.len() == len(want) && b.len() == len(want) })
	for _, c := range []*collector{a, b} {
		for i := range want {
			if got := c.obs[i]; got.Key != want[i].Key || got.Lat != want[i].Lat || got.Callsign != want[i].Callsign || got.Sensor != "rx1" {
				t.Errorf("observation %d: got %s %q %v from %q, want %s %q %v", i, got.Key, got.Callsign, got.Lat, got.Sensor, want[i].Key, want[i].Callsign, want[i].Lat)
			}
		}
	}
	waitFor(t, "the dead letter", func() bool {
		info, err := s.JS.Stream(ctx, bus.StreamDead)
		return err == nil && info.CachedInfo().State.Msgs > 0
	})
	time.Sleep(200 * time.Millisecond) // let the second instance's copy arrive
	st, err := s.JS.Stream(ctx, bus.StreamDead)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := st.Info(ctx)
	if info.State.Msgs != 1 {
		t.Fatalf("CUAS_DEAD holds %d messages, want the one garbage frame once", info.State.Msgs)
	}
	dl, err := st.GetMsg(ctx, info.State.FirstSeq)
	if err != nil {
		t.Fatal(err)
	}
	if dl.Header.Get(bus.HeaderReason) == "" || string(dl.Data) != string(garbage) {
		t.Errorf("dead letter %x reason %q", dl.Data, dl.Header.Get(bus.HeaderReason))
	}

	late := &collector{}
	startFeed(t, ctx, s.JS, late)
	waitFor(t, "the replay", func() bool { return late.len() == len(want) })
	info, _ = st.Info(ctx)
	if info.State.Msgs != 1 {
		t.Errorf("after a replay CUAS_DEAD holds %d messages, want 1", info.State.Msgs)
	}
}

// captureBatches splits the real Beast capture into batches of 100 Mode S
// frames, each with its own receive time.
func captureBatches(t *testing.T) (batches [][][]byte, recv []int64) {
	t.Helper()
	data, err := os.ReadFile(testshared.Path(t, "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin"))
	if err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Minute).UnixNano()
	var cur [][]byte
	var f adsb.BeastFrame
	for len(data) > 0 {
		n, err := adsb.ParseBeast(data, &f)
		if n == 0 {
			break
		}
		data = data[n:]
		if err != nil || (f.Len != 7 && f.Len != 14) {
			continue
		}
		cur = append(cur, append([]byte(nil), f.Bytes()...))
		if len(cur) == 100 {
			batches, recv = append(batches, cur), append(recv, base+int64(len(batches))*int64(10*time.Millisecond))
			cur = nil
		}
	}
	return batches, recv
}

// trackSummary is what must agree between two stores.
func trackSummary(s *fusion.Store) map[string]string {
	out := map[string]string{}
	for _, tr := range s.List(fusion.Filter{}) {
		out[tr.ID] = fmt.Sprintf("%s pos=%v %.6f,%.6f %s alt=%v %.1f vel=%v %.2f %.1f obs=%d rejected=%d",
			tr.Callsign, tr.HasPosition, tr.Lat, tr.Lon, tr.PositionMethod, tr.HasAltitude, tr.AltM,
			tr.HasVelocity, tr.SpeedMps, tr.HeadingDeg, tr.Observations, tr.RejectedPositions)
	}
	return out
}

// rawBatch is one raw message as a sensor publishes it.
type rawBatch struct {
	proto  decode.Protocol
	frames [][]byte
	recv   int64
}

// simBatches are two minutes of the demo scenario's traffic, every protocol
// it speaks, as the simulator publishes them (one message per protocol per
// 100 ms tick), received up to a minute ago.
func simBatches(t *testing.T) []rawBatch {
	t.Helper()
	now := time.Now().Add(-3 * time.Minute).Truncate(time.Second)
	cfg := sim.DefaultDemo()
	cfg.Aircraft, cfg.Drones, cfg.MAVLink = 20, 20, 4
	w := sim.NewWorld(cfg, now)
	var out []rawBatch
	for range 1200 {
		now = now.Add(100 * time.Millisecond)
		frames := map[string][][]byte{}
		w.Step(now, 100*time.Millisecond, frames)
		for _, p := range []decode.Protocol{decode.ADSB, decode.RemoteID, decode.MAVLink} {
			if f := frames[string(p)]; len(f) > 0 {
				out = append(out, rawBatch{p, f, now.UnixNano()})
			}
		}
	}
	return out
}

// newDecoders is one fresh decoder per protocol of the simulator and the capture.
func newDecoders(t *testing.T) []FrameDecoder {
	t.Helper()
	mav, err := NewMAVLink(nil)
	if err != nil {
		t.Fatal(err)
	}
	return []FrameDecoder{&ADSB{}, NewRemoteID(), mav}
}

// TestFeedTracksMatchTheObservationPath: the real capture and the simulator
// give the same tracks three ways — decoded and applied in memory (the
// reference), through CUAS_RAW and the fusion feed (what cuasd serve runs),
// and through the shared workers' CUAS_OBS observations (the path the feed
// replaced, kept for --publish-observations).
func TestFeedTracksMatchTheObservationPath(t *testing.T) {
	sources := []struct {
		name      string
		batches   func(*testing.T) []rawBatch
		minTracks int
	}{
		{"capture", func(t *testing.T) []rawBatch {
			batches, recv := captureBatches(t)
			out := make([]rawBatch, len(batches))
			for i, b := range batches {
				out[i] = rawBatch{decode.ADSB, b, recv[i]}
			}
			return out
		}, 10},
		{"simulator", simBatches, 40},
	}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) { feedMatchesObservations(t, src.batches(t), src.minTracks) })
	}
}

func feedMatchesObservations(t *testing.T, batches []rawBatch, minTracks int) {
	newStore := func() *fusion.Store { return fusion.NewStore(fusion.Config{TTL: time.Hour}) }
	lp := func(b rawBatch) (body []byte) {
		for _, f := range b.frames {
			body = bus.AppendLP(body, f)
		}
		return body
	}

	ref := newStore()
	refDec := map[decode.Protocol]*msgDecoder{}
	for _, d := range newDecoders(t) {
		refDec[d.Protocol()] = &msgDecoder{dec: d}
	}
	total, frames := 0, 0
	for _, b := range batches {
		dec := refDec[b.proto]
		dec.decodeMessage(bus.FramingLP, lp(b), Meta{Sensor: "rx1", RecvUnixNano: b.recv, IngestUnixNano: b.recv}, NewMetrics(nil))
		ref.ApplyBatch(dec.obs)
		total, frames = total+len(dec.obs), frames+len(b.frames)
	}

	s := natstest.StartWithStreams(t, bus.DefaultLimits())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub := ingest.NewPublisher(s.JetStream(), nil)
	for _, b := range batches {
		if _, err := pub.PublishBatch(ctx, "test", string(b.proto), "rx1", lp(b), len(b.frames), b.recv, ""); err != nil {
			t.Fatal(err)
		}
	}

	viaFeed := newStore()
	fed := &collector{}
	startFeedWith(t, ctx, s.JS, fed, newDecoders(t))
	waitFor(t, "the feed", func() bool { return fed.len() == total })
	fed.mu.Lock()
	viaFeed.ApplyBatch(fed.obs)
	fed.mu.Unlock()

	for _, d := range newDecoders(t) {
		go func() { _ = NewWorker(s.JetStream(), d, nil, slog.New(slog.NewTextHandler(io.Discard, nil))).Run(ctx) }()
	}
	viaObs := newStore()
	var mu sync.Mutex
	n := 0
	cons, err := s.JS.OrderedConsumer(ctx, bus.StreamObs, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		mu.Lock()
		defer mu.Unlock()
		var obs []decode.Observation
		_ = decode.EachInBatch(m.Data(), func(o *decode.Observation) error { obs = append(obs, *o); return nil })
		viaObs.ApplyBatch(obs)
		n += len(obs)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	waitFor(t, "CUAS_OBS", func() bool { mu.Lock(); defer mu.Unlock(); return n == total })

	want := trackSummary(ref)
	if len(want) < minTracks {
		t.Fatalf("only %d tracks, want at least %d", len(want), minTracks)
	}
	mu.Lock()
	defer mu.Unlock()
	for name, st := range map[string]*fusion.Store{"fusion feed": viaFeed, "CUAS_OBS": viaObs} {
		t.Run(name, func(t *testing.T) {
			got := trackSummary(st)
			if len(got) != len(want) {
				t.Errorf("%s: %d tracks, reference %d", name, len(got), len(want))
			}
			for id, w := range want {
				if got[id] != w {
					t.Errorf("%s: track %s\n got %s\nwant %s", name, id, got[id], w)
				}
			}
		})
	}
	t.Logf("%d frames, %d observations, %d tracks agree three ways", frames, total, len(want))
}
