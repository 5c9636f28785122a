package alert

import (
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
