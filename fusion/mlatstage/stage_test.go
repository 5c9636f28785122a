package mlatstage

import (
	"math"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/fusion/mlat"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/internal/testshared"
	"github.com/cuasd/cuasd/sim"
)

// fakeStore records what the stage hands the track store and answers
// Get with each aircraft's reference (claimed) position.
type fakeStore struct {
	mu     sync.Mutex
	fixes  map[string][]fusion.MLATFix
	ver    map[string]fusion.Verification
	claims map[string][2]float64
	// vel is an aircraft's ground speed (m/s) and track (degrees), as
	// its ADS-B velocity messages would have set them.
	vel map[string][2]float64
}

func newFakeStore() *fakeStore {
	return &fakeStore{fixes: map[string][]fusion.MLATFix{}, ver: map[string]fusion.Verification{}, claims: map[string][2]float64{},
		vel: map[string][2]float64{}}
}

func (f *fakeStore) ApplyMLAT(x fusion.MLATFix) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fixes[x.ICAO] = append(f.fixes[x.ICAO], x)
	return true
}

func (f *fakeStore) SetVerification(icao string, v fusion.Verification) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ver[icao] = v
	return true
}

func (f *fakeStore) Get(id string) (fusion.Track, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.claims[id[len("adsb:"):]]
	v, hasVel := f.vel[id[len("adsb:"):]]
	return fusion.Track{HasPosition: ok, Lat: c[0], Lon: c[1], PositionMethod: "cpr_global",
		HasVelocity: hasVel, SpeedMps: v[0], HeadingDeg: v[1]}, ok
}

// refRow is one transmission of a reference set, sensors by name.
type refRow struct {
	aircraft            int
	lat, lon, baro, geo float64
	sensors             []string
	ns                  []int64
}

func loadRef(t testing.TB, set string) ([]Sensor, []refRow) {
	t.Helper()
	var sensors []Sensor
	for id, r := range testshared.MLATSensors(t) {
		if r.Lat != 0 || r.Lon != 0 {
			sensors = append(sensors, Sensor{Name: "s" + strconv.Itoa(id), Lat: r.Lat, Lon: r.Lon, AltM: r.Height, Clock: mlat.ClockGPS})
		}
	}
	sort.Slice(sensors, func(i, j int) bool { return sensors[i].Name < sensors[j].Name })
	var rows []refRow
	for _, r := range testshared.MLATSet(t, set) {
		row := refRow{aircraft: r.Aircraft, lat: r.Lat, lon: r.Lon, baro: r.Baro, geo: r.Geo, ns: r.NS}
		for _, id := range r.Sensors {
			row.sensors = append(row.sensors, "s"+strconv.Itoa(id))
		}
		rows = append(rows, row)
	}
	return sensors, rows
}

// gpsTicks is a Beast GPS timestamp: seconds of the day in the top 18
// bits, nanoseconds in the low 30.
func gpsTicks(ns int64) uint64 {
	return uint64(ns/1e9%86400)<<30 | uint64(ns%1e9)
}

// feed offers one transmission's receptions and closes its group.
func feed(s *Stage, frame []byte, row *refRow, arrival int64) {
	for i, name := range row.sensors {
		r := Rx{Sensor: name, Clock: sensorclock.GPS, Ticks: gpsTicks(row.ns[i]), Arrival: arrival, Len: uint8(len(frame))}
		copy(r.Msg[:], frame)
		s.add(&r)
	}
	s.grp.Expire(arrival+s.cfg.Hold.Nanoseconds(), s.process)
}

func icaoOf(row *refRow) (uint32, string) {
	a := 0x400000 + uint32(row.aircraft)
	return a, adsb.AddressString(a)
}

