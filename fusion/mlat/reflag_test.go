package mlat

import (
	"math"
	"sort"
	"testing"
)

// trackVelocity is an aircraft's horizontal velocity (east, north, m/s)
// at a row, from the reference positions of the same aircraft's
// neighbouring rows at most maxGapS away: the derivative of the parabola
// through the row and its two neighbours, or the chord to the one there
// is. The reference sets keep one row every 27–67 s per aircraft, so this
// is the track's direction and speed, not a per-fix filter.
type trackVelocity struct {
	ok     bool
	ve, vn float64
}

// speed is the horizontal speed, m/s.
func (v trackVelocity) speed() float64 { return math.Hypot(v.ve, v.vn) }

// rowTime is a row's first reception time, seconds (GPS).
func (r *refRow) rowTime() float64 { return float64(r.ns[0]) * 1e-9 }

// trackVelocities returns every row's trackVelocity (index as rows).
func trackVelocities(rows []refRow, maxGapS float64) []trackVelocity {
	out := make([]trackVelocity, len(rows))
	byAircraft := map[int][]int{}
	for i := range rows {
		byAircraft[rows[i].aircraft] = append(byAircraft[rows[i].aircraft], i)
	}
	for _, idx := range byAircraft {
		sort.Slice(idx, func(a, b int) bool { return rows[idx[a]].rowTime() < rows[idx[b]].rowTime() })
		for k, i := range idx {
			var nb []int
			for _, j := range []int{k - 1, k + 1} {
				if j >= 0 && j < len(idx) {
					if dt := math.Abs(rows[idx[j]].rowTime() - rows[i].rowTime()); dt > 2 && dt <= maxGapS {
						nb = append(nb, idx[j])
					}
				}
			}
			out[i] = velocityAt(rows, i, nb)
		}
	}
	return out
}

// velocityAt differentiates the track at row i from its neighbours nb.
func velocityAt(rows []refRow, i int, nb []int) trackVelocity {
	r := &rows[i]
	e, n, _ := enuAt(r.lat, r.lon)
	local := func(j int) (t, de, dn float64) {
		d := rows[j].truth().sub(r.truth())
		return rows[j].rowTime() - r.rowTime(), d.dot(e), d.dot(n)
	}
	switch len(nb) {
	case 1:
		t, de, dn := local(nb[0])
		return trackVelocity{true, de / t, dn / t}
	case 2:
		t1, e1, n1 := local(nb[0])
		t2, e2, n2 := local(nb[1])
		// the parabola through (t1, p1), (0, 0), (t2, p2), differentiated at 0
		d := func(p1, p2 float64) float64 { return (p2*t1*t1 - p1*t2*t2) / (t1 * t2 * (t1 - t2)) }
		return trackVelocity{true, d(e1, e2), d(n1, n2)}
	}
	return trackVelocity{}
}

// along returns d's horizontal components along and across v at the
// row's position, metres (along positive in the direction of flight).
func (v trackVelocity) along(r *refRow, d Vec) (along, across float64) {
	e, n, _ := enuAt(r.lat, r.lon)
	de, dn := d.dot(e), d.dot(n)
	sp := v.speed()
	return (de*v.ve + dn*v.vn) / sp, (dn*v.ve - de*v.vn) / sp
}

// advanced is the row's reference position moved tau seconds along its
// track.
func (v trackVelocity) advanced(r *refRow, tau float64) Vec {
	e, n, _ := enuAt(r.lat, r.lon)
	return r.truth().add(e.scale(v.ve * tau)).add(n.scale(v.vn * tau))
}

// referenceLatency is, for one row, the time along its aircraft's track
// (s) at which the reference position best fits the row's reception
// times (their range residuals' scatter, emission time fitted), searched
// over −3…+5 s, and that scatter (m). It uses the times and the reference
// track only, no solver: how far the reference position is behind the
// transmission, on the row's own evidence.
func referenceLatency(sens map[int]refSensor, r *refRow, v trackVelocity) (tau, rms float64) {
	best := math.Inf(1)
	for k := -300; k <= 500; k++ {
		x := v.advanced(r, float64(k)*0.01)
		var res [MaxReceptions]float64
		var mean float64
		for i, s := range r.sensors {
			res[i] = float64(r.ns[i]-r.ns[0])*1e-9*CAir - dist(x, sens[s].pos)
			mean += res[i]
		}
		mean /= float64(len(r.sensors))
		var c float64
		for i := range r.sensors {
			c += (res[i] - mean) * (res[i] - mean)
		}
		if c < best {
			tau, best = float64(k)*0.01, c
		}
	}
	return tau, math.Sqrt(best / float64(len(r.sensors)))
}

