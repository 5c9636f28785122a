package mlat

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"sort"
	"strconv"
	"testing"

	"github.com/cuasd/cuasd/internal/testshared"
)

// refSensor is one row of the reference data's sensors.csv.
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
}

// refSets are the reference sets the tests and benchmarks read in place.
var refSets = []string{"set_1.csv", "set_2.csv", "set_3.csv", "set_4.csv"}

func loadSensors(tb testing.TB) map[int]refSensor {
	tb.Helper()
	recs := readCSV(tb, testshared.Path(tb, "data", "mlat", "sensors.csv"))
	out := make(map[int]refSensor, len(recs))
	for _, r := range recs[1:] {
		id, _ := strconv.Atoi(r[0])
		s := refSensor{lat: atof(tb, r[1]), lon: atof(tb, r[2]), h: atof(tb, r[3])}
		s.pos = ECEF(s.lat, s.lon, s.h)
		out[id] = s
	}
	return out
}

func loadSet(tb testing.TB, name string) []refRow {
	tb.Helper()
	recs := readCSV(tb, testshared.Path(tb, "data", "mlat", name))
	rows := make([]refRow, 0, len(recs))
	for _, r := range recs[1:] {
		var row refRow
		row.id, _ = strconv.Atoi(r[0])
		row.at = atof(tb, r[1])
		row.aircraft, _ = strconv.Atoi(r[2])
		row.lat, row.lon, row.baro, row.geo = atof(tb, r[3]), atof(tb, r[4]), atof(tb, r[5]), atof(tb, r[6])
		var ms [][3]int64
		if err := json.Unmarshal([]byte(r[8]), &ms); err != nil {
			tb.Fatalf("%s row %d: %v", name, row.id, err)
		}
		for _, m := range ms {
			row.sensors = append(row.sensors, int(m[0]))
			row.ns = append(row.ns, m[1])
		}
		rows = append(rows, row)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].at < rows[j].at })
	return rows
}

func readCSV(tb testing.TB, path string) [][]string {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) < 2 {
		tb.Fatalf("%s: %v (%d records)", path, err, len(recs))
	}
	return recs
}

func atof(tb testing.TB, s string) float64 {
	tb.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		tb.Fatalf("%q: %v", s, err)
	}
	return v
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
