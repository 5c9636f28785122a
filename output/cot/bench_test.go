package cot

import (
	"encoding/json"
	"testing"

	"github.com/cuasd/cuasd/events"
)

// BenchmarkAppendTrack is the encoder alone: one decoded drone event (with
// its operator point) to CoT XML in a reused buffer. It must not allocate.
func BenchmarkAppendTrack(b *testing.B) {
	ev := droneAlert()
	var e Encoder
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = e.AppendTrack(buf[:0], ev)
		buf, _ = e.AppendOperator(buf, ev)
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkSinkEvent is what a sink does per track message: decode the
// JSON event, encode the track and operator point, and queue copies.
func BenchmarkSinkEvent(b *testing.B) {
	data, _ := json.Marshal(droneAlert())
	s, err := NewUDP("127.0.0.1:9", UDPOptions{}, Options{Queue: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.onTrackData(data)
		if s.q.Len() > 1<<19 {
			for s.q.Len() > 0 {
				<-s.q.C()
			}
		}
	}
}

func TestEncoderDoesNotAllocate(t *testing.T) {
	ev := droneAlert()
	var e Encoder
	buf := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(100, func() {
		buf, _ = e.AppendTrack(buf[:0], ev)
		buf, _ = e.AppendOperator(buf, ev)
		var z events.ZoneEvent = *polygonZone()
		buf, _ = e.AppendZone(buf[:0], &z)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per event", allocs)
	}
}
