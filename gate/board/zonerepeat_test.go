package board

import (
	"context"
	"testing"
	"time"

	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/fusion/zones"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/internal/natstest"
)

// TestZonesRepeatedAndOnChange (issue 18: TAK clients draw the zones from
// these events): every zone is announced when it appears, a changed zone
// at the next sweep, an unchanged one not again until events.ZoneRepeat,
// then every zone.
func TestZonesRepeatedAndOnChange(t *testing.T) {
	s := natstest.Start(t)
	log := newEventLog(t, s)
	c := &clock{time.Unix(1_700_000_000, 0)}
	a := gate.Geofence{ID: "a", Class: gate.ClassPrison, Center: []float64{52, 4}, RadiusM: 500}
	b := gate.Geofence{ID: "b", Class: gate.ClassAirport, Center: []float64{52.1, 4.1}, RadiusM: 900}
	snap := &zones.Snapshot{Geofences: []gate.Geofence{a, b}, Allow: gate.NewAllowIndex(gate.AllowList{})}
	g := New(Config{Store: newTestStore(c), Zones: func() *zones.Snapshot { return snap }, Ledger: &fakeLedger{},
		Now: c.now, Events: s.Conn, Instance: "test"}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { g.recordLoop(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	sweep := func(dt time.Duration) map[string]int {
		t.Helper()
		c.t = c.t.Add(dt)
		g.Sweep(ctx)
		n := map[string]int{}
		for _, e := range only(log.drain(), events.TypeZoneUpsert) {
			n[e.subject]++
		}
		return n
	}
	if n := sweep(time.Second); n["cuas.zone.a"] != 1 || n["cuas.zone.b"] != 1 {
		t.Fatalf("first sweep announced %v, want both zones once", n)
	}
	if n := sweep(time.Second); len(n) != 0 {
		t.Fatalf("unchanged zones announced again at once: %v", n)
	}
	a.RadiusM = 750
	snap = &zones.Snapshot{Geofences: []gate.Geofence{a, b}, Allow: snap.Allow}
	if n := sweep(time.Second); n["cuas.zone.a"] != 1 || len(n) != 1 {
		t.Fatalf("after zone a changed: %v, want zone a only", n)
	}
	if n := sweep(events.ZoneRepeat); n["cuas.zone.a"] != 1 || n["cuas.zone.b"] != 1 {
		t.Fatalf("after events.ZoneRepeat: %v, want both zones again", n)
	}
}
