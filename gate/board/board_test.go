package board

import (
	"context"
	"encoding/json"
	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/fusion"
	"sync"
	"testing"
	"time"

	"github.com/cuasd/cuasd/fusion/zones"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/ledger"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTestStore(c *clock) *fusion.Store {
	return fusion.NewStore(fusion.Config{TTL: time.Minute, Now: c.now})
}

func ridObs(uas string, lat, lon float64, recv int64) decode.Observation {
	return decode.Observation{Protocol: decode.RemoteID, Key: uas, UASID: uas, TimeUnixNano: recv,
		HasPosition: true, Lat: lat, Lon: lon, PositionMethod: "remoteid", Sensor: "s1"}
}

type fakeLedger struct {
	mu      sync.Mutex
	records []map[string]any
}

func (f *fakeLedger) Append(_ context.Context, subject, predicateType string, record json.RawMessage) (ledger.Receipt, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var m map[string]any
	if err := json.Unmarshal(record, &m); err != nil {
		return ledger.Receipt{}, err
	}
	m["_subject"], m["_type"] = subject, predicateType
	f.records = append(f.records, m)
	return ledger.Receipt{Index: uint64(len(f.records) - 1)}, nil
}

func (f *fakeLedger) reasons() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.records {
		out = append(out, r["reason"].(string))
	}
	return out
}

