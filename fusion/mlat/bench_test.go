package mlat

import (
	"testing"
)

// BenchmarkSolveReference solves the reference set's transmissions (GPS
// clocks: Build then Solve, barometric altitude as a pseudo-measurement,
// no start point), one per op. ns/op is CPU time per solved transmission
// on one core; the target is ≥ 20,000 a CPU-second (≤ 50 µs/op).
func BenchmarkSolveReference(b *testing.B) {
	sens := loadSensors(b)
	rows := loadSet(b, "set_1.csv")
	nw := refNetwork(sens, ClockGPS, SyncConfig{})
	rxs := make([][]Reception, len(rows))
	for i := range rows {
		rxs[i] = rowReceptions(&rows[i], gpsClock)
	}
	sv := NewSolver(SolverConfig{})
	p := Problem{M: make([]Measurement, 0, MaxReceptions)}
	var f Fix
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := &rows[i%len(rows)]
		p.Alt, p.AltSigma, p.Start = r.baro, baroSigma, Vec{}
		if nw.Build(rxs[i%len(rows)], &p) == nil {
			_ = sv.Solve(&p, &f)
		}
	}
}

// BenchmarkVerifyReference verifies reference claims, one per op.
func BenchmarkVerifyReference(b *testing.B) {
	sens := loadSensors(b)
	rows := loadSet(b, "set_1.csv")
	nw := refNetwork(sens, ClockGPS, SyncConfig{})
	sv := NewSolver(SolverConfig{})
	ps := make([]Problem, len(rows))
	claims := make([]Vec, len(rows))
	for i := range rows {
		ps[i].Alt, ps[i].AltSigma = rows[i].baro, baroSigma
		if err := nw.Build(rowReceptions(&rows[i], gpsClock), &ps[i]); err != nil {
			b.Fatal(err)
		}
		claims[i] = ECEF(rows[i].lat, rows[i].lon, rows[i].baro)
	}
	var v Verification
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sv.Verify(&ps[i%len(ps)], claims[i%len(ps)], VerifyConfig{}, &v)
	}
}

// BenchmarkGrouper adds five receptions of a transmission and expires
// it, one transmission per op.
func BenchmarkGrouper(b *testing.B) {
	g := NewGrouper(10, 1024)
	msg := []byte{0x20, 0, 0, 0, 0, 0, 0}
	emit := func(*Group) {}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		msg[1], msg[2] = byte(i), byte(i>>8)
		now := int64(i) * 4
		for s := SensorID(0); s < 5; s++ {
			g.Add(msg, Reception{Sensor: s, T: now}, now, emit)
		}
		g.Expire(now, emit)
	}
}

// TestSolveAllocatesNothing: solving, verifying, syncing (with and
// without the latency estimate) and filtering in steady state allocate
// nothing.
func TestSolveAllocatesNothing(t *testing.T) {
	nw, truth := squareNetwork(ClockGPS)
	rx := exactRx(nw, truth, 1e9)
	sv := NewSolver(SolverConfig{})
	p := Problem{Alt: 9000, AltSigma: baroSigma, M: make([]Measurement, 0, MaxReceptions)}
	var f Fix
	var v Verification
	var k Filter
	n12, _ := squareNetwork(Clock12MHz)
	n12.Learn(rx, truth)
	allocs := testing.AllocsPerRun(100, func() {
		if nw.Build(rx, &p) != nil || sv.Solve(&p, &f) != nil {
			t.Fatal("no fix")
		}
		sv.Verify(&p, truth, VerifyConfig{}, &v)
		k.Update(&f, 1)
		n12.Learn(rx, truth)
		n12.LearnMoving(0x3c6586, rx, truth, Vec{200})
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per run, want 0", allocs)
	}
}

// BenchmarkLearnMoving is one ADS-B position syncing five free-running
// sensors through LearnMoving: the receptions put on one time base, the
// aircraft's latency fitted and the ten pairs fed the advanced position.
func BenchmarkLearnMoving(b *testing.B) {
	nw, truth := squareNetwork(Clock12MHz)
	rx := exactRx(nw, truth, 1e9)
	for i := 0; i < 8; i++ {
		nw.Learn(rx, truth)
	}
	vel := GroundVelocity(47.2, 8.3, 230, 70)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nw.LearnMoving(0x3c6586, rx, truth, vel)
	}
}