// TestStageLocatesAndVerifiesReferenceSet: every row of a reference set
// as a DF4 altitude reply (Mode S only) and as DF17 position squitters,
// honest and moved 1.5 km, through the stage: the fixes land near the
// reference positions, honest claims are verified and moved ones
// contradicted.
func TestStageLocatesAndVerifiesReferenceSet(t *testing.T) {
	sensors, rows := loadRef(t, "set_2.csv")
	st := newFakeStore()
	s := New(Config{Sensors: sensors}, st, nil)
	var errs []float64
	counts := map[string]int{}
	arrival := int64(1_764_288_000e9)
	for i := range rows {
		r := &rows[i]
		addr, icao := icaoOf(r)
		st.claims[icao] = [2]float64{r.lat, r.lon}
		arrival += 2e9
		df4 := sim.ModeSAltitudeReply(addr, r.baro/0.3048)
		n := len(st.fixes[icao])
		feed(s, df4[:], r, arrival)
		if len(st.fixes[icao]) > n {
			f := st.fixes[icao][n]
			errs = append(errs, gate.Distance(gate.Point{Lat: f.Lat, Lon: f.Lon}, gate.Point{Lat: r.lat, Lon: r.lon}))
		}
		for _, moved := range []float64{0, 1500} {
			lat := r.lat + moved/111_320
			df17 := sim.ADSBPosition(addr, lat, r.lon, r.baro/0.3048, i%2 == 1)
			arrival += 1e6
			feed(s, df17[:], r, arrival)
			counts[strconv.FormatFloat(moved, 'f', 0, 64)+" "+st.ver[icao].Status]++
		}
	}
	sort.Float64s(errs)
	med := errs[len(errs)/2]
	t.Logf("%d fixes of %d rows, median %.0f m; verdicts %v", len(errs), len(rows), med, counts)
	if len(errs) < len(rows)*9/10 || med > 60 {
		t.Errorf("%d fixes of %d rows, median %.0f m: want ≥ 90 %% within a median of 60 m", len(errs), len(rows), med)
	}
	if c, n := counts["1500 contradicted"], len(rows); c < n*98/100 {
		t.Errorf("moved claims contradicted %d of %d", c, n)
	}
	if c, n := counts["0 contradicted"], len(rows); c*200 > n {
		t.Errorf("honest claims contradicted %d of %d, want ≤ 0.5 %%", c, n)
	}
	if counts["0 verified"] < len(rows)*85/100 {
		t.Errorf("honest claims verified %d of %d", counts["0 verified"], len(rows))
	}
	// The DF17 claims calibrated the GPS-timed receivers' delays: every
	// receiver heard in more than a fifth of the rows (three frames a
	// row) has one, tens of nanoseconds.
	for _, ss := range s.Sensors() {
		if ss.Receptions > uint64(len(rows)*3/5) && (!ss.HasDelay || math.Abs(ss.DelayNS) > 150) {
			t.Errorf("sensor %s (%d receptions): delay %.0f ns, established %v", ss.Name, ss.Receptions, ss.DelayNS, ss.HasDelay)
		}
	}
}

// TestOfferShedsWhenFull: a full queue sheds and counts, never blocks;
// frames of unknown sensors and formats multilateration cannot use are
// refused.
func TestOfferShedsWhenFull(t *testing.T) {
	s := New(Config{Sensors: []Sensor{{Name: "a", Lat: 1, Lon: 1}}, QueueLen: 2}, newFakeStore(), nil)
	df4 := sim.ModeSAltitudeReply(0x123456, 1000)
	r := Rx{Sensor: "a", Len: 7}
	copy(r.Msg[:], df4[:])
	got := []bool{s.Offer(&r), s.Offer(&r), s.Offer(&r)}
	if !got[0] || !got[1] || got[2] || s.Queued() != 2 {
		t.Fatalf("offers %v, queued %d: want two taken, the third shed", got, s.Queued())
	}
	r.Sensor = "unknown"
	if s.Offer(&r) {
		t.Error("a frame of a sensor without a position was queued")
	}
	r.Sensor, r.Msg[0] = "a", 24<<3 // Comm-D
	if s.Offer(&r) {
		t.Error("a DF24 frame was queued")
	}
}

