package sensors

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/events/eventstest"
	"github.com/cuasd/cuasd/ingest/sensors/droneclaim"
	"github.com/cuasd/cuasd/internal/natstest"
	"github.com/cuasd/cuasd/lifecycle"
)

// runAnnouncer runs an announcer for reg as instance until the test ends.
func runAnnouncer(t *testing.T, srv *natstest.Server, reg *Registry, instance string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	a := &Announcer{Registry: reg, Conn: srv.Connect(t), Instance: instance, Tick: 20 * time.Millisecond,
		Repeat: 200 * time.Millisecond} // an instance that starts later hears the others at their next repeat
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := a.Run(ctx, lifecycle.Discard); err != nil {
			t.Errorf("announcer %s: %v", instance, err)
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// waitFor polls cond until it holds (failing after a generous deadline;
// the assertion is the condition, not the time).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

// TestRegistryOnNATS (issue 25): two instances' registries on one NATS
// server each list every sensor, marked with the instance that heard it;
// a sensor both hear lists both; the events match their schema.
func TestRegistryOnNATS(t *testing.T) {
	srv := natstest.Start(t)
	var mu sync.Mutex
	var raw [][]byte
	nc := srv.Connect(t)
	if _, err := nc.Subscribe(bus.SensorPrefix+".>", func(m *nats.Msg) {
		mu.Lock()
		raw = append(raw, m.Data)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	a, b := NewRegistry(time.Minute), NewRegistry(time.Minute)
	now := time.Now().UnixNano()
	a.status("kit-1", "wardragon", now, &droneclaim.Status{Serial: "kit-1", HasPosition: true, Lat: 51.47001, Lon: -0.4541, GPSFix: true})
	a.heard("shared-udp", "json-udp", now, &droneclaim.Claim{HasRSSI: true, RSSI: -70})
	b.heard("esp-roof", "serial", now, &droneclaim.Claim{})
	b.heard("shared-udp", "json-udp", now+int64(time.Second), &droneclaim.Claim{HasRSSI: true, RSSI: -65})
	b.Configure("mast-2", "wifi-capture", &Position{Lat: 51.5, Lon: -0.4}, 0) // configured, never heard
	runAnnouncer(t, srv, a, "cuasd-a")
	runAnnouncer(t, srv, b, "cuasd-b")

	ids := func(r *Registry) []string {
		var out []string
		for _, s := range r.List() {
			out = append(out, s.ID)
		}
		return out
	}
	want := []string{"esp-roof", "kit-1", "mast-2", "shared-udp"}
	// Each lists shared-udp from its own hearing before the other's
	// announcement of it arrives: wait for that too.
	heardByBoth := func(r *Registry) bool {
		s, _ := r.Get("shared-udp")
		return len(s.HeardBy) == 2
	}
	waitFor(t, "both instances list every sensor, shared-udp heard by both", func() bool {
		return slices.Equal(ids(a), want) && slices.Equal(ids(b), want) && heardByBoth(a) && heardByBoth(b)
	})
	kit, _ := b.Get("kit-1")
	if kit.Instance != "cuasd-a" || !slices.Equal(kit.HeardBy, []string{"cuasd-a"}) || kit.Position == nil ||
		kit.Position.Lat != 51.47001 || kit.Position.Source != "reported" || kit.GPSFix == nil || !*kit.GPSFix || kit.Down {
		t.Errorf("kit-1 on b: %+v", kit)
	}
	esp, _ := a.Get("esp-roof")
	if esp.Instance != "cuasd-b" || esp.Kind != "serial" || esp.Messages != 1 {
		t.Errorf("esp-roof on a: %+v", esp)
	}
	for _, r := range []*Registry{a, b} {
		s, _ := r.Get("shared-udp")
		// b heard it last: its state (RSSI -65) is shown, both are listed.
		if s.Instance != "cuasd-b" || !slices.Equal(s.HeardBy, []string{"cuasd-a", "cuasd-b"}) || s.LastRSSI == nil || *s.LastRSSI != -65 {
			t.Errorf("shared-udp: %+v", s)
		}
	}
	if m, _ := a.Get("mast-2"); m.Instance != "cuasd-b" || len(m.HeardBy) != 0 || !m.Down || m.Position == nil || m.Position.Source != "configured" {
		t.Errorf("mast-2 on a: %+v", m)
	}
	// /readyz is each instance's own: a's down list holds none of b's.
	if d := a.LocalDown(); len(d) != 0 {
		t.Errorf("a reports b's sensors down: %+v", d)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, data := range raw {
		eventstest.Validate(t, bus.SensorSubject("x"), data)
	}
}

// TestAnnouncerIgnoresBadEvents: an event of another type, a broken one or
// one without an id changes nothing; this instance's own is not merged.
func TestAnnouncerIgnoresBadEvents(t *testing.T) {
	r := NewRegistry(time.Minute)
	a := &Announcer{Registry: r, Instance: "me"}
	good, _ := json.Marshal(events.SensorEvent{Header: events.Header{V: 1, Type: events.TypeSensorState, Instance: "other"},
		Sensor: Sensor{ID: "kit-9", Kind: "wardragon", ExpectSeconds: 60}})
	for _, data := range []string{
		`{"v":1,"type":"zone.upsert","instance":"other","sensor":{"id":"x"}}`,
		`{"v":2,"type":"sensor.state","instance":"other","sensor":{"id":"x"}}`,
		`{"v":1,"type":"sensor.state","instance":"other","sensor":{"id":""}}`,
		`{"v":1,"type":"sensor.state","instance":"","sensor":{"id":"x"}}`,
		`{"v":1,"type":"sensor.state","instance":"me","sensor":{"id":"x"}}`,
		`{"v":1,"type":"sensor.state","instance":"other","sensor":{"id":"x","messages":"many"}}`,
		`not json`,
	} {
		a.receive(&nats.Msg{Subject: "cuas.sensor.x", Data: []byte(data)})
	}
	if l := r.List(); len(l) != 0 {
		t.Fatalf("bad events merged: %+v", l)
	}
	a.receive(&nats.Msg{Subject: "cuas.sensor.kit-9", Data: good})
	if s, ok := r.Get("kit-9"); !ok || s.Instance != "other" || !s.Down {
		t.Fatalf("good event: %+v %v", s, ok)
	}
}

// TestAnnounceWhenChanged: a sensor is announced when new, when it
// changes, when it goes down, and after the repeat interval — not for
// every message it sends.
func TestAnnounceWhenChanged(t *testing.T) {
	r := NewRegistry(time.Minute)
	clock := time.Unix(1_700_000_000, 0)
	r.SetClock(func() time.Time { return clock })
	now := clock.UnixNano()
	r.heard("kit-1", "wardragon", now, &droneclaim.Claim{})
	if d := r.due(10 * time.Second); len(d) != 1 {
		t.Fatalf("new sensor: %d due", len(d))
	}
	r.heard("kit-1", "wardragon", now, &droneclaim.Claim{})
	if d := r.due(10 * time.Second); len(d) != 0 {
		t.Fatalf("a message alone: %d due", len(d))
	}
	r.rejected("kit-1", "wardragon", now, "invalid_json")
	if d := r.due(10 * time.Second); len(d) != 1 {
		t.Fatalf("a new reject reason: %d due", len(d))
	}
	r.rejected("kit-1", "wardragon", now, "invalid_json")
	if d := r.due(10 * time.Second); len(d) != 0 {
		t.Fatalf("the same reason again: %d due", len(d))
	}
	clock = clock.Add(10 * time.Second)
	if d := r.due(10 * time.Second); len(d) != 1 || d[0].Down {
		t.Fatalf("repeat: %+v", d)
	}
	clock = clock.Add(61 * time.Second)
	if d := r.due(time.Hour); len(d) != 1 || !d[0].Down {
		t.Fatalf("down: %+v", d)
	}
}
