package worker

import (
	"os"
	"testing"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/adsb"
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
