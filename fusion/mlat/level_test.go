package mlat

import (
	"math"
	"sort"
	"testing"
)

// levelResidual is one reception's range residual at its row's reference
// position (m, late positive) with its signal level.
type levelResidual struct {
	set            string
	row, sensor    int
	level          int
	rel            float64 // dB against the sensor's median level on the other sets
	raw, adv       float64 // residual at the raw and the latency-advanced reference
	rangeM         float64 // the reference position's distance from the sensor
	hasAdv, lowest bool    // lowest: the weakest reception of its row
}

// levelResiduals computes every reception's levelResidual on every set:
// its time less the other sets' learnt delay less the light-time from the
// reference position, against the mean of the middle two of the row's
// other four receptions (the emission time without the reception itself,
// robust to one other outlier). The advanced reference is the raw one
// moved along the track by the latency of the aircraft's other rows.
func levelResiduals(t *testing.T) []levelResidual {
	sens := loadSensors(t)
	lat := referenceLatencies(sens, t)
	var out []levelResidual
	for _, set := range refSets {
		rows := loadSet(t, set)
		nw := calibrated(t, sens, set)
		med := medianLevels(t, set)
		l := lat[set]
		for i := range rows {
			r := &rows[i]
			hasAdv := l.vel[i].ok && l.vel[i].speed() >= 50
			raw := rowResiduals(r, sens, nw, r.truth())
			var adv []float64
			if hasAdv {
				adv = rowResiduals(r, sens, nw, l.vel[i].advanced(r, l.aircraftLatency(rows, i)))
			}
			weakest := 0
			for k := range r.sensors {
				if r.rssi[k] < r.rssi[weakest] {
					weakest = k
				}
			}
			for k, s := range r.sensors {
				lr := levelResidual{set: set, row: r.id, sensor: s, level: r.rssi[k], raw: raw[k], hasAdv: hasAdv, lowest: k == weakest,
					rangeM: dist(r.truth(), sens[s].pos),
					rel:    20 * math.Log10(math.Max(float64(r.rssi[k]), 1)/med[s])}
				if hasAdv {
					lr.adv = adv[k]
				}
				out = append(out, lr)
			}
		}
	}
	return out
}

// rowResiduals is each reception's residual at x against the rest.
func rowResiduals(r *refRow, sens map[int]refSensor, nw *Network, x Vec) []float64 {
	res := make([]float64, len(r.sensors))
	for k, s := range r.sensors {
		res[k] = float64(r.ns[k]-r.ns[0]-nw.appliedDelay(SensorID(s)))*1e-9*CAir - dist(x, sens[s].pos)
	}
	out := make([]float64, len(res))
	for k := range res {
		var o []float64
		for j := range res {
			if j != k {
				o = append(o, res[j])
			}
		}
		sort.Float64s(o)
		out[k] = res[k] - (o[len(o)/2-1]+o[len(o)/2])/2
	}
	return out
}

// medianLevels is each sensor's median signal level over the sets other
// than set (at least 1).
func medianLevels(t *testing.T, set string) map[int]float64 {
	lv := map[int][]float64{}
	for _, other := range refSets {
		if other == set {
			continue
		}
		for _, r := range loadSet(t, other) {
			for k, s := range r.sensors {
				lv[s] = append(lv[s], float64(r.rssi[k]))
			}
		}
	}
	out := map[int]float64{}
	for s, v := range lv {
		out[s] = math.Max(percentile(v, .5), 1)
	}
	return out
}

// spreadStats summarises residuals: count, median, 1.4826 × the median
// absolute deviation (σ for a normal core), p10, p90 and the shares more
// than 150 m late and early.
func spreadStats(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	a := append([]float64(nil), v...)
	sort.Float64s(a)
	med := a[len(a)/2]
	dev := make([]float64, len(a))
	late, early := 0, 0
	for i, x := range a {
		dev[i] = math.Abs(x - med)
		if x > 150 {
			late++
		}
		if x < -150 {
			early++
		}
	}
	sort.Float64s(dev)
	pc := func(n int) float64 { return 100 * float64(n) / float64(len(a)) }
	return sprintf("n %4d median %+5.1f σ %5.1f p10 %+4.0f p90 %+4.0f, >150 m late %3.1f %% early %3.1f %%",
		len(a), med, 1.4826*dev[len(dev)/2], a[len(a)/10], a[len(a)*9/10], pc(late), pc(early))
}

