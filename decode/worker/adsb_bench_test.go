package worker

import (
	"os"
	"testing"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/internal/testshared"
)

// BenchmarkADSBDecodeCapture turns every Mode S frame of the real Beast
// capture into observations, as a decoder worker does: the decode plus the
// conversion of the claims (the key string is the one allocation of an
// observation).
func BenchmarkADSBDecodeCapture(b *testing.B) {
	raw, err := os.ReadFile(testshared.Path(b, "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin"))
	if err != nil {
		b.Fatal(err)
	}
	var frames [][]byte
	for f, err := range adsb.BeastFrames(raw) {
		if err == nil && f.Type != adsb.BeastModeAC {
			frames = append(frames, append([]byte(nil), f.Bytes()...))
		}
	}
	var d ADSB
	out := make([]decode.Observation, 0, 1)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		out, _ = d.Decode(frames[i], Meta{}, out[:0])
		i++
		if i == len(frames) {
			i = 0
		}
	}
}

// BenchmarkDecodeBeastBatch decodes the real capture as the Feed does: in
// Beast-framed batches of 512 records with their 12 MHz timestamps, each
// frame's time mapped by its receiver's clock model and checked for an
// exact duplicate (issue 30). ns/op is per frame.
func BenchmarkDecodeBeastBatch(b *testing.B) {
	raw, err := os.ReadFile(testshared.Path(b, "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin"))
	if err != nil {
		b.Fatal(err)
	}
	var batches [][]byte
	var cur []byte
	n, frames := 0, 0
	for f, err := range adsb.BeastFrames(raw) {
		if err != nil || f.Type == adsb.BeastModeAC {
			continue
		}
		cur = bus.AppendBeast(cur, f.Type, f.Timestamp, f.Signal, f.Bytes())
		n++
		frames++
		if n == 512 {
			batches, cur, n = append(batches, cur), nil, 0
		}
	}
	d := &msgDecoder{dec: &ADSB{}}
	m := NewMetrics(nil)
	recv := int64(1_700_000_000_000_000_000)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%len(batches) == 0 {
			// A new pass: a new receiver, so that the second pass's frames
			// are not taken for duplicates of the first's.
			d.clocks = sensorclock.Clocks{}
			recv += 100e9
		}
		d.decodeMessage(bus.FramingBeast, batches[i%len(batches)], Meta{Sensor: "rx1", RecvUnixNano: recv}, m)
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/512, "ns/frame")
}

// TestDecodeFrameAllocatesNothingPerFrame: a batch of 512 frames the
// decoder has seen (exact duplicates, dropped before decoding) costs a
// few allocations per message, not one per frame, with a Timed hook set
// (multilateration's, which takes the message's Meta by pointer: handed
// a pointer to the frame's own copy, every frame moved a Meta to the
// heap).
func TestDecodeFrameAllocatesNothingPerFrame(t *testing.T) {
	raw, err := os.ReadFile(testshared.Path(t, "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin"))
	if err != nil {
		t.Fatal(err)
	}
	var batch []byte
	n := 0
	for f, err := range adsb.BeastFrames(raw) {
		if err != nil || f.Type == adsb.BeastModeAC {
			continue
		}
		batch = bus.AppendBeast(batch, f.Type, f.Timestamp, f.Signal, f.Bytes())
		if n++; n == 512 {
			break
		}
	}
	timed := 0
	d := &msgDecoder{dec: &ADSB{}, timed: func(_ *Meta, f []TimedFrame) { timed += len(f) }}
	m := NewMetrics(nil)
	meta := Meta{Sensor: "rx1", RecvUnixNano: 1_700_000_000_000_000_000}
	d.decodeMessage(bus.FramingBeast, batch, meta, m)
	if timed == 0 || len(d.obs) == 0 {
		t.Fatalf("the first pass decoded %d observations and timed %d frames: the test needs both", len(d.obs), timed)
	}
	allocs := testing.AllocsPerRun(20, func() { d.decodeMessage(bus.FramingBeast, batch, meta, m) })
	if len(d.obs) != 0 {
		t.Fatalf("the second pass decoded %d observations: its frames should all be duplicates", len(d.obs))
	}
	if allocs > 16 {
		t.Errorf("a message of %d duplicate frames allocated %.0f times: something allocates per frame", n, allocs)
	}
}
