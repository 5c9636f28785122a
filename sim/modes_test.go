package sim

import (
	"testing"

	"github.com/cuasd/cuasd/decode/adsb"
)

// TestModeSAltitudeReplyDecodes: the real decoder reads the reply's
// address from its parity and its altitude.
func TestModeSAltitudeReplyDecodes(t *testing.T) {
	for _, alt := range []float64{-1000, 0, 2575, 35000, 41250} {
		f := ModeSAltitudeReply(0x3C6586, alt)
		var m adsb.Message
		if err := adsb.Decode(f[:], &m); err != nil {
			t.Fatalf("%v ft: %v", alt, err)
		}
		if m.DF != 4 || m.Address != 0x3C6586 || !m.HasAltitude || float64(m.Altitude) != alt {
			t.Errorf("%v ft: DF %d address %06X altitude %v (%v)", alt, m.DF, m.Address, m.Altitude, m.HasAltitude)
		}
	}
}
