package mlatstage

import (
	"bytes"
	"io"
	"log/slog"
	"math"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/fusion/mlat"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/sim"
)

// positions records what the stage tells the sensor registry.
type positions struct {
	mu sync.Mutex
	m  map[string][]Position
}

func (p *positions) on(name string, pos Position) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string][]Position{}
	}
	p.m[name] = append(p.m[name], pos)
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// feedReported offers one transmission's receptions with each receiver
// stating position pos[name] and clock k, and closes its group.
func feedReported(s *Stage, frame []byte, row *refRow, arrival int64, pos map[string]Position, ticks func(i int) uint64, k sensorclock.Kind) {
	for i, name := range row.sensors {
		r := Rx{Sensor: name, Clock: k, Ticks: ticks(i), Arrival: arrival, Len: uint8(len(frame)), Pos: pos[name], HasPos: true}
		copy(r.Msg[:], frame)
		s.add(&r)
	}
	s.grp.Expire(arrival+s.cfg.Hold.Nanoseconds(), s.process)
}

// locateRows feeds the first n rows as DF4 replies with GPS timestamps,
// the receivers stating pos, and returns the fixes' distances from the
// reference positions.
func locateRows(s *Stage, st *fakeStore, rows []refRow, n int, pos map[string]Position) []float64 {
	var errs []float64
	arrival := int64(1_764_288_000e9)
	for i := range rows[:min(n, len(rows))] {
		r := &rows[i]
		addr, icao := icaoOf(r)
		arrival += 2e9
		df4 := sim.ModeSAltitudeReply(addr, r.baro/0.3048)
		k := len(st.fixes[icao])
		feedReported(s, df4[:], r, arrival, pos, func(j int) uint64 { return gpsTicks(r.ns[j]) }, sensorclock.GPS)
		if len(st.fixes[icao]) > k {
			f := st.fixes[icao][k]
			errs = append(errs, gate.Distance(gate.Point{Lat: f.Lat, Lon: f.Lon}, gate.Point{Lat: r.lat, Lon: r.lon}))
		}
	}
	sort.Float64s(errs)
	return errs
}

func truePositions(sensors []Sensor) map[string]Position {
	out := map[string]Position{}
	for _, c := range sensors {
		out[c.Name] = Position{c.Lat, c.Lon, c.AltM}
	}
	return out
}

// TestReportedSensorsLocate (issue 31): no receiver is configured; each
// states its antenna's position with its frames (Cuas-Sensor-Position).
// Each takes part from its first frame, is told to the sensor registry
// once, and the Mode S-only aircraft are located as well as with the
// positions configured. Offer queues a stranger's frame only when it
// states a position.
func TestReportedSensorsLocate(t *testing.T) {
	sensors, rows := loadRef(t, "set_2.csv")
	var told positions
	st := newFakeStore()
	s := New(Config{OnPosition: told.on, Log: quiet}, st, nil)
	pos := truePositions(sensors)
	errs := locateRows(s, st, rows, 400, pos)
	st0 := newFakeStore()
	want := locateRows(New(Config{Sensors: sensors, Log: quiet}, st0, nil), st0, rows, 400, nil)
	t.Logf("%d fixes of 400 rows, median %.0f m (configured: %d, %.0f m)", len(errs), errs[len(errs)/2], len(want), want[len(want)/2])
	if len(want) < 200 || len(errs) != len(want) || math.Abs(errs[len(errs)/2]-want[len(want)/2]) > 1 {
		t.Fatalf("%d fixes of 400 rows from reported positions, median %.0f m; with the positions configured %d, median %.0f m",
			len(errs), errs[len(errs)/2], len(want), want[len(want)/2])
	}
	states := s.Sensors()
	if len(states) == 0 {
		t.Fatal("no sensors")
	}
	for _, ss := range states {
		if ss.PositionSource != SourceReported || ss.Position != pos[ss.Name] || ss.Moves != 0 || ss.Clock != "gps" {
			t.Errorf("%s: %+v, want its reported position, gps, no moves", ss.Name, ss)
		}
		if got := told.m[ss.Name]; len(got) != 1 || got[0] != pos[ss.Name] {
			t.Errorf("%s: told the registry %v, want its position once", ss.Name, got)
		}
	}
	if v := testutil.ToFloat64(s.m.sensors.WithLabelValues(SourceReported)); v != float64(len(states)) {
		t.Errorf("cuasd_mlat_sensors{source=reported} = %v, want %d", v, len(states))
	}
	df4 := sim.ModeSAltitudeReply(0x123456, 1000)
	r := Rx{Sensor: "stranger", Len: 7}
	copy(r.Msg[:], df4[:])
	if s.Offer(&r) {
		t.Error("a frame of a receiver without a position was queued")
	}
	r.Pos, r.HasPos = Position{47, 8, 400}, true
	if !s.Offer(&r) {
		t.Error("a frame of a receiver stating its position was refused")
	}
}