// spearmanZ is Spearman's rank correlation of x and y and its z score
// (ρ·√(n−1), standard normal when they are independent).
func spearmanZ(x, y []float64) (rho, z float64) {
	rx, ry := ranks(x), ranks(y)
	n := float64(len(x))
	var mx, my float64
	for i := range rx {
		mx += rx[i] / n
		my += ry[i] / n
	}
	var sxy, sxx, syy float64
	for i := range rx {
		sxy += (rx[i] - mx) * (ry[i] - my)
		sxx += (rx[i] - mx) * (rx[i] - mx)
		syy += (ry[i] - my) * (ry[i] - my)
	}
	rho = sxy / math.Sqrt(sxx*syy)
	return rho, rho * math.Sqrt(n-1)
}

// ranks returns v's ranks (ties averaged).
func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	out := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			out[idx[k]] = float64(i+j) / 2
		}
		i = j + 1
	}
	return out
}

// levelScale is a signal-level scale: the reception's level as the
// receiver gives it (absolute, the Beast byte), or in dB against the
// sensor's median level on the other sets (relative: each receiver's gain
// is its own). bins are its bins' lower edges and the top's upper edge.
type levelScale struct {
	name string
	bins []float64
	of   func(levelResidual) float64
}

var levelScales = []levelScale{
	{"level", []float64{0, 30, 45, 60, 75, 90, 110, 130, 256}, func(r levelResidual) float64 { return float64(r.level) }},
	{"dB against the sensor's median", []float64{-100, -9, -6, -3, 0, 3, 6, 100}, func(r levelResidual) float64 { return r.rel }},
}

// bin is v's bin on the scale (the end bins take what lies beyond).
func (sc levelScale) bin(v float64) int {
	return min(max(sort.SearchFloat64s(sc.bins, v+1e-9)-1, 0), len(sc.bins)-2)
}

// noiseModel is σ(level) as a live network would learn it from its ADS-B
// aircraft: per bin, the median size of the raw residuals of the sets
// other than set over that of all of them (1 for a bin with under 30).
func (sc levelScale) noiseModel(all []levelResidual, set string) []float64 {
	byBin := make([][]float64, len(sc.bins)-1)
	var every []float64
	for _, r := range all {
		if r.set != set {
			b := sc.bin(sc.of(r))
			byBin[b], every = append(byBin[b], math.Abs(r.raw)), append(every, math.Abs(r.raw))
		}
	}
	base := percentile(every, .5)
	out := make([]float64, len(byBin))
	for b, v := range byBin {
		out[b] = 1
		if len(v) >= 30 {
			out[b] = percentile(v, .5) / base
		}
	}
	return out
}

// TestReceptionTimingIndependentOfLevel asks whether a reception's timing
// error depends on its signal level, as a weak signal's leading edge is
// detected later and noisier: if it did, the level would weight the
// receptions in the solve and name the suspect to leave out. On every
// set: the level must be a signal level (it falls with the range, rank
// correlation z below −5), and the timing-noise model σ(level) learnt
// from the other sets' ADS-B rows, per bin, must be flat (every bin
// within 0.8–1.25 of the whole): that is the finding recorded in
// BENCHMARKS.md (no model worth weighting by), and the test fails where a
// data set shows otherwise. Logged: the rank correlations of the level
// with the residuals' size and sign at the raw and the latency-advanced
// reference, the residuals by level, the receptions more than 300 m late,
// and the fixes solved with σ(level) as weights against those without.
func TestReceptionTimingIndependentOfLevel(t *testing.T) {
	all := levelResiduals(t)
	for _, set := range refSets {
		var rel, rng []float64
		for _, r := range all {
			if r.set == set {
				rel, rng = append(rel, r.rel), append(rng, r.rangeM)
			}
		}
		if rho, z := spearmanZ(rel, rng); z > -5 {
			t.Errorf("%s: level against range ρ %.3f, z %.1f: want z < −5 (a signal level falls with range)", set, rho, z)
		}
		for _, sc := range levelScales {
			logCorrelations(t, set, sc, all)
			m := sc.noiseModel(all, set)
			for b, k := range m {
				if k < 0.8 || k > 1.25 {
					t.Errorf("%s: σ(%s) learnt from the other sets is %.2f of the whole in bin %.0f–%.0f; want 0.8–1.25 (flat)", set, sc.name, k, sc.bins[b], sc.bins[b+1])
				}
			}
			t.Logf("%s σ(%s) learnt from the other sets, by bin: %.2f", set, sc.name, m)
		}
	}
	for _, sc := range levelScales {
		logLevelTable(t, sc, all)
	}
	logLateTail(t, all)
	logWeightedAccuracy(t, all)
}