// TestPlacedAsOfferJudges: Placed, which the decoder's hook asks once
// per message, answers as Offer judges a reception's sensor, and
// Unplaced counts what the hook leaves out as Offer counts one
// (refused{no_sensor_position}); a format multilateration cannot use is
// refused without a count.
func TestPlacedAsOfferJudges(t *testing.T) {
	s := New(Config{Sensors: []Sensor{{Name: "a", Lat: 1, Lon: 1}}}, newFakeStore(), nil)
	cases := []struct {
		sensor  string
		hasPos  bool
		df      byte
		placed  bool
		offered bool
		counted float64 // refused{no_sensor_position} by Offer
	}{
		{"a", false, 4, true, true, 0},
		{"unknown", false, 4, false, false, 1},
		{"unknown", true, 17, true, true, 0},
		{"a", false, 24, true, false, 0},
		{"unknown", false, 24, false, false, 0},
	}
	for _, c := range cases {
		if got := s.Placed(c.sensor, c.hasPos); got != c.placed {
			t.Errorf("Placed(%q, %v) = %v, want %v", c.sensor, c.hasPos, got, c.placed)
		}
		n0 := testutil.ToFloat64(s.m.noPos)
		r := Rx{Sensor: c.sensor, HasPos: c.hasPos, Len: 7}
		r.Msg[0] = c.df << 3
		if got := s.Offer(&r); got != c.offered {
			t.Errorf("Offer(%q, %v, DF%d) = %v, want %v", c.sensor, c.hasPos, c.df, got, c.offered)
		}
		n1 := testutil.ToFloat64(s.m.noPos)
		s.Unplaced(int(c.counted))
		if n1-n0 != c.counted || testutil.ToFloat64(s.m.noPos)-n1 != c.counted {
			t.Errorf("%q, %v, DF%d: Offer counted %v, Unplaced(%v) %v", c.sensor, c.hasPos, c.df, n1-n0, c.counted, testutil.ToFloat64(s.m.noPos)-n1)
		}
	}
}

// BenchmarkStageTransmission puts one reference transmission (a DF4 reply
// heard by five GPS-timed receivers) through the stage's grouping,
// decoding, solving and filtering, one per op: the stage's CPU per solved
// transmission, without the queue.
func BenchmarkStageTransmission(b *testing.B) {
	sensors, rows, frames := benchRows(b)
	st := newFakeStore()
	s := New(Config{Sensors: sensors}, st, nil)
	arrival := int64(1_764_288_000e9)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % len(rows)
		arrival += 2e9
		feed(s, frames[k][:], &rows[k], arrival)
	}
	b.StopTimer()
	n := 0
	for _, f := range st.fixes {
		n += len(f)
	}
	b.ReportMetric(float64(n)/float64(b.N), "fixes/op")
}

// benchRows are set 1's sensors, rows and each row's DF4 reply.
func benchRows(b *testing.B) ([]Sensor, []refRow, [][7]byte) {
	sensors, rows := loadRef(b, "set_1.csv")
	frames := make([][7]byte, len(rows))
	for i := range rows {
		addr, _ := icaoOf(&rows[i])
		frames[i] = sim.ModeSAltitudeReply(addr, rows[i].baro/0.3048)
	}
	return sensors, rows, frames
}

