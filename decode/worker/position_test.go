package worker

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/internal/natstest"
)

// TestSensorPositionHeader (issue 31): a Mode S receiver publishing Beast
// batches straight to cuas.raw states its antenna's position in
// Cuas-Sensor-Position. A well-formed one reaches the feed's Timed hook
// with every timestamped frame; a malformed or out-of-range one, or two
// of them, makes the message a dead letter with reason sensor_position
// and the header's problem, counted, and nothing of it is decoded or
// handed to multilateration with a guessed position.
func TestSensorPositionHeader(t *testing.T) {
	s := natstest.StartWithStreams(t, bus.DefaultLimits())
	ctx := t.Context()
	tf := startTimedFeed(t, s)
	c, m := tf.c, tf.m

	frame := []byte{0x8D, 0x40, 0x6B, 0x90, 0x20, 0x15, 0xA6, 0x78, 0xD4, 0xD2, 0x20, 0xAA, 0x4B, 0xDA}
	body := bus.AppendBeast(nil, bus.BeastModeSLong, 12_000_000, 0x80, frame)
	publish := func(sensor string, positions ...string) {
		msg := &nats.Msg{Subject: bus.RawSubject("adsb", sensor), Data: body, Header: nats.Header{}}
		msg.Header.Set(bus.HeaderFraming, bus.FramingBeast)
		msg.Header.Set(bus.HeaderClock, "gps")
		for _, p := range positions {
			msg.Header.Add(bus.HeaderSensorPosition, p)
		}
		if _, err := s.JS.PublishMsg(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	bad := map[string][]string{
		"rx-words": {"north of the church"},
		"rx-range": {"47.3,8.5,1706ft"},
		"rx-feet":  {"47.3,8.5,17060"},
		"rx-null":  {"0,0,0"},
		"rx-two":   {"47.3,8.5,520", "47.4,8.5,520"},
	}
	wantReason := map[string]string{
		"rx-words": "want LAT,LON,ALT", "rx-range": `alt "1706ft" is not a decimal number`, "rx-feet": "alt out of range",
		"rx-null": "without a position fix", "rx-two": "2 Cuas-Sensor-Position headers",
	}
	for sensor, ps := range bad {
		publish(sensor, ps...)
	}
	publish("rx-good", " 47.3769, 8.5417, 520 ")
	publish("rx-none")
	waitFor(t, "the good messages decoded", func() bool { return c.len() == 2 })
	for _, dl := range deadLetters(t, s, len(bad)) {
		sensor, reason := dl.Get(bus.HeaderSensor), dl.Get(bus.HeaderReason)
		if !strings.HasPrefix(reason, "sensor_position: ") || !strings.Contains(reason, wantReason[sensor]) {
			t.Errorf("%s: dead letter reason %q, want sensor_position and %q", sensor, reason, wantReason[sensor])
		}
	}
	if n := testutil.ToFloat64(m.rejected.WithLabelValues("adsb", "sensor_position")); n != float64(len(bad)) {
		t.Errorf("cuasd_frames_rejected_total{reason=sensor_position} = %v, want %d", n, len(bad))
	}
	timed := map[string][]Meta{}
	for _, call := range tf.seen() {
		timed[call.meta.Sensor] = append(timed[call.meta.Sensor], call.meta)
	}
	for sensor := range bad {
		if len(timed[sensor]) != 0 {
			t.Errorf("%s: a refused position's frames reached multilateration: %+v", sensor, timed[sensor])
		}
	}
	if g := timed["rx-good"]; len(g) != 1 || !g[0].HasPosition || g[0].Position != (bus.SensorPosition{Lat: 47.3769, Lon: 8.5417, AltM: 520}) {
		t.Errorf("rx-good: Timed saw %+v, want its position", g)
	}
	if g := timed["rx-none"]; len(g) != 1 || g[0].HasPosition || g[0].PositionErr != "" {
		t.Errorf("rx-none: Timed saw %+v, want no position", g)
	}
}

// TestTimedGPSSensorNs (issue 31): a frame whose sensor time is UTC from
// a GPS-disciplined clock (framing lpt with Cuas-Clock gps, as the
// single-frame intake batches a Cuas-Sensor-Ns) reaches the Timed hook
// as the Radarcape-style Beast timestamp it equals, with the position
// its receiver stated; one on a free-running nanosecond clock does not
// (it is no Beast count).
func TestTimedGPSSensorNs(t *testing.T) {
	s := natstest.StartWithStreams(t, bus.DefaultLimits())
	ctx := t.Context()
	tf := startTimedFeed(t, s)
	c := tf.c

	frame := []byte{0x8D, 0x40, 0x6B, 0x90, 0x20, 0x15, 0xA6, 0x78, 0xD4, 0xD2, 0x20, 0xAA, 0x4B, 0xDA}
	utc := time.Now().Add(-time.Second).UnixNano()
	for _, clock := range []string{"gps", "receiver"} {
		msg := &nats.Msg{Subject: bus.RawSubject("adsb", "sdr-"+clock), Data: bus.AppendLPT(nil, utc, frame), Header: nats.Header{}}
		msg.Header.Set(bus.HeaderFraming, bus.FramingLPT)
		msg.Header.Set(bus.HeaderClock, clock)
		msg.Header.Set(bus.HeaderSensorPosition, "47.3769,8.5417,455.2")
		if _, err := s.JS.PublishMsg(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "both frames decoded", func() bool { return c.len() == 2 })
	calls := tf.seen()
	ofDay := utc % 86400e9
	want := uint64(ofDay/1e9)<<30 | uint64(ofDay%1e9)
	if len(calls) != 1 || calls[0].meta.Sensor != "sdr-gps" || calls[0].ts != want || !calls[0].meta.HasPosition {
		t.Fatalf("Timed saw %+v; want only sdr-gps's frame at Beast GPS time %#x with its position", calls, want)
	}
}

// timedCall is one call of the Timed hook.
type timedCall struct {
	meta Meta
	ts   uint64
}

// timedFeed is a Feed on a test server whose Timed hook records its calls.
type timedFeed struct {
	c     *collector
	m     *Metrics
	mu    sync.Mutex
	calls []timedCall
}

func startTimedFeed(t *testing.T, s *natstest.Server) *timedFeed {
	t.Helper()
	tf := &timedFeed{c: &collector{}, m: NewMetrics(nil)}
	ctx, cancel := context.WithCancel(context.Background())
	f := NewFeed(bus.NewJetStream(s.JS), FeedConfig{Decoders: []FrameDecoder{&ADSB{}}, Apply: tf.c.apply, Replay: time.Minute, Metrics: tf.m,
		Timed: func(meta *Meta, frames []TimedFrame) {
			tf.mu.Lock()
			for _, f := range frames {
				tf.calls = append(tf.calls, timedCall{*meta, f.TS})
			}
			tf.mu.Unlock()
		}}, nil)
	done := make(chan struct{})
	go func() { defer close(done); _ = f.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return tf
}

func (tf *timedFeed) seen() []timedCall {
	tf.mu.Lock()
	defer tf.mu.Unlock()
	return append([]timedCall(nil), tf.calls...)
}

// deadLetters waits for n dead letters and returns their headers.
func deadLetters(t *testing.T, s *natstest.Server, n int) []nats.Header {
	t.Helper()
	ctx := t.Context()
	dead, err := s.JS.Stream(ctx, bus.StreamDead)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the dead letters", func() bool {
		info, err := dead.Info(ctx)
		return err == nil && info.State.Msgs == uint64(n)
	})
	var out []nats.Header
	for seq := uint64(1); seq <= uint64(n); seq++ {
		dl, err := dead.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, dl.Header)
	}
	return out
}

// TestSensorTimeHeaderRefused: a raw message whose Cuas-Sensor-Ns is not
// a positive whole number of nanoseconds is a dead letter with reason
// sensor_time, counted, as an unknown Cuas-Clock is: it used to be
// decoded with its arrival time as if the sensor had stated none.
func TestSensorTimeHeaderRefused(t *testing.T) {
	s := natstest.StartWithStreams(t, bus.DefaultLimits())
	ctx := t.Context()
	tf := startTimedFeed(t, s)
	c, m := tf.c, tf.m
	frame := []byte{0x8D, 0x40, 0x6B, 0x90, 0x20, 0x15, 0xA6, 0x78, 0xD4, 0xD2, 0x20, 0xAA, 0x4B, 0xDA}
	bad := []string{"soon", "-1", "1.7e18", "0x1234"}
	for i, v := range append(bad, "1795949147916521381") {
		msg := &nats.Msg{Subject: bus.RawSubject("adsb", "rx-"+string(rune('a'+i))), Data: frame, Header: nats.Header{}}
		msg.Header.Set(bus.HeaderSensorTime, v)
		if _, err := s.JS.PublishMsg(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the good message decoded", func() bool { return c.len() >= 1 })
	for _, dl := range deadLetters(t, s, len(bad)) {
		if r := dl.Get(bus.HeaderReason); !strings.HasPrefix(r, "sensor_time: ") || !strings.Contains(r, bus.HeaderSensorTime) {
			t.Errorf("dead letter reason %q, want sensor_time naming %s", r, bus.HeaderSensorTime)
		}
	}
	if n := testutil.ToFloat64(m.rejected.WithLabelValues("adsb", "sensor_time")); n != float64(len(bad)) {
		t.Errorf("cuasd_frames_rejected_total{reason=sensor_time} = %v, want %d", n, len(bad))
	}
	if n := c.len(); n != 1 {
		t.Errorf("%d observations decoded, want only the good message's", n)
	}
}

// TestWrongClockCounted: Beast frames of a receiver given ?clock=gps
// whose timestamps are no GPS time of day (a 12 MHz counter: here its
// nanoseconds field is 10^9 or more) are timed by their arrival and
// counted in cuasd_sensor_clock_invalid_total, so the wrong ?clock= is
// seen; they used to be timed by their arrival without a trace.
func TestWrongClockCounted(t *testing.T) {
	frame := []byte{0x8D, 0x40, 0x6B, 0x90, 0x20, 0x15, 0xA6, 0x78, 0xD4, 0xD2, 0x20, 0xAA, 0x4B, 0xDA}
	var body []byte
	for i := range 3 { // counter values whose low 30 bits are over 10^9
		body = bus.AppendBeast(body, bus.BeastModeSLong, uint64(1000+i)<<30|1_050_000_000, 0x80, frame)
	}
	body = bus.AppendBeast(body, bus.BeastModeSLong, uint64(1003)<<30|5_000, 0x80, frame) // a time of day
	m := NewMetrics(nil)
	d := &msgDecoder{dec: &ADSB{}}
	d.decodeMessage(bus.FramingBeast, body, Meta{Sensor: "rx", Clock: sensorclock.GPS, RecvUnixNano: time.Now().UnixNano()}, m)
	if n := testutil.ToFloat64(m.clockInvalid.WithLabelValues("adsb")); n != 3 {
		t.Errorf("cuasd_sensor_clock_invalid_total{adsb} = %v, want 3", n)
	}
}
