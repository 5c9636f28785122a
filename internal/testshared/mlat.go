package testshared

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"sort"
	"strconv"
	"testing"
)

// MLATSensor is one row of data/mlat/sensors.csv (the LocaRDS sensors):
// position in degrees and metres above the WGS-84 ellipsoid.
type MLATSensor struct {
	Serial           int
	Lat, Lon, Height float64
}

// MLATRow is one transmission of a data/mlat set: the aircraft's own
// (reference) position and the GPS reception times at its sensors.
type MLATRow struct {
	ID, Aircraft int
	// At is timeAtServer, seconds.
	At float64
	// Lat, Lon in degrees; Baro and Geo the barometric and GNSS
	// altitudes in metres.
	Lat, Lon, Baro, Geo float64
	// Sensors are the serials that heard it, NS their reception times
	// (GPS nanoseconds, one time base).
	Sensors []int
	NS      []int64
	// RSSI is each reception's signal level as the data set gives it
	// (its third measurement field; every reference sensor is a
	// Radarcape, and the values, 0–197, are its Beast signal byte).
	RSSI []int
}

// MLATSensors reads data/mlat/sensors.csv, by serial.
func MLATSensors(tb testing.TB) map[int]MLATSensor {
	tb.Helper()
	out := map[int]MLATSensor{}
	for _, r := range readCSV(tb, Path(tb, "data", "mlat", "sensors.csv")) {
		s := MLATSensor{Lat: atof(tb, r[1]), Lon: atof(tb, r[2]), Height: atof(tb, r[3])}
		s.Serial, _ = strconv.Atoi(r[0])
		out[s.Serial] = s
	}
	return out
}

// MLATSet reads a data/mlat set (set_1.csv … set_4.csv), in time order.
func MLATSet(tb testing.TB, name string) []MLATRow {
	tb.Helper()
	var rows []MLATRow
	for _, r := range readCSV(tb, Path(tb, "data", "mlat", name)) {
		row := MLATRow{At: atof(tb, r[1]), Lat: atof(tb, r[3]), Lon: atof(tb, r[4]), Baro: atof(tb, r[5]), Geo: atof(tb, r[6])}
		row.ID, _ = strconv.Atoi(r[0])
		row.Aircraft, _ = strconv.Atoi(r[2])
		var ms [][3]int64
		if err := json.Unmarshal([]byte(r[8]), &ms); err != nil {
			tb.Fatalf("%s row %d: %v", name, row.ID, err)
		}
		for _, m := range ms {
			row.Sensors = append(row.Sensors, int(m[0]))
			row.NS = append(row.NS, m[1])
			row.RSSI = append(row.RSSI, int(m[2]))
		}
		rows = append(rows, row)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].At < rows[j].At })
	return rows
}

// readCSV reads a CSV file's records after its header.
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
	return recs[1:]
}

func atof(tb testing.TB, s string) float64 {
	tb.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		tb.Fatalf("%q: %v", s, err)
	}
	return v
}
