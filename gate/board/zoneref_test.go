package board

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cuasd/cuasd/fusion/zones"
	"github.com/cuasd/cuasd/gate"
)

// TestRecordNamesZoneByDigest: a decision record used to embed the whole
// geofence, so a 9,999-position polygon made every record near it larger
// than the ledger's 64 KiB and no decision near it could be recorded
// (issue 23, item 4). The record now names the zone by id and digest.
func TestRecordNamesZoneByDigest(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	ring := make([][]float64, 0, 10_000)
	for i := range 9999 {
		p := gate.Destination(gate.Point{Lat: 52, Lon: 4}, 1000, float64(i)*360/9999)
		ring = append(ring, []float64{p.Lon, p.Lat})
	}
	ring = append(ring, ring[0])
	zone := gate.Geofence{ID: "big", Name: "Big", Class: gate.ClassPrison, Polygon: &gate.Polygon{Type: "Polygon", Coordinates: [][][]float64{ring}}}
	if err := zone.Validate(); err != nil {
		t.Fatal(err)
	}
	snap := &zones.Snapshot{Geofences: []gate.Geofence{zone}, Allow: gate.NewAllowIndex(gate.AllowList{})}
	led := &fakeLedger{}
	b := New(Config{Store: s, Zones: func() *zones.Snapshot { return snap }, Ledger: led, Now: c.now}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { b.recordLoop(ctx); close(done) }()
	o := ridObs("D1", 52.0001, 4, c.t.UnixNano())
	s.Apply(&o)
	b.Sweep(ctx)
	cancel()
	<-done
	if len(led.records) == 0 {
		t.Fatal("no record for a breach")
	}
	r := led.records[0]
	raw, _ := json.Marshal(r)
	g, _ := r["geofence"].(map[string]any)
	if len(raw) > 16<<10 || g["id"] != "big" || g["sha256"] != zone.Digest() || g["polygon"] != nil {
		t.Errorf("record of %d bytes names the zone as %.200v; want id and sha256 %s only", len(raw), g, zone.Digest())
	}
}
