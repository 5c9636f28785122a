package worker

import (
	"os"
	"testing"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/internal/testshared"
)

// BenchmarkADSBWorkerCapture measures the worker's frame-to-observation
// path (decode, then the observation's fields, issue 21's block among
// them) over the real capture's Mode S frames.
func BenchmarkADSBWorkerCapture(b *testing.B) {
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
	d := &ADSB{}
	out := make([]decode.Observation, 0, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, _ = d.Decode(frames[i%len(frames)], Meta{}, out[:0])
	}
}
