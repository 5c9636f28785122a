package mlat

import "math"

// An ADS-B position is not where the aircraft was when it transmitted:
// its avionics put in each message a position computed some time before
// (0.1–0.3 s of flight typically, the same for one aircraft's messages;
// TestReferenceLagsTransmission measures it on the reference sets). A
// free-running pair's sync learns its offset from such positions, so each
// lagging position moves the pair's line by the lag's effect on that
// pair's time difference. The network can measure the lag itself: once
// some pairs are synced, the receptions of an aircraft's transmission fit
// its claimed position moved along its own velocity best at one τ. Each
// transmission's τ (LatencyFit) is combined, weighted by its geometry,
// with the aircraft's earlier ones and a prior of zero (aircraftLatency's
// estimate says why not the network's mean), and the position advanced
// by the result before it feeds the sync (Network.LearnMoving).

// Latency estimation settings.
const (
	// latencyPriorS is the prior spread of an aircraft's latency, s: the
	// 1090 MHz ADS-B standard (DO-260B) budgets −0.2 to +0.4 s of
	// uncompensated latency, and the reference sets' aircraft lag their
	// positions by 0.10–0.16 s (median per set). A transmission whose
	// geometry pins τ to better than this moves its aircraft's estimate;
	// one that does not barely does.
	latencyPriorS = 0.2
	// latencyMaxSigmaS is the largest standard deviation of a single
	// transmission's τ that is learnt from: beyond it the geometry hardly
	// sees a move along the velocity, and the estimate is mostly noise.
	latencyMaxSigmaS = 0.5
	// latencyMaxS bounds the advance: a position is computed before it is
	// sent (τ ≥ 0) and messages carry positions at most about a second old.
	latencyMaxS = 1
	// latencyMaxAircraft bounds the aircraft remembered; the least
	// recently heard half is forgotten when it is reached.
	latencyMaxAircraft = 4096
)

// LatencyFit measures how far behind the transmission a position claim
// is: p holds the transmission's receptions on one time base
// (Network.Build's output), pos the claimed position and vel the
// aircraft's velocity (ECEF, m/s). It returns the τ at which pos + τ·vel
// best fits the times (weighted least squares with the emission time
// free, linearised about pos: τ·|vel| is metres against ranges of many
// kilometres) and its standard deviation, s. ok is false with fewer than
// three receptions or when the geometry cannot see a move along vel
// (every sensor's range changes alike).
func LatencyFit(p *Problem, pos, vel Vec) (tau, sigma float64, ok bool) {
	n := min(len(p.M), MaxReceptions)
	if n < 3 {
		return 0, 0, false
	}
	var r, g, w [MaxReceptions]float64
	var sw, sr, sg float64
	for i := 0; i < n; i++ {
		m := &p.M[i]
		d := pos.sub(m.Sensor)
		rng := d.norm()
		if rng == 0 {
			return 0, 0, false
		}
		sig := m.Sigma
		if sig <= 0 {
			sig = DefaultSigmaNS * 1e-9
		}
		w[i] = 1 / (sig * CAir * sig * CAir)
		// the range residual, and how fast the range grows as the
		// position moves along vel
		r[i] = m.T*CAir - rng
		g[i] = d.dot(vel) / rng
		sw, sr, sg = sw+w[i], sr+w[i]*r[i], sg+w[i]*g[i]
	}
	rbar, gbar := sr/sw, sg/sw
	var sgg, srg float64
	for i := 0; i < n; i++ {
		dg := g[i] - gbar
		sgg += w[i] * dg * dg
		srg += w[i] * dg * (r[i] - rbar)
	}
	if !(sgg > 0) || math.IsInf(sgg, 0) {
		return 0, 0, false
	}
	return srg / sgg, 1 / math.Sqrt(sgg), true
}

// aircraftLatency is one aircraft's evidence: the sums of its
// transmissions' τ estimates weighted by their inverse variances, and the
// LearnMoving call that last touched it.
type aircraftLatency struct {
	w, wt float64
	seq   uint64
}

