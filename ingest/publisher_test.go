package ingest

import (
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/internal/natstest"
)

func testJS(t *testing.T, l bus.Limits) jetstream.JetStream {
	t.Helper()
	return natstest.StartWithStreams(t, l).JS
}

func TestPublishFramesDeduplicates(t *testing.T) {
	js := testJS(t, bus.DefaultLimits())
	p := NewPublisher(bus.NewJetStream(js), nil)
	ctx := context.Background()
	frames := []Frame{{Data: []byte{1, 2, 3}, RecvUnixNano: 42}, {Data: []byte{1, 2, 3}, RecvUnixNano: 43}}
	res, err := p.PublishFrames(ctx, "test", "adsb", "rx1", frames)
	if err != nil || res.Accepted != 2 || res.Duplicates != 0 || res.Subject != "cuas.raw.adsb.rx1" {
		t.Fatalf("first: %+v %v", res, err)
	}
	res, err = p.PublishFrames(ctx, "test", "adsb", "rx1", frames)
	if err != nil || res.Accepted != 0 || res.Duplicates != 2 {
		t.Fatalf("retry: %+v %v", res, err)
	}
	// The same bytes from another sensor are another reception.
	if res, _ := p.PublishFrames(ctx, "test", "adsb", "rx2", frames[:1]); res.Accepted != 1 {
		t.Fatalf("other sensor: %+v", res)
	}
	st, _ := js.Stream(ctx, bus.StreamRaw)
	info, _ := st.Info(ctx)
	if info.State.Msgs != 3 {
		t.Fatalf("%d messages stored, want 3", info.State.Msgs)
	}
	m, err := st.GetLastMsgForSubject(ctx, "cuas.raw.adsb.rx2")
	if err != nil || m.Header.Get(bus.HeaderRecvTime) != "42" || m.Header.Get(bus.HeaderSensor) != "rx2" || m.Header.Get(bus.HeaderIngestTime) == "" {
		t.Fatalf("headers %v %v", m.Header, err)
	}
}

func TestPublishReportsBackpressure(t *testing.T) {
	l := bus.DefaultLimits()
	l.RawMaxBytes = 4 << 10
	p := NewPublisher(bus.NewJetStream(testJS(t, l)), nil)
	var err error
	for i := 0; i < 200 && err == nil; i++ {
		_, err = p.PublishFrames(context.Background(), "test", "adsb", "rx", []Frame{{Data: make([]byte, 100), RecvUnixNano: int64(i + 1)}})
	}
	var e *Error
	if !errors.As(err, &e) || !e.Backpressure() || !e.StoreFull() {
		t.Fatalf("a full stream gave %v, want a back-pressure error for lack of space", err)
	}
}

func TestMsgIDIsAReceptionIdentity(t *testing.T) {
	a := MsgID("adsb", "rx", 1, []byte{1})
	for _, b := range []string{MsgID("adsb", "rx", 2, []byte{1}), MsgID("adsb", "ry", 1, []byte{1}),
		MsgID("mavlink", "rx", 1, []byte{1}), MsgID("adsb", "rx", 1, []byte{2})} {
		if a == b {
			t.Fatal("distinct receptions share an id")
		}
	}
	if a != MsgID("adsb", "rx", 1, []byte{1}) || len(a) != 32 {
		t.Fatal("the id is not stable")
	}
}

// A frame's link address travels as the Cuas-Link header: metadata, not
// part of the subject or the sensor (issue 24, item 3).
func TestPublishFramesCarriesLink(t *testing.T) {
	js := testJS(t, bus.DefaultLimits())
	p := NewPublisher(bus.NewJetStream(js), nil)
	ctx := context.Background()
	frames := []Frame{{Data: []byte{0xFE, 1}, Link: "192.0.2.7:14551"}}
	if _, err := p.PublishFrames(ctx, "test", "mavlink", "rx", frames); err != nil {
		t.Fatal(err)
	}
	st, _ := js.Stream(ctx, bus.StreamRaw)
	m, err := st.GetLastMsgForSubject(ctx, "cuas.raw.mavlink.rx")
	if err != nil || m.Header.Get(bus.HeaderLink) != "192.0.2.7:14551" {
		t.Fatalf("headers %v %v", m.Header, err)
	}
}

// TestSimulatorFramesAreMarked: the simulator's frames, batched or one by
// one, carry Cuas-Simulated; another adapter's do not (issue 34: the seam
// the feeds filter on).
func TestSimulatorFramesAreMarked(t *testing.T) {
	js := testJS(t, bus.DefaultLimits())
	p := NewPublisher(bus.NewJetStream(js), nil)
	ctx := context.Background()
	st, _ := js.Stream(ctx, bus.StreamRaw)
	for _, tc := range []struct {
		adapter, sensor string
		want            bool
	}{{SimulatorAdapter, "demo", true}, {"beast-in", "rx1", false}} {
		if _, err := p.PublishFrames(ctx, tc.adapter, "adsb", tc.sensor, []Frame{{Data: []byte{0x8d, 1, 2}}}); err != nil {
			t.Fatal(err)
		}
		m, err := st.GetLastMsgForSubject(ctx, "cuas.raw.adsb."+tc.sensor)
		if err != nil || bus.Simulated(m.Header) != tc.want {
			t.Errorf("%s frames: headers %v (%v), simulated want %v", tc.adapter, m.Header, err, tc.want)
		}
		if _, err := p.PublishBatch(ctx, tc.adapter, "adsb", tc.sensor+"b", []byte{0, 1, 0x8d}, 1, 0, ""); err != nil {
			t.Fatal(err)
		}
		m, err = st.GetLastMsgForSubject(ctx, "cuas.raw.adsb."+tc.sensor+"b")
		if err != nil || bus.Simulated(m.Header) != tc.want {
			t.Errorf("%s batch: headers %v (%v), simulated want %v", tc.adapter, m.Header, err, tc.want)
		}
	}
}