// TestBoardRecordsBreachStartAndEnd drives one drone into a zone and out
// again, and checks the board, the swarm grouping and the receipts.
func TestBoardRecordsBreachStartAndEnd(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	zone := gate.Geofence{ID: "z1", Name: "Zone", Class: gate.ClassPrison, Center: []float64{52, 4}, RadiusM: 500}
	snap := &zones.Snapshot{Geofences: []gate.Geofence{zone}, Allow: gate.NewAllowIndex(gate.AllowList{})}
	led := &fakeLedger{}
	b := New(Config{Store: s, Zones: func() *zones.Snapshot { return snap }, Ledger: led, Now: c.now}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { b.recordLoop(ctx); close(done) }()

	step := func(lat float64) {
		c.t = c.t.Add(10 * time.Second) // slow enough to pass the plausibility check
		o := ridObs("D1", lat, 4, c.t.UnixNano())
		s.Apply(&o)
		b.Sweep(ctx)
	}
	step(52.02) // 2.2 km north: outside
	e := b.Snapshot().Entries
	if len(e) != 1 || e[0].Result.Breach || e[0].Geofence.ID != "z1" {
		t.Fatalf("outside: %+v", e)
	}
	step(52.001) // 111 m from the centre: inside
	if e := b.Snapshot().Entries; !e[0].Result.Breach {
		t.Fatal("no breach inside the zone")
	}
	step(52.0011)
	step(52.02)
	// Issue 33: the breach is held for the policy's min_hold_s (30 s)
	// after the track left; the raw breach says it left.
	if e := b.Snapshot().Entries; !e[0].Result.Breach || e[0].RawBreach {
		t.Fatalf("10 s after leaving: breach %v raw %v, want held true, raw false", e[0].Result.Breach, e[0].RawBreach)
	}
	if got := led.reasons(); len(got) > 0 && got[len(got)-1] == "breach_ended" {
		t.Fatalf("breach ended 10 s after leaving: %v", got)
	}
	step(52.02)
	step(52.02) // 30 s after the last result inside
	cancel()
	<-done
	got := led.reasons()
	want := []string{"breach_started", "breach_ended"}
	if len(got) < 2 || got[len(got)-2] != want[0] || got[len(got)-1] != want[1] {
		t.Fatalf("receipts %v, want ... %v", got, want)
	}
	r := led.records[len(led.records)-2]
	if r["_type"] != ledger.PredicateTypeGateDecision || r["_subject"] != "track:rid:D1" || r["human_decision_required"] != true {
		t.Fatalf("record %v", r)
	}
	if axes, ok := r["axes"].([]any); !ok || len(axes) != gate.NumAxes || r["kind"] != gate.RecordContinuous || r["reason"] != "breach_started" {
		t.Fatalf("record lacks the 13 axes, its kind or its reason: %v", r)
	}
	// Issue 33: the record keeps the evaluation's own decision and breach
	// beside the held ones, when the held decision began, and the class.
	// The breach ended while held: its record says breach false, raw false.
	if r["raw_decision"] == nil || r["raw_breach"] != true || r["held_since"] == nil || r["class"] != "drone" {
		t.Fatalf("breach record lacks raw_decision, raw_breach, held_since or class: %v", r)
	}
	if end := led.records[len(led.records)-1]; end["breach"] != false || end["raw_breach"] != false {
		t.Fatalf("breach_ended record: breach %v raw %v", end["breach"], end["raw_breach"])
	}
	// swarm_size is a number, as in a requested evaluation's record (it was
	// once a string here).
	if tr, ok := r["track"].(map[string]any); !ok || tr["id"] != "rid:D1" || func() bool { _, n := tr["swarm_size"].(float64); return !n }() {
		t.Fatalf("record track: %v", r["track"])
	}
	// Expiry removes the entry.
	c.t = c.t.Add(2 * time.Minute)
	s.Expire()
	b.Sweep(context.Background())
	if n := len(b.Snapshot().Entries); n != 0 {
		t.Fatalf("%d entries after expiry", n)
	}
}

// TestBoardRecordsOwnershipAcquired: a track whose partition another
// instance owned is in breach when this instance takes the partition over;
// the new owner records the state it found once (the change happened while
// it did not record), and a track it finds at "monitor" needs no receipt.
func TestBoardRecordsOwnershipAcquired(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	zone := gate.Geofence{ID: "z1", Name: "Zone", Class: gate.ClassPrison, Center: []float64{52, 4}, RadiusM: 500}
	snap := &zones.Snapshot{Geofences: []gate.Geofence{zone}, Allow: gate.NewAllowIndex(gate.AllowList{})}
	led := &fakeLedger{}
	var mu sync.Mutex
	owned := false
	owns := func(string) bool { mu.Lock(); defer mu.Unlock(); return owned }
	setOwned := func(v bool) { mu.Lock(); owned = v; mu.Unlock() }
	b := New(Config{Store: s, Zones: func() *zones.Snapshot { return snap }, Ledger: led, Owns: owns, Now: c.now}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { b.recordLoop(ctx); close(done) }()
	step := func(id string, lat float64) {
		c.t = c.t.Add(10 * time.Second)
		o := ridObs(id, lat, 4, c.t.UnixNano())
		s.Apply(&o)
		o2 := ridObs("FAR", 52.5, 4, c.t.UnixNano()) // 55 km away: monitor
		s.Apply(&o2)
		b.Sweep(ctx)
	}
	step("D1", 52.02)  // outside, not owned
	step("D1", 52.001) // breach starts while another instance owns it
	step("D1", 52.0011)
	setOwned(true)
	step("D1", 52.0012) // taken over, still in breach
	step("D1", 52.0011)
	setOwned(false)
	step("D1", 52.0011)
	setOwned(true)
	step("D1", 52.0012) // taken over again
	cancel()
	<-done
	got := led.reasons()
	want := []string{"ownership_acquired", "ownership_acquired"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("receipts %v, want %v", got, want)
	}
	for _, r := range led.records {
		if r["_subject"] != "track:rid:D1" {
			t.Errorf("receipt for %v: a track found at monitor needs none", r["_subject"])
		}
		if r["breach"] != true {
			t.Errorf("hand-over receipt does not record the breach found: %v", r["breach"])
		}
	}
}

func TestBoardSwarm(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	for i, d := range []float64{0, 0.0003, 0.0006, 0.05} { // 33 m apart, and one far away
		o := ridObs(string(rune('A'+i)), 52+d, 4, c.t.UnixNano())
		s.Apply(&o)
	}
	b := New(Config{Store: s, Now: c.now}, nil)
	b.Sweep(context.Background())
	swarms := map[string]int{}
	for _, e := range b.Snapshot().Entries {
		if e.SwarmID != "" {
			swarms[e.SwarmID]++
		}
	}
	if len(swarms) != 1 {
		t.Fatalf("swarms %v", swarms)
	}
	for _, n := range swarms {
		if n != 3 {
			t.Fatalf("swarm of %d, want 3", n)
		}
	}
}

// TestBoardWithoutZonesNeverRecommends: with nothing to protect, no track
// is scored against an invented zone.
func TestBoardWithoutZonesNeverRecommends(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	o := ridObs("ADV", 52, 4, c.t.UnixNano())
	s.Apply(&o)
	led := &fakeLedger{}
	b := New(Config{Store: s, Ledger: led, Now: c.now, Classify: func(*fusion.Track) gate.Side { return gate.SideAdversary }}, nil)
	b.Sweep(context.Background())
	e := b.Snapshot().Entries
	if len(e) != 1 || e[0].HasGeofence || e[0].Result.Decision != gate.Monitor || e[0].Result.Breach || e[0].Result.PredictedBreach {
		t.Fatalf("entry %+v", e)
	}
	if len(led.reasons()) != 0 {
		t.Fatal("a receipt was recorded without a zone")
	}
}

// TestCandidateZones: the prefilter keeps every zone that can matter and
// always leaves at least the nearest one.
func TestCandidateZones(t *testing.T) {
	zs := []gate.Geofence{
		{ID: "london", Center: []float64{51.5, -0.12}, RadiusM: 1000},
		{ID: "paris", Center: []float64{48.86, 2.35}, RadiusM: 1000},
		{ID: "fiji", Center: []float64{-17.7, 179.99}, RadiusM: 5000},
	}
	b := zoneBoxes(zs)
	ids := func(lat, lon float64) (out []string) {
		for _, i := range candidateZones(b, zs, lat, lon) {
			out = append(out, zs[i].ID)
		}
		return
	}
	if got := ids(51.51, -0.1); len(got) != 1 || got[0] != "london" {
		t.Errorf("near London: %v", got)
	}
	if got := ids(50.2, 1.0); len(got) != 1 {
		t.Errorf("between the two, far from both: %v (want just the nearest)", got)
	}
	if got := ids(-17.7, -179.95); len(got) != 1 || got[0] != "fiji" {
		t.Errorf("across the antimeridian from Fiji: %v", got)
	}
}