// TestConfiguredPositionWins: every receiver is configured at its true
// position and reports one 3 km away (a receiver's GNSS gone wrong, or a
// lie). The configured position is used, shown as configured, nothing is
// reset or told to the registry, and the aircraft are located as with no
// report at all; the same reports with no configuration would misplace
// them.
func TestConfiguredPositionWins(t *testing.T) {
	sensors, rows := loadRef(t, "set_2.csv")
	wrong := map[string]Position{}
	for n, p := range truePositions(sensors) {
		wrong[n] = Position{p.Lat + 3000.0/111_320, p.Lon, p.AltM}
	}
	var told positions
	st := newFakeStore()
	var logs bytes.Buffer
	s := New(Config{Sensors: sensors, OnPosition: told.on, Log: slog.New(slog.NewTextHandler(&logs, nil))}, st, nil)
	errs := locateRows(s, st, rows, 200, wrong)
	if len(errs) < 150 || errs[len(errs)/2] > 60 {
		t.Fatalf("%d fixes of 200 rows, median %v m: the configured positions were not used", len(errs), errs[len(errs)/2])
	}
	heard := 0
	for _, ss := range s.Sensors() {
		if ss.PositionSource != SourceConfigured || ss.Position == wrong[ss.Name] || ss.Moves != 0 {
			t.Errorf("%s: %+v, want its configured position", ss.Name, ss)
		}
		if ss.Receptions > 0 {
			heard++
		}
	}
	if n := strings.Count(logs.String(), "other than its configured one"); n != heard {
		t.Errorf("the disagreement logged %d times for %d receivers heard, want once each", n, heard)
	}
	if len(told.m) != 0 || testutil.ToFloat64(s.m.moves) != 0 {
		t.Errorf("told the registry %v, %v moves; want nothing", told.m, testutil.ToFloat64(s.m.moves))
	}
	st2 := newFakeStore()
	s2 := New(Config{Log: quiet}, st2, nil)
	if bad := locateRows(s2, st2, rows, 200, wrong); len(bad) > 0 && bad[len(bad)/2] < 1000 {
		t.Errorf("the 3 km-off reports alone located the aircraft within a median %.0f m: the test cannot tell them apart", bad[len(bad)/2])
	}
}

