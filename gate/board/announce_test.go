package board

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/events/eventstest"
	"github.com/cuasd/cuasd/fusion/zones"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/internal/natstest"
)

// eventLog subscribes to every event on a second connection, as another
// process would, and hands them out in order.
type eventLog struct {
	t   *testing.T
	pub *nats.Conn
	sub *nats.Subscription
}

func newEventLog(t *testing.T, s *natstest.Server) *eventLog {
	nc := s.Connect(t)
	sub, err := nc.SubscribeSync("cuas.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return &eventLog{t: t, pub: s.Conn, sub: sub}
}

type gotEvent struct {
	subject string
	header  events.Header
	raw     []byte
}

// drain returns every event published so far, each checked against its
// schema.
func (l *eventLog) drain() []gotEvent {
	l.t.Helper()
	if err := l.pub.Flush(); err != nil {
		l.t.Fatal(err)
	}
	var out []gotEvent
	for {
		m, err := l.sub.NextMsg(150 * time.Millisecond)
		if err != nil {
			return out
		}
		eventstest.Validate(l.t, m.Subject, m.Data)
		h, err := events.Peek(m.Data)
		if err != nil {
			l.t.Fatalf("%s: %v", m.Subject, err)
		}
		out = append(out, gotEvent{m.Subject, h, m.Data})
	}
}

// only is the events of type typ.
func only(evs []gotEvent, typ string) []gotEvent {
	return where(evs, func(e gotEvent) bool { return e.header.Type == typ })
}

// where is the events that match.
func where(evs []gotEvent, match func(gotEvent) bool) []gotEvent {
	var out []gotEvent
	for _, e := range evs {
		if match(e) {
			out = append(out, e)
		}
	}
	return out
}

func TestAnnouncesTracksThreatsAndZones(t *testing.T) {
	s := natstest.Start(t)
	log := newEventLog(t, s)
	c := &clock{time.Unix(1_700_000_000, 0)}
	st := newTestStore(c)
	zone := gate.Geofence{ID: "z1", Name: "Zone", Class: gate.ClassPrison, Center: []float64{52, 4}, RadiusM: 500}
	snap := &zones.Snapshot{Geofences: []gate.Geofence{zone}, Allow: gate.NewAllowIndex(gate.AllowList{})}
	led := &fakeLedger{}
	b := New(Config{Store: st, Zones: func() *zones.Snapshot { return snap }, Ledger: led, Now: c.now,
		Events: s.Conn, Instance: "test"}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { b.recordLoop(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	apply := func(dt time.Duration, lat float64) {
		c.t = c.t.Add(dt)
		o := ridObs("D1", lat, 4, c.t.UnixNano())
		st.Apply(&o)
		b.Sweep(ctx)
	}

	t.Run("first sight announces the track and the zone", func(t *testing.T) {
		apply(time.Second, 52.02)
		evs := log.drain()
		ups := only(evs, events.TypeTrackUpdate)
		if len(ups) != 1 || ups[0].subject != "cuas.track.remoteid.D1" {
			t.Fatalf("track updates: %+v", evs)
		}
		var te events.TrackEvent
		if err := json.Unmarshal(ups[0].raw, &te); err != nil {
			t.Fatal(err)
		}
		if te.Track.TrackID != "rid:D1" || te.Track.Lat == nil || *te.Track.Lat != 52.02 || te.Assessment == nil ||
			te.Assessment.Decision == "" || te.Assessment.Geofence != "z1" || te.Instance != "test" {
			t.Fatalf("track event %s", ups[0].raw)
		}
		if z := only(evs, events.TypeZoneUpsert); len(z) != 1 || z[0].subject != "cuas.zone.z1" {
			t.Fatalf("zone events: %+v", evs)
		}
	})
	t.Run("a change within a second waits, then is announced", func(t *testing.T) {
		apply(400*time.Millisecond, 52.0201)
		if ups := only(log.drain(), events.TypeTrackUpdate); len(ups) != 0 {
			t.Fatalf("%d updates within the minimum interval", len(ups))
		}
		apply(700*time.Millisecond, 52.0202)
		if ups := only(log.drain(), events.TypeTrackUpdate); len(ups) != 1 {
			t.Fatalf("%d updates after the interval, want 1", len(ups))
		}
	})
	t.Run("a breach is a threat event with its receipt", func(t *testing.T) {
		apply(10*time.Second, 52.001)
		var th []gotEvent
		for i := 0; i < 20 && len(th) == 0; i++ { // the receipt loop runs beside the sweep
			th = only(log.drain(), events.TypeThreat)
		}
		if len(th) != 1 || th[0].subject != "cuas.threat.remoteid.D1" {
			t.Fatalf("threat events: %+v", th)
		}
		var ev events.ThreatEvent
		if err := json.Unmarshal(th[0].raw, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Reason != "breach_started" || !ev.Threat.Breach || ev.Threat.ReceiptIndex == nil ||
			*ev.Threat.ReceiptIndex != int64(len(led.records)-1) || !ev.Threat.HumanDecision || len(ev.Threat.Axes) != gate.NumAxes {
			t.Fatalf("threat event %s", th[0].raw)
		}
	})
	t.Run("an unchanged track is announced again after the keep-alive", func(t *testing.T) {
		log.drain()
		c.t = c.t.Add(events.KeepAlive - time.Second)
		b.Sweep(ctx)
		if ups := only(log.drain(), events.TypeTrackUpdate); len(ups) != 0 {
			t.Fatalf("%d updates before the keep-alive", len(ups))
		}
		c.t = c.t.Add(2 * time.Second)
		b.Sweep(ctx)
		if ups := only(log.drain(), events.TypeTrackUpdate); len(ups) != 1 {
			t.Fatalf("%d keep-alive updates, want 1", len(ups))
		}
	})
	t.Run("expiry announces the loss once, and a deleted zone", func(t *testing.T) {
		c.t = c.t.Add(2 * time.Minute)
		st.Expire()
		snap = &zones.Snapshot{Allow: gate.NewAllowIndex(gate.AllowList{})}
		b.Sweep(ctx)
		evs := log.drain()
		lost := only(evs, events.TypeTrackLost)
		if len(lost) != 1 || lost[0].subject != "cuas.track.remoteid.D1" {
			t.Fatalf("lost events: %+v", evs)
		}
		if z := only(evs, events.TypeZoneDeleted); len(z) != 1 || z[0].subject != "cuas.zone.z1" {
			t.Fatalf("zone deletion: %+v", evs)
		}
		b.Sweep(ctx)
		if n := len(only(log.drain(), events.TypeTrackLost)); n != 0 {
			t.Fatalf("loss announced %d more times", n)
		}
	})
}

func TestAnnouncesSwarmsAndOnlyWhatItOwns(t *testing.T) {
	s := natstest.Start(t)
	log := newEventLog(t, s)
	c := &clock{time.Unix(1_700_000_000, 0)}
	st := newTestStore(c)
	owned := map[string]bool{"rid:A": true, "rid:B": true, "rid:C": true}
	b := New(Config{Store: st, Now: c.now, Events: s.Conn, Instance: "a", Owns: func(id string) bool { return owned[id] }}, nil)
	place := func(id string, lat float64) {
		o := ridObs(id, lat, 4, c.t.UnixNano())
		st.Apply(&o)
	}
	c.t = c.t.Add(time.Second)
	place("A", 52)
	place("B", 52.0005)
	place("C", 52.001)
	place("X", 53)
	b.Sweep(context.Background())
	evs := log.drain()
	formed := only(evs, events.TypeSwarmFormed)
	if len(formed) != 1 {
		t.Fatalf("swarm events: %+v", evs)
	}
	var sw events.SwarmEvent
	_ = json.Unmarshal(formed[0].raw, &sw)
	if sw.Swarm.ID != "swarm-rid:A" || sw.Swarm.Size != 3 || len(sw.Swarm.Members) != 3 || sw.Swarm.Members[0] != "rid:A" {
		t.Fatalf("swarm %s", formed[0].raw)
	}
	for _, e := range only(evs, events.TypeTrackUpdate) {
		if e.subject == "cuas.track.remoteid.X" {
			t.Fatal("announced a track this instance does not own")
		}
	}
	if n := len(only(evs, events.TypeTrackUpdate)); n != 3 {
		t.Fatalf("%d track updates, want the 3 owned", n)
	}
	c.t = c.t.Add(5 * time.Second)
	place("A", 52)
	place("B", 52.0005)
	place("C", 52.005) // C leaves (450 m away): 2 left, no swarm
	b.Sweep(context.Background())
	if g := only(log.drain(), events.TypeSwarmGone); len(g) != 1 {
		t.Fatalf("dissolution not announced")
	}
}

// TestTrackEventsCarryEveryPosition: positions come faster than track
// events (at most one a second), so each event carries the positions
// received since the previous one, and together they hold every fix once
// (what the history recorder of issue 20 stores).
func TestTrackEventsCarryEveryPosition(t *testing.T) {
	s := natstest.Start(t)
	log := newEventLog(t, s)
	c := &clock{time.Unix(1_700_000_000, 0)}
	st := newTestStore(c)
	b := New(Config{Store: st, Now: c.now, Events: s.Conn, Instance: "test"}, nil)
	ctx := context.Background()
	var sent []float64
	for i := 0; i < 20; i++ {
		c.t = c.t.Add(400 * time.Millisecond)
		lat := 52 + float64(i)*0.001
		o := ridObs("D1", lat, 4, c.t.UnixNano())
		st.Apply(&o)
		sent = append(sent, fusionRound(lat))
		b.Sweep(ctx)
	}
	ups := only(log.drain(), events.TypeTrackUpdate)
	if len(ups) < 3 || len(ups) > 9 {
		t.Fatalf("%d track events for 8 s of positions; want about one a second", len(ups))
	}
	var got []float64
	for _, u := range ups {
		var te events.TrackEvent
		if err := json.Unmarshal(u.raw, &te); err != nil {
			t.Fatal(err)
		}
		for _, p := range te.Track.History {
			got = append(got, p.Lat)
		}
	}
	// The positions after the last event are announced with the next one.
	if len(got) == 0 || len(got) > len(sent) {
		t.Fatalf("events carried %d positions of %d", len(got), len(sent))
	}
	for i := range got {
		if got[i] != sent[i] {
			t.Fatalf("position %d is %v, want %v (all carried: %v)", i, got[i], sent[i], got)
		}
	}
	if len(sent)-len(got) > 3 {
		t.Fatalf("only %d of %d positions carried", len(got), len(sent))
	}
}

func fusionRound(v float64) float64 { return float64(int64(v*1e6+0.5)) / 1e6 }

// TestUnannouncedPositionsAreCounted: a track sending 50 positions a
// second outruns its 32-position ring between two events a second apart;
// the fixes no event carried are counted, and none while it is slower.
func TestUnannouncedPositionsAreCounted(t *testing.T) {
	s := natstest.Start(t)
	log := newEventLog(t, s)
	c := &clock{time.Unix(1_700_000_000, 0)}
	st := newTestStore(c)
	reg := prometheus.NewRegistry()
	b := New(Config{Store: st, Now: c.now, Events: s.Conn, Instance: "test"}, reg)
	ctx := context.Background()
	step := func(n int, dt time.Duration) {
		for i := 0; i < n; i++ {
			c.t = c.t.Add(dt)
			o := ridObs("D1", 52+float64(c.t.UnixMilli()%100000)*1e-6, 4, c.t.UnixNano())
			st.Apply(&o)
		}
		b.Sweep(ctx)
	}
	step(1, time.Second) // first event
	step(5, 200*time.Millisecond)
	if got := testutil.ToFloat64(b.ann.unannounced); got != 0 {
		t.Fatalf("%v positions counted unannounced at 5 a second", got)
	}
	step(50, 20*time.Millisecond) // 50 in one second: 18 past the ring
	ups := only(log.drain(), events.TypeTrackUpdate)
	var last events.TrackEvent
	if err := json.Unmarshal(ups[len(ups)-1].raw, &last); err != nil {
		t.Fatal(err)
	}
	if len(ups) != 3 || len(last.Track.History) != 32 {
		t.Fatalf("%d events, the last carrying %d positions; want 3, the last with the ring's 32", len(ups), len(last.Track.History))
	}
	if got := testutil.ToFloat64(b.ann.unannounced); got != 18 {
		t.Fatalf("%v positions counted unannounced, want 18", got)
	}
}