// gpsFixes solves every row of a set as a Mode S-only transmission on its
// GPS clocks (the network calibrated from the other sets); ok[i] says
// whether row i was solved.
func gpsFixes(t *testing.T, sens map[int]refSensor, set string, rows []refRow) (fixes []Fix, ok []bool) {
	nw := calibrated(t, sens, set)
	sv := NewSolver(SolverConfig{})
	fixes, ok = make([]Fix, len(rows)), make([]bool, len(rows))
	var p Problem
	for i := range rows {
		r := &rows[i]
		p.Alt, p.AltSigma, p.Start = r.baro, baroSigma, Vec{}
		ok[i] = nw.Build(rowReceptions(r, gpsClock), &p) == nil && sv.Solve(&p, &fixes[i]) == nil
	}
	return fixes, ok
}

// signTest is a count of positive values among n, for a sign test.
type signTest struct{ pos, n int }

func (s *signTest) add(x float64) {
	s.n++
	if x > 0 {
		s.pos++
	}
}

// z is the count's distance from n/2 in standard deviations of a fair
// coin: under "the sign is chance", z ≥ 3.3 happens once in 2,000.
func (s signTest) z() float64 {
	return (float64(s.pos) - float64(s.n)/2) / (math.Sqrt(float64(s.n)) / 2)
}

// TestReferenceLagsTransmission tests the hypothesis that the fixes'
// along-track error is the reference's own latency (the position in an
// ADS-B report was measured before the report was sent), not the solver's.
//
// The argument: a single-row solve uses the receptions and the barometric
// altitude only; it knows nothing of the aircraft's velocity, so whatever
// error the geometry or the sensors cause cannot depend on which way the
// aircraft flies. An error that stays ahead of the reference whichever
// way the aircraft flies comes from the reference (or the time), not the
// fix. Asserted, on every set:
//   - the fix is ahead of the reference (signed along-track error > 0)
//     more often than chance allows (sign test, z ≥ 3.3), and so in each
//     of the four heading quadrants over the four sets: the error turns
//     with the aircraft;
//     As a control, the same test on the cross-track sign (left or
//     right of the track, which the reference's latency does not touch)
//     must find much less: z(ahead) ≥ |z(left)| + 3.3 (it is not zero:
//     aircraft on one airway see one geometry, so a fixed-frame bias
//     can put them on one side);
//   - the error in the fixed east/north frame, once a lag along the
//     velocity is taken out (least squares: error = τ·velocity + bias),
//     leaves a fixed bias smaller than the lag's displacement at the
//     median speed;
//   - the latency is a property of the aircraft (its avionics), not of
//     the row: between-aircraft variance over within-aircraft variance
//     (one-way analysis of variance) F ≥ 3, from each row's own
//     solver-free latency (referenceLatency).
func TestReferenceLagsTransmission(t *testing.T) {
	sens := loadSensors(t)
	var quadrant [4]signTest
	for _, set := range refSets {
		rows := loadSet(t, set)
		vel := trackVelocities(rows, 300)
		fixes, ok := gpsFixes(t, sens, set, rows)
		var sign, side signTest
		var lags, speeds []float64
		var reg lagRegression
		for i := range rows {
			v := vel[i]
			if !ok[i] || !v.ok || v.speed() < 50 {
				continue
			}
			al, ac := v.along(&rows[i], fixes[i].Pos.sub(rows[i].truth()))
			sign.add(al)
			side.add(ac)
			heading := math.Mod(math.Atan2(v.ve, v.vn)*180/math.Pi+360+45, 360)
			quadrant[int(heading/90)].add(al)
			lags = append(lags, al/v.speed())
			speeds = append(speeds, v.speed())
			reg.add(&rows[i], v, fixes[i].Pos.sub(rows[i].truth()))
		}
		tau, be, bn := reg.solve()
		f, groups := latencyPersistence(sens, rows, vel)
		t.Logf("%s: %d rows with a track: fix ahead of the reference in %d (%.0f %%, sign test z %.1f), left of it in %d (z %.1f); lag (along-track error over speed) p10/p25/p50/p75/p90 %.2f/%.2f/%.2f/%.2f/%.2f s; error = τ·v + b: τ %.2f s, fixed bias (%.0f, %.0f) m east/north vs τ × median speed %.0f m; latency persistence F %.1f over %d aircraft",
			set, sign.n, sign.pos, 100*float64(sign.pos)/float64(sign.n), sign.z(), side.pos, side.z(),
			percentile(lags, .1), percentile(lags, .25), percentile(lags, .5), percentile(lags, .75), percentile(lags, .9),
			tau, be, bn, tau*percentile(speeds, .5), f, groups)
		if sign.z() < 3.3 {
			t.Errorf("%s: fix ahead of the reference in %d of %d rows (z %.1f): not significantly more than half", set, sign.pos, sign.n, sign.z())
		}
		if sign.z() < math.Abs(side.z())+3.3 {
			t.Errorf("%s: ahead of the reference z %.1f, left of the track z %.1f: the along-track asymmetry is not significantly stronger than the cross-track one", set, sign.z(), side.z())
		}
		if tau <= 0 || math.Hypot(be, bn) >= tau*percentile(speeds, .5) {
			t.Errorf("%s: lag %.2f s, fixed bias %.0f m: the fixed-frame bias is not smaller than the lag's displacement (%.0f m)", set, tau, math.Hypot(be, bn), tau*percentile(speeds, .5))
		}
		if f < 3 {
			t.Errorf("%s: latency persistence F %.1f over %d aircraft, want ≥ 3 (a per-aircraft latency)", set, f, groups)
		}
	}
	for q, s := range quadrant {
		t.Logf("heading %s: fix ahead in %d of %d rows (z %.1f)", [...]string{"north", "east", "south", "west"}[q], s.pos, s.n, s.z())
		if s.z() < 3.3 {
			t.Errorf("heading quadrant %d: fix ahead of the reference in %d of %d rows (z %.1f): the error does not turn with the aircraft", q, s.pos, s.n, s.z())
		}
	}
}