// TestReportedMoveResetsSync: free-running receivers stating their
// positions sync from ADS-B aircraft; then one reports a position 5 m
// off (a GNSS fix's wander: nothing happens) and then 150 m off (moved:
// its pair syncs are dropped, counted once, told to the registry, the
// other receivers' syncs kept). A report of another clock resets it too.
func TestReportedMoveResetsSync(t *testing.T) {
	sensors, rows := loadRef(t, "set_2.csv")
	var told positions
	st := newFakeStore()
	var logs bytes.Buffer
	s := New(Config{OnPosition: told.on, Log: slog.New(slog.NewTextHandler(&logs, nil)), Sync: mlat.SyncConfig{MaxAgeNS: 600e9, HorizonNS: 3600e9}}, st, nil)
	pos := truePositions(sensors)
	arrival := int64(1_764_288_000e9)
	for i := range rows[:min(600, len(rows))] {
		r := &rows[i]
		addr, icao := icaoOf(r)
		st.claims[icao] = [2]float64{r.lat, r.lon}
		arrival += 2e9
		df17 := sim.ADSBPosition(addr, r.lat, r.lon, r.baro/0.3048, i%2 == 1)
		feedReported(s, df17[:], r, arrival, pos, func(j int) uint64 { return uint64(float64(r.ns[j]+int64(j)*3e12) * 12e6 / 1e9) }, sensorclock.MHz12)
	}
	pairs := func() map[string]int {
		out := map[string]int{}
		for _, ss := range s.Sensors() {
			out[ss.Name] = ss.Pairs
		}
		return out
	}
	before := pairs()
	name := ""
	for n, p := range before {
		if p >= 2 && (name == "" || n < name) {
			name = n
		}
	}
	if name == "" {
		t.Fatalf("no receiver synced with two others: %v", before)
	}
	id := s.ids[name]
	step := func(dm float64, k sensorclock.Kind) {
		p := pos[name]
		r := Rx{Sensor: name, Clock: k, Ticks: 1, Arrival: arrival, Len: 7, Pos: Position{p.Lat + dm/111_320, p.Lon, p.AltM}, HasPos: true}
		df4 := sim.ModeSAltitudeReply(0x123456, 1000)
		copy(r.Msg[:], df4[:])
		s.add(&r)
	}
	step(5, sensorclock.MHz12)
	if got := pairs(); got[name] != before[name] || s.moves[id] != 0 || len(told.m[name]) != 1 {
		t.Fatalf("a 5 m wander: pairs %d → %d, %d moves, told %v", before[name], got[name], s.moves[id], told.m[name])
	}
	step(150, sensorclock.MHz12)
	after := pairs()
	if after[name] != 0 || s.moves[id] != 1 || testutil.ToFloat64(s.m.moves) != 1 || len(told.m[name]) != 2 {
		t.Errorf("a 150 m move: pairs %d → %d, %d moves (metric %v), told %v", before[name], after[name], s.moves[id], testutil.ToFloat64(s.m.moves), told.m[name])
	}
	kept := 0
	for n, p := range after {
		if n != name && p > 0 {
			kept++
		}
	}
	if kept < 2 {
		t.Errorf("the other receivers' syncs were dropped too: %v → %v", before, after)
	}
	step(150, sensorclock.GPS)
	if s.moves[id] != 2 || s.nw.Sensors[id].Clock != mlat.ClockGPS {
		t.Errorf("a clock change: %d moves, clock %s", s.moves[id], s.nw.Sensors[id].Clock)
	}
	if n := strings.Count(logs.String(), "position or clock changed"); n != 1 {
		t.Errorf("two moves within a minute logged %d times, want once:\n%s", n, logs.String())
	}
}

// TestReportedSensorLimit: beyond MaxSensors a stranger's frames are
// refused and counted, the known receivers unaffected; the registry is
// told of each receiver heard, once per new reception.
func TestReportedSensorLimit(t *testing.T) {
	heard := map[string]uint64{}
	s := New(Config{Sensors: []Sensor{{Name: "a", Lat: 47, Lon: 8}}, MaxSensors: 2, Log: quiet,
		OnHeard: func(n string, _ time.Time, k uint64) { heard[n] += k }}, newFakeStore(), nil)
	df4 := sim.ModeSAltitudeReply(0x123456, 1000)
	for i, name := range []string{"b", "c", "a"} {
		r := Rx{Sensor: name, Len: 7, Pos: Position{47, 8 + float64(i)/10, 400}, HasPos: true, Arrival: 1}
		copy(r.Msg[:], df4[:])
		s.add(&r)
	}
	var names []string
	for _, ss := range s.Sensors() {
		names = append(names, ss.Name+":"+ss.PositionSource)
	}
	if len(names) != 2 || names[0] != "a:configured" || names[1] != "b:reported" {
		t.Errorf("sensors %v, want a (configured) and b (reported)", names)
	}
	if v := testutil.ToFloat64(s.m.refused.WithLabelValues("sensor_limit")); v != 1 {
		t.Errorf("refused for the limit: %v, want 1", v)
	}
	s.tellHeard()
	s.tellHeard()
	if len(heard) != 2 || heard["a"] != 1 || heard["b"] != 1 {
		t.Errorf("told the registry %v, want a and b heard once each", heard)
	}
}

// BenchmarkStageTransmissionReported is BenchmarkStageTransmission with
// every receiver stating its position with each reception and configured
// nowhere (Cuas-Sensor-Position): the cost of checking the statements.
func BenchmarkStageTransmissionReported(b *testing.B) {
	sensors, rows, frames := benchRows(b)
	pos := truePositions(sensors)
	s := New(Config{Log: quiet}, newFakeStore(), nil)
	arrival := int64(1_764_288_000e9)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % len(rows)
		arrival += 2e9
		r := &rows[k]
		feedReported(s, frames[k][:], r, arrival, pos, func(j int) uint64 { return gpsTicks(r.ns[j]) }, sensorclock.GPS)
	}
}
