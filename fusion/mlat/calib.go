package mlat

import "math"

// A GPS-timed receiver's timestamp is not the moment the signal reached
// its antenna: the cable, the filters and the receiver's own detection
// add a fixed delay of tens of nanoseconds, different for each receiver.
// On the reference sets the receivers' delays differ by up to 60 ns
// (20 m), as much as their timing noise, and the same in every set.
// Pairwise sync absorbs such a delay into a free-running pair's offset;
// GPS-timed receivers, used as they are, need it measured: from the
// transmissions whose origin is known (ADS-B positions), each receiver's
// residual against the others, as mlat-server's clock sync does for
// free-running pairs.

// Calibration settings.
const (
	// delayMinPoints is how many known-position transmissions a sensor's
	// delay needs before Build applies it.
	delayMinPoints = 20
	// delayWindow is the effective number of points the estimate averages
	// (a running mean, then exponential): at a few ADS-B positions a
	// second per sensor, a minute or two of traffic.
	delayWindow = 200
	// delayGateNS is the most a reception's residual may differ from the
	// transmission's median for the transmission to be learnt from: an
	// ADS-B position is up to a second stale
	// (TestReferenceLagsTransmission), up to 250 m off along its track,
	// so its residuals can be hundreds of nanoseconds off while the
	// delays are tens.
	delayGateNS = 150
)

// sensorDelay is one GPS-timed sensor's learned delay, ns.
type sensorDelay struct {
	n  int
	ns float64
}

// DelayNS returns sensor id's learned timestamp delay relative to
// the network's other GPS-timed sensors, in ns, and whether it is
// established (applied by Build).
func (nw *Network) DelayNS(id SensorID) (float64, bool) {
	if int(id) >= len(nw.delays) {
		return 0, false
	}
	b := nw.delays[id]
	return b.ns, b.n >= delayMinPoints
}

// appliedDelay is the delay Build subtracts from sensor id's GPS times.
func (nw *Network) appliedDelay(id SensorID) int64 {
	if b, ok := nw.DelayNS(id); ok {
		return int64(math.Round(b))
	}
	return 0
}

// learnDelays feeds the GPS-timed sensors' delays from a transmission
// whose origin pos is known: each reception's residual (its time less
// the light-time from pos, less its current delay) against the mean of
// the transmission's residuals (the emission time), into a running mean.
// It needs three such receptions (with two, the emission time would take
// half of each one's delay), and takes none when a residual is more than
// delayGateNS from the median: the position was stale or one reception
// came by a reflection, and clipping such points instead would bias the
// sensors that usually see the aircraft from one side.
func (nw *Network) learnDelays(rx []Reception, pos Vec) {
	var res, sorted [MaxReceptions]float64
	var ids [MaxReceptions]SensorID
	m := 0
	var t0 int64
	for i := range rx {
		s := nw.sensor(rx[i].Sensor)
		if s == nil || !s.HasPos || s.Clock != ClockGPS || m == MaxReceptions {
			continue
		}
		if m == 0 {
			t0 = rx[i].T
		}
		b, _ := nw.DelayNS(rx[i].Sensor)
		res[m] = float64(rx[i].T-t0) - dist(pos, s.Pos)/CAir*1e9 - b
		ids[m] = rx[i].Sensor
		m++
	}
	if m < 3 {
		return
	}
	copy(sorted[:m], res[:m])
	med := median(sorted[:m])
	var emit float64
	for k := 0; k < m; k++ {
		if math.Abs(res[k]-med) > delayGateNS {
			return
		}
		emit += res[k] / float64(m)
	}
	if len(nw.delays) < len(nw.Sensors) {
		nw.delays = append(nw.delays, make([]sensorDelay, len(nw.Sensors)-len(nw.delays))...)
	}
	for k := 0; k < m; k++ {
		b := &nw.delays[ids[k]]
		b.n++
		b.ns += (res[k] - emit) / float64(min(b.n, delayWindow))
	}
}