// lagRegression fits error = τ·velocity + (bias east, bias north) by
// least squares over rows (east and north equations).
type lagRegression struct {
	a [3][3]float64
	b [3]float64
}

func (g *lagRegression) add(r *refRow, v trackVelocity, d Vec) {
	e, n, _ := enuAt(r.lat, r.lon)
	for _, eq := range [2][4]float64{{v.ve, 1, 0, d.dot(e)}, {v.vn, 0, 1, d.dot(n)}} {
		for i := 0; i < 3; i++ {
			for j := 0; j < 3; j++ {
				g.a[i][j] += eq[i] * eq[j]
			}
			g.b[i] += eq[i] * eq[3]
		}
	}
}

// solve returns τ (s) and the fixed bias (m east, m north).
func (g *lagRegression) solve() (tau, be, bn float64) {
	var a [4][4]float64
	a[3][3] = 1
	for i := 0; i < 3; i++ {
		copy(a[i][:3], g.a[i][:])
	}
	inv, ok := invert4(a)
	if !ok {
		return 0, 0, 0
	}
	var x [3]float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			x[i] += inv[i][j] * g.b[j]
		}
	}
	return x[0], x[1], x[2]
}

// latencyPersistence is the one-way analysis of variance of the rows'
// own latencies (referenceLatency, rows fitting within 100 m) grouped by
// aircraft, over aircraft with two or more: F (between-aircraft over
// within-aircraft mean square) and the number of aircraft. Under "the
// latency is a property of the row", F is about 1.
func latencyPersistence(sens map[int]refSensor, rows []refRow, vel []trackVelocity) (f float64, groups int) {
	by := map[int][]float64{}
	for i := range rows {
		if v := vel[i]; v.ok && v.speed() >= 50 {
			if tau, rms := referenceLatency(sens, &rows[i], v); rms < 100 {
				by[rows[i].aircraft] = append(by[rows[i].aircraft], tau)
			}
		}
	}
	var all, ssw, ssb float64
	n := 0
	means := map[int]float64{}
	for ac, v := range by {
		if len(v) < 2 {
			continue
		}
		var m float64
		for _, x := range v {
			m += x
			all += x
		}
		means[ac] = m / float64(len(v))
		n += len(v)
		groups++
	}
	all /= float64(n)
	for ac, m := range means {
		for _, x := range by[ac] {
			ssw += (x - m) * (x - m)
		}
		ssb += float64(len(by[ac])) * (m - all) * (m - all)
	}
	return (ssb / float64(groups-1)) / (ssw / float64(n-groups)), groups
}