// TestStageSyncsFreeRunningClocks: the same reference set with every
// receiver a free-running 12 MHz counter (random offset and ±50 ppm drift,
// Beast ticks); the even aircraft send DF17 positions, whose claims sync
// the clocks, the odd ones only DF4 replies, which the stage locates with
// the synced clocks. Before any sync a DF4 reply gives no position.
func TestStageSyncsFreeRunningClocks(t *testing.T) {
	sensors, rows := loadRef(t, "set_2.csv")
	for i := range sensors {
		sensors[i].Clock = mlat.Clock12MHz
	}
	st := newFakeStore()
	// The set samples the network's traffic about once every 10 s; a live
	// network syncs from many positions a second (see fusion/mlat's
	// TestReferenceAccuracy12MHz).
	s := New(Config{Sensors: sensors, Sync: mlat.SyncConfig{MaxAgeNS: 600e9, HorizonNS: 3600e9}}, st, nil)
	type clock struct{ off, drift float64 }
	clocks := map[string]clock{}
	for i, sn := range sensors {
		clocks[sn.Name] = clock{off: float64(i+1) * 3.7e12, drift: (float64(i%11) - 5) * 1e-5}
	}
	feed12 := func(frame []byte, r *refRow, arrival int64) {
		for i, name := range r.sensors {
			c := clocks[name]
			ticks := uint64((float64(r.ns[i])*(1+c.drift) + c.off) * 12e6 / 1e9)
			rx := Rx{Sensor: name, Clock: sensorclock.MHz12, Ticks: ticks, Arrival: arrival, Len: uint8(len(frame))}
			copy(rx.Msg[:], frame)
			s.add(&rx)
		}
		s.grp.Expire(arrival+s.cfg.Hold.Nanoseconds(), s.process)
	}
	var errs []float64
	asked := 0
	arrival := int64(1_764_288_000e9)
	lastNS := map[string]int64{}
	for i := range rows {
		r := &rows[i]
		addr, icao := icaoOf(r)
		arrival += 2e9
		if r.aircraft%2 == 0 {
			if prev, ok := st.claims[icao]; ok {
				// the velocity from the aircraft's previous claim (2 s of
				// feed apart, but the rows' own times are what count)
				st.vel[icao] = chordVelocity(prev, [2]float64{r.lat, r.lon}, r.ns[0]-lastNS[icao])
			}
			lastNS[icao] = r.ns[0]
			st.claims[icao] = [2]float64{r.lat, r.lon}
			df17 := sim.ADSBPosition(addr, r.lat, r.lon, r.baro/0.3048, i%2 == 1)
			feed12(df17[:], r, arrival)
			continue
		}
		asked++
		df4 := sim.ModeSAltitudeReply(addr, r.baro/0.3048)
		n := len(st.fixes[icao])
		feed12(df4[:], r, arrival)
		if len(st.fixes[icao]) > n {
			f := st.fixes[icao][n]
			d := gate.Distance(gate.Point{Lat: f.Lat, Lon: f.Lon}, gate.Point{Lat: r.lat, Lon: r.lon})
			errs = append(errs, d)
		}
	}
	sort.Float64s(errs)
	// A fix from synced clocks needs two redundant receptions
	// (Problem.MinDOF), so fewer rows give one than with GPS clocks.
	if len(errs) < asked*2/5 {
		t.Fatalf("%d fixes of %d Mode S-only rows", len(errs), asked)
	}
	med := errs[len(errs)/2]
	top := errs[len(errs)-1]
	t.Logf("%d fixes of %d Mode S-only rows with synced 12 MHz clocks, median %.0f m, p90 %.0f m, worst %.0f m", len(errs), asked, med, errs[len(errs)*9/10], top)
	if med > 100 || top > 5000 {
		t.Errorf("median %.0f m, worst %.0f m; want ≤ 100 m and none beyond 5 km", med, top)
	}
}

// chordVelocity is the ground speed (m/s) and track (degrees) from a to b
// (lat, lon) flown in dtNS, or none (zeros) unless 2–300 s apart.
func chordVelocity(a, b [2]float64, dtNS int64) [2]float64 {
	dt := float64(dtNS) * 1e-9
	if dt <= 2 || dt > 300 {
		return [2]float64{}
	}
	dn := (b[0] - a[0]) * 111_320
	de := (b[1] - a[1]) * 111_320 * math.Cos(b[0]*math.Pi/180)
	return [2]float64{math.Hypot(de, dn) / dt, math.Mod(math.Atan2(de, dn)*180/math.Pi+360, 360)}
}
