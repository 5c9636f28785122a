package mlat

import (
	"sort"
	"testing"

	"github.com/cuasd/cuasd/internal/testshared"
)

// refSensor is a reference sensor with its ECEF position.
type refSensor struct {
	lat, lon, h float64
	pos         Vec
}

// refRow is one transmission of a reference set: the aircraft's own
// position and its five receptions (GPS nanoseconds).
type refRow struct {
	id, aircraft        int
	at                  float64 // timeAtServer, s
	lat, lon, baro, geo float64
	sensors             []int
	ns                  []int64
	rssi                []int
}

// refSets are the reference sets the tests and benchmarks read in place.
var refSets = []string{"set_1.csv", "set_2.csv", "set_3.csv", "set_4.csv"}

func loadSensors(tb testing.TB) map[int]refSensor {
	tb.Helper()
	out := map[int]refSensor{}
	for id, s := range testshared.MLATSensors(tb) {
		out[id] = refSensor{lat: s.Lat, lon: s.Lon, h: s.Height, pos: ECEF(s.Lat, s.Lon, s.Height)}
	}
	return out
}

func loadSet(tb testing.TB, name string) []refRow {
	tb.Helper()
	var rows []refRow
	for _, r := range testshared.MLATSet(tb, name) {
		rows = append(rows, refRow{id: r.ID, aircraft: r.Aircraft, at: r.At, lat: r.Lat, lon: r.Lon, baro: r.Baro, geo: r.Geo,
			sensors: r.Sensors, ns: r.NS, rssi: r.RSSI})
	}
	return rows
}

// truth is the row's reference position in ECEF (its GNSS height).
func (r *refRow) truth() Vec { return ECEF(r.lat, r.lon, r.geo) }

// percentile returns the p-quantile (0..1) of v (sorted in place).
func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	i := int(p * float64(len(v)-1))
	return v[i]
}
