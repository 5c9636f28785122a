package alert

import (
	"bytes"
	"fmt"
	"github.com/cuasd/cuasd/events"
	"testing"
	"time"
)

// BenchmarkEngineThreat is the rule engine's cost per recorded decision
// that opens or resolves an alert (two rules, alternating).
func BenchmarkEngineThreat(b *testing.B) {
	c, err := Parse("b.yaml", []byte("sinks: [{name: h, mqtt: true}]\nrules:\n  - {name: a, zones: [z], sinks: [h], cooldown: 1ns}\n  - {name: b, sinks: [h], min_decision: intercept-recommended}\n"))
	if err != nil {
		b.Fatal(err)
	}
	e := NewEngine(c, nil)
	evs := make([]*eventPair, 64)
	for i := range evs {
		id := fmt.Sprintf("rid:%d", i)
		evs[i] = &eventPair{threat(0, id, "z", "alert", true, 1), threat(0, id, "z", "monitor", false, 2)}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p := evs[i%len(evs)]
		p.open.Time = t0.Add(time.Duration(i) * time.Millisecond)
		p.close.Time = p.open.Time
		if len(e.Threat(p.open)) != 1 || len(e.Threat(p.close)) != 1 {
			b.Fatal("no alert")
		}
	}
}

type eventPair struct{ open, close *events.ThreatEvent }

// BenchmarkTrackFilter is the cost, per track update, of skipping the
// updates that are not a loss (the subscription callback's hot path).
func BenchmarkTrackFilter(b *testing.B) {
	upd := []byte(`{"v":1,"type":"track.update","time":"2026-11-26T06:00:00Z","instance":"a","track":{"track_id":"rid:1581F5FJD2","protocols":["remoteid"],"lat":52.3,"lon":4.76,"sensors":["s"],"first_seen":"2026-11-26T06:00:00Z","last_seen":"2026-11-26T06:00:00Z","observations":12}}`)
	b.SetBytes(int64(len(upd)))
	b.ReportAllocs()
	for b.Loop() {
		if bytes.Contains(upd, LostMarker) {
			b.Fatal("an update taken for a loss")
		}
	}
}
