package mlat

import "math"

// Sensor is one receiver as multilateration sees it.
type Sensor struct {
	// Pos is the antenna's ECEF position; HasPos is false when the
	// sensor's position is unknown (its receptions are then unusable).
	Pos    Vec
	HasPos bool
	Clock  Clock
	// SigmaNS is the sensor's timing noise, ns (zero: the solver's default).
	SigmaNS float64
}

// Reception is one sensor's reception of a transmission.
type Reception struct {
	Sensor SensorID
	// T is the reception time on the sensor's own clock, ns.
	T int64
}

// DefaultSigmaNS is the timing noise assumed for a sensor that states
// none: 100 ns (30 m). The GPS-timed reference receptions scatter by a
// median absolute deviation of 12–25 m around their reference positions,
// with a heavier tail; a free-running sensor adds its sync's RMS.
const DefaultSigmaNS = 100

// Network is a sensor table with the clock sync between its sensors: it
// turns a group of receptions into a Problem on one time base, and feeds
// the sync from transmissions whose origin is known. Not safe for
// concurrent use.
type Network struct {
	Sensors []Sensor
	Sync    *Sync
	// SigmaNS is the timing noise of a sensor that sets none, ns.
	SigmaNS float64
	// delays holds the GPS-timed sensors' learned delays (calib.go),
	// indexed like Sensors.
	delays []sensorDelay
	// lat holds the ADS-B aircraft's estimated position latencies
	// (latency.go).
	lat latencies
	// lightMarginM is the slack, metres, allowed beyond the light-time
	// between two sensors before their times are called inconsistent.
	lightMarginM float64
}

// NewNetwork returns a network over sensors with a fresh Sync.
func NewNetwork(sensors []Sensor, cfg SyncConfig) *Network {
	return &Network{Sensors: sensors, Sync: NewSync(cfg), SigmaNS: DefaultSigmaNS, lightMarginM: 3000,
		delays: make([]sensorDelay, len(sensors))}
}

// Build fills p.M from rx on one time base: GPS-timed sensors as they are,
// free-running ones through a good pair sync to the group's reference
// clock. Receptions from sensors without a position or without a good
// sync are left out; the error says why when too few remain, or that the
// times cannot all be true (ReasonClockJump). p.M's capacity is reused.
func (nw *Network) Build(rx []Reception, p *Problem) error {
	p.M, p.MinDOF = p.M[:0], 0
	ref, refClock := nw.reference(rx)
	noPos, unsynced := 0, 0
	var t0 int64
	for i := range rx {
		if len(p.M) == MaxReceptions {
			break
		}
		s := nw.sensor(rx[i].Sensor)
		if s == nil || !s.HasPos {
			noPos++
			continue
		}
		t, rms, ok := nw.toBase(ref, refClock, rx, i, s.Clock)
		if !ok {
			unsynced++
			continue
		}
		if len(p.M) == 0 {
			t0 = t
		}
		if rms > 0 {
			p.MinDOF = 2 // a synced time: see Problem.MinDOF
		}
		sig := s.SigmaNS
		if sig <= 0 {
			sig = nw.SigmaNS
		}
		p.M = append(p.M, Measurement{Sensor: s.Pos, T: float64(t-t0) * 1e-9, Sigma: math.Hypot(sig, rms) * 1e-9})
	}
	if !enough(len(p.M), p.AltSigma > 0) {
		switch {
		case noPos >= unsynced && noPos > 0:
			return ReasonNoSensorPosition
		case unsynced > 0:
			return ReasonUnsynced
		}
		return ReasonTooFew
	}
	return nw.consistent(p)
}

// Add appends a sensor heard of after the network was made (a receiver
// stating its own position) and returns its id.
func (nw *Network) Add(s Sensor) SensorID {
	nw.Sensors = append(nw.Sensors, s)
	nw.delays = append(nw.delays, make([]sensorDelay, len(nw.Sensors)-len(nw.delays))...)
	return SensorID(len(nw.Sensors) - 1)
}

// Reset puts sensor id at a new position or clock and forgets what was
// learnt of it: its pairs' clock sync and its delay calibration were
// measured with the old geometry, and would bias every time converted
// through them.
func (nw *Network) Reset(id SensorID, s Sensor) {
	if int(id) >= len(nw.Sensors) {
		return
	}
	nw.Sensors[id] = s
	if int(id) < len(nw.delays) {
		nw.delays[id] = sensorDelay{}
	}
	nw.Sync.Forget(id)
}

func (nw *Network) sensor(id SensorID) *Sensor {
	if int(id) >= len(nw.Sensors) {
		return nil
	}
	return &nw.Sensors[id]
}

// reference picks the group's time base: any GPS-timed sensor (they
// share one), else the free-running sensor with the most good pairs to
// the others.
func (nw *Network) reference(rx []Reception) (SensorID, Clock) {
	best, bestN := SensorID(0), -1
	for i := range rx {
		s := nw.sensor(rx[i].Sensor)
		if s == nil || !s.HasPos {
			continue
		}
		if s.Clock == ClockGPS {
			return rx[i].Sensor, ClockGPS
		}
		n := 0
		for j := range rx {
			if j != i && nw.Sync.Good(rx[i].Sensor, rx[j].Sensor, rx[i].T) {
				n++
			}
		}
		if n > bestN {
			best, bestN = rx[i].Sensor, n
		}
	}
	return best, Clock12MHz
}