// latencies is the network's latency state, per aircraft address.
type latencies struct {
	ac  map[uint32]*aircraftLatency
	seq uint64
	// scratch receives the receptions on one time base for LatencyFit.
	scratch Problem
}

// entry returns addr's evidence, making it if there is room.
func (l *latencies) entry(addr uint32) *aircraftLatency {
	if l.ac == nil {
		l.ac = make(map[uint32]*aircraftLatency)
	}
	a := l.ac[addr]
	if a == nil {
		if len(l.ac) >= latencyMaxAircraft {
			l.forget()
		}
		if len(l.ac) >= latencyMaxAircraft {
			return nil
		}
		a = &aircraftLatency{}
		l.ac[addr] = a
	}
	a.seq = l.seq
	return a
}

// forget drops the aircraft not touched in the last latencyMaxAircraft/2
// calls.
func (l *latencies) forget() {
	for k, a := range l.ac {
		if l.seq-a.seq > latencyMaxAircraft/2 {
			delete(l.ac, k)
		}
	}
}

// estimate is the aircraft's latency and its standard deviation: its
// evidence combined with a prior of zero, latencyPriorS wide, bounded to
// [0, latencyMaxS]. The prior is zero, not a latency typical of
// avionics nor the network's mean of its aircraft's: on free-running
// clocks the time differences see a latency only relative to the pairs'
// sync, which learnt from the same kind of lagging positions, so a
// latency common to every aircraft is barely observable when the traffic
// flies one way (an airway), and a learnt mean wandered (on a synthetic
// airway to twice the truth, locating worse than not advancing at all);
// pulled towards zero, an estimate can only move the sync part of the way
// from what Learn would have learnt.
func (a *aircraftLatency) estimate() (tau, sigma float64) {
	w := 1 / (latencyPriorS * latencyPriorS)
	var wt float64
	if a != nil {
		w, wt = w+a.w, a.wt
	}
	return math.Max(0, math.Min(latencyMaxS, wt/w)), 1 / math.Sqrt(w)
}

// LatencyS returns the latency the network has estimated for aircraft
// addr's positions and its standard deviation, s (zero and
// latencyPriorS for an aircraft it has no evidence of).
func (nw *Network) LatencyS(addr uint32) (tau, sigma float64) {
	return nw.lat.ac[addr].estimate()
}

// LearnMoving is Learn for an aircraft moving at vel (ECEF, m/s; its
// ADS-B velocity, or its positions' rate of change; the zero Vec when
// unknown): the free-running pairs learn from pos advanced along vel by
// the aircraft's estimated latency, which this transmission's receptions
// on the currently synced clocks also refine. The GPS-timed sensors'
// delays learn from pos as it is: their calibration already drops the
// transmissions a stale position puts out of line, and the advance did
// not improve it on the reference sets. addr is the aircraft's address.
// It returns how many sync points were accepted.
func (nw *Network) LearnMoving(addr uint32, rx []Reception, pos, vel Vec) int {
	nw.learnDelays(rx, pos)
	if vel == (Vec{}) || !nw.anyFree(rx) {
		return nw.learnSync(rx, pos)
	}
	l := &nw.lat
	l.seq++
	a := l.entry(addr)
	p := &l.scratch
	p.AltSigma = 0
	if nw.Build(rx, p) == nil && a != nil {
		if tau, sigma, ok := LatencyFit(p, pos, vel); ok && sigma <= latencyMaxSigmaS {
			w := 1 / (sigma * sigma)
			a.w, a.wt = a.w+w, a.wt+w*tau
		}
	}
	tau, _ := a.estimate()
	return nw.learnSync(rx, pos.add(vel.scale(tau)))
}

// anyFree reports whether a reception is on a free-running clock.
func (nw *Network) anyFree(rx []Reception) bool {
	for i := range rx {
		if s := nw.sensor(rx[i].Sensor); s != nil && s.HasPos && s.Clock == Clock12MHz {
			return true
		}
	}
	return false
}