// logCorrelations logs Spearman's ρ of the level on scale sc with the
// residuals' size and sign (late positive), raw and advanced, on set.
func logCorrelations(t *testing.T, set string, sc levelScale, all []levelResidual) {
	var lv, absRaw, sgnRaw, lvA, absAdv, sgnAdv []float64
	for _, r := range all {
		if r.set != set {
			continue
		}
		lv, absRaw, sgnRaw = append(lv, sc.of(r)), append(absRaw, math.Abs(r.raw)), append(sgnRaw, r.raw)
		if r.hasAdv {
			lvA, absAdv, sgnAdv = append(lvA, sc.of(r)), append(absAdv, math.Abs(r.adv)), append(sgnAdv, r.adv)
		}
	}
	z := func(x, y []float64) string { rho, z := spearmanZ(x, y); return sprintf("ρ %+.3f z %+.1f", rho, z) }
	t.Logf("%s %s vs |residual|: raw %s, advanced %s; vs residual (late +): raw %s, advanced %s", set, sc.name, z(lv, absRaw), z(lvA, absAdv), z(lv, sgnRaw), z(lvA, sgnAdv))
}

// logLevelTable logs the residuals of every set by level bin.
func logLevelTable(t *testing.T, sc levelScale, all []levelResidual) {
	for b := 0; b+1 < len(sc.bins); b++ {
		var raw, adv []float64
		for _, r := range all {
			if sc.bin(sc.of(r)) == b {
				raw = append(raw, r.raw)
				if r.hasAdv {
					adv = append(adv, r.adv)
				}
			}
		}
		t.Logf("%s %.0f to %.0f: raw %s | advanced %s", sc.name, sc.bins[b], sc.bins[b+1], spreadStats(raw), spreadStats(adv))
	}
}

// logLateTail logs the receptions more than 300 m late at the advanced
// reference with their levels, and how many were their row's weakest
// (the suspect a level rule would leave out first).
func logLateTail(t *testing.T, all []levelResidual) {
	late, weakest := 0, 0
	for _, r := range all {
		if r.hasAdv && r.adv > 300 {
			late++
			if r.lowest {
				weakest++
			}
			t.Logf("%s row %d: sensor %d %.0f m late, level %d (%+.1f dB against its median)", r.set, r.row, r.sensor, r.adv, r.level, r.rel)
		}
	}
	t.Logf("%d receptions more than 300 m late at the advanced reference, %d of them their row's weakest (one in five by chance)", late, weakest)
}

// logWeightedAccuracy solves every set's rows as in
// TestReferenceAccuracyGPS with each reception's sigma scaled by the
// σ(level) learnt from the other sets, on each scale, and logs the
// figures beside the unweighted ones.
func logWeightedAccuracy(t *testing.T, all []levelResidual) {
	sens := loadSensors(t)
	lat := referenceLatencies(sens, t)
	for _, set := range refSets {
		rows := loadSet(t, set)
		med := medianLevels(t, set)
		for _, sc := range append([]levelScale{{name: "unweighted"}}, levelScales...) {
			var m []float64
			if sc.of != nil {
				m = sc.noiseModel(all, set)
			}
			weight := func(r *refRow, p *Problem) {
				if m == nil || len(p.M) != len(r.sensors) {
					return // every reference sensor has a position: Build keeps the order
				}
				for k := range p.M {
					lr := levelResidual{level: r.rssi[k], rel: 20 * math.Log10(math.Max(float64(r.rssi[k]), 1)/med[r.sensors[k]])}
					p.M[k].Sigma *= m[sc.bin(sc.of(lr))]
				}
			}
			acc := newAccuracy(lat[set])
			solveRows(rows, calibrated(t, sens, set), gpsClock, func(*refRow) bool { return true }, weight, acc)
			t.Logf("%s GPS clocks, %s: %v", set, sc.name, acc)
		}
	}
}
