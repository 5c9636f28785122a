package fusion

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/decode/worker"
	"github.com/cuasd/cuasd/internal/testshared"
)

// BenchmarkStoreApplyCapture measures the store on real ADS-B traffic:
// the capture's observations (../shared/data/adsb, 11 aircraft), applied
// in a loop with their times moved on, as a long reception would. Issue
// 21's state (address type, air/ground, NIC, SIL...) is on this path.
func BenchmarkStoreApplyCapture(b *testing.B) { benchApplyCapture(b, 0, 1) }

// BenchmarkStoreApplyCaptureClocked is BenchmarkStoreApplyCapture with
// each frame timed on its receiver's clock as the Beast input times it
// (the rules for several receivers, heard.go and links.go, run on such
// frames).
func BenchmarkStoreApplyCaptureClocked(b *testing.B) { benchApplyCapture(b, 1, 1) }

// BenchmarkStoreApplyCaptureClocked2200 is BenchmarkStoreApplyCaptureClocked
// with each of the capture's 11 aircraft heard as 200 (2,200 tracks, as
// the pipeline benchmark's 2,209): the store's per-aircraft state no
// longer stays in the CPU's caches.
func BenchmarkStoreApplyCaptureClocked2200(b *testing.B) { benchApplyCapture(b, 1, 200) }

// BenchmarkStoreApplyCaptureTwoReceivers2200 is
// BenchmarkStoreApplyCaptureClocked2200 heard by two receivers, each
// frame twice, on two clocks, the second copy 20 ms after the first: half
// the observations are copies (heardAgain), and every new report goes to
// the table that relates the clocks (links.go).
func BenchmarkStoreApplyCaptureTwoReceivers2200(b *testing.B) { benchApplyCapture(b, 2, 200) }

// benchApplyCapture applies the capture heard by receivers receivers (0:
// one, its frames not timed on a clock), each aircraft heard as copies.
func benchApplyCapture(b *testing.B, receivers, copies int) {
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
			if receivers > 0 {
				obs[i].SensorNs, obs[i].SensorClock, obs[i].TimeSource = obs[i].TimeUnixNano-t0, 1, sensorclock.FromReceiver
			}
		}
	}
	obs = heardBy(obs, receivers, copies)
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
				obs[j].SensorNs += span
			}
		}
		s.Apply(o)
	}
	b.StopTimer()
	b.ReportMetric(float64(s.Len()), "tracks")
}

// heardBy is obs with each aircraft heard as copies (its key numbered),
// each observation by receivers receivers on clocks 1, 2, ... (each
// 1,000 s ahead of the one before, its copy 20 ms later).
func heardBy(obs []decode.Observation, receivers, copies int) []decode.Observation {
	many := make([]decode.Observation, 0, len(obs)*copies*max(receivers, 1))
	for _, o := range obs {
		for k := range copies {
			c := o
			if c.Key != "" && copies > 1 {
				c.Key += strconv.Itoa(k)
			}
			many = append(many, c)
			for r := 1; r < receivers; r++ {
				c.Sensor, c.SensorClock = "rx"+strconv.Itoa(r), uint32(r+1)
				c.SensorNs, c.TimeUnixNano = c.SensorNs+1000e9, c.TimeUnixNano+20e6
				many = append(many, c)
			}
		}
	}
	return many
}
