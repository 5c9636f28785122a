package fusion

import (
	"os"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/worker"
	"github.com/cuasd/cuasd/internal/testshared"
)

// BenchmarkStoreApplyCapture measures the store on real ADS-B traffic:
// the capture's observations (../shared/data/adsb, 11 aircraft), applied
// in a loop with their times moved on, as a long reception would. Issue
// 21's state (address type, air/ground, NIC, SIL...) is on this path.
func BenchmarkStoreApplyCapture(b *testing.B) {
	raw, err := os.ReadFile(testshared.Path(b, "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin"))
	if err != nil {
		b.Fatal(err)
	}
	var obs []decode.Observation
	d := &worker.ADSB{}
	t0 := time.Unix(1_522_782_148, 0).UnixNano()
	for f, err := range adsb.BeastFrames(raw) {
		if err != nil || f.Type == adsb.BeastModeAC {
			continue
		}
		n := len(obs)
		obs, _ = d.Decode(f.Bytes(), worker.Meta{}, obs)
		for i := n; i < len(obs); i++ {
			obs[i].Protocol, obs[i].Sensor, obs[i].TimeUnixNano = decode.ADSB, "capture", t0+int64(f.Micros()*1e3)
		}
	}
	span := obs[len(obs)-1].TimeUnixNano - obs[0].TimeUnixNano + int64(time.Second)
	c := &clock{time.Unix(1_522_782_148, 0)}
	s := NewStore(Config{TTL: time.Hour, Now: c.now})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o := &obs[i%len(obs)]
		if i > 0 && i%len(obs) == 0 {
			for j := range obs {
				obs[j].TimeUnixNano += span
			}
		}
		s.Apply(o)
	}
}