// toBase maps reception i's time (on a clock of kind c) to the reference
// clock, directly or through another of the group's sensors, less the
// learned delay of the GPS-timed sensor it was taken on (its own, or the
// reference's when a free-running time was converted to a GPS clock).
func (nw *Network) toBase(ref SensorID, refClock Clock, rx []Reception, i int, c Clock) (int64, float64, bool) {
	r := rx[i]
	switch {
	case c == ClockNone:
		return 0, 0, false
	case c == ClockGPS && refClock == ClockGPS:
		return r.T - nw.appliedDelay(r.Sensor), 0, true
	case r.Sensor == ref:
		return r.T - nw.appliedDelay(r.Sensor), 0, true
	}
	t, sigma, ok := nw.Sync.Convert(ref, r.Sensor, r.T)
	if !ok && c == Clock12MHz {
		t, sigma, ok = nw.viaAnother(ref, rx, i)
	}
	return t - nw.appliedDelay(ref), sigma, ok
}

// viaAnother maps reception i's time to ref's clock through another
// reception's sensor k, two pair syncs in turn (i's to k's, k's to
// ref's), when i's sensor has no good sync with ref's: on a sparse
// network a pair of sensors that rarely hear the same aircraft may each
// be well synced with a third (mlat-server's clock normalisation walks
// the same graph). The conversion's sigma is the two hops' combined; the
// k with the smallest is used.
func (nw *Network) viaAnother(ref SensorID, rx []Reception, i int) (int64, float64, bool) {
	best, bestSigma, found := int64(0), math.Inf(1), false
	for k := range rx {
		if k == i || rx[k].Sensor == ref || rx[k].Sensor == rx[i].Sensor {
			continue
		}
		tk, s1, ok := nw.Sync.Convert(rx[k].Sensor, rx[i].Sensor, rx[i].T)
		if !ok {
			continue
		}
		t, s2, ok := nw.Sync.Convert(ref, rx[k].Sensor, tk)
		if sigma := math.Hypot(s1, s2); ok && sigma < bestSigma {
			best, bestSigma, found = t, sigma, true
		}
	}
	return best, bestSigma, found
}

// consistent checks that no two times differ by more than the light-time
// between their sensors (plus a margin): otherwise a clock jumped, a sync
// is wrong, or two transmissions were grouped as one.
func (nw *Network) consistent(p *Problem) error {
	for i := range p.M {
		for j := i + 1; j < len(p.M); j++ {
			dt := math.Abs(p.M[i].T-p.M[j].T) * CAir
			if dt > dist(p.M[i].Sensor, p.M[j].Sensor)+nw.lightMarginM {
				return ReasonClockJump
			}
		}
	}
	return nil
}

// Learn feeds the sync from a transmission whose origin pos (ECEF) is
// known (an ADS-B position): every pair of receptions with at least one
// free-running clock gives a point, and three or more GPS-timed
// receptions calibrate their sensors' delays. It returns how many sync
// points were accepted. An ADS-B position lags its transmission by the
// aircraft's avionics latency; LearnMoving, given the aircraft's
// velocity, measures that latency and syncs from the advanced position.
func (nw *Network) Learn(rx []Reception, pos Vec) int {
	nw.learnDelays(rx, pos)
	return nw.learnSync(rx, pos)
}

// learnSync feeds the free-running pairs' sync from a transmission whose
// origin is pos.
func (nw *Network) learnSync(rx []Reception, pos Vec) int {
	n := 0
	for i := range rx {
		a := nw.sensor(rx[i].Sensor)
		if a == nil || !a.HasPos || a.Clock == ClockNone {
			continue
		}
		for j := i + 1; j < len(rx); j++ {
			b := nw.sensor(rx[j].Sensor)
			if b == nil || !b.HasPos || b.Clock == ClockNone || (a.Clock == ClockGPS && b.Clock == ClockGPS) {
				continue
			}
			pred := (dist(pos, b.Pos) - dist(pos, a.Pos)) / CAir * 1e9
			if nw.Sync.Observe(rx[i].Sensor, rx[j].Sensor, rx[i].T, rx[j].T, pred) {
				n++
			}
		}
	}
	return n
}

// LightTimeNS is the longest light-time between any two of the network's
// positioned sensors, ns: receptions of one transmission are never
// further apart on a common clock.
func (nw *Network) LightTimeNS() int64 {
	var m float64
	for i := range nw.Sensors {
		for j := i + 1; j < len(nw.Sensors); j++ {
			if nw.Sensors[i].HasPos && nw.Sensors[j].HasPos {
				m = math.Max(m, dist(nw.Sensors[i].Pos, nw.Sensors[j].Pos))
			}
		}
	}
	return int64(m / CAir * 1e9)
}
