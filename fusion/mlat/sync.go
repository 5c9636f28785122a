package mlat

import "math"

// Clock is the kind of a sensor's timestamps.
type Clock uint8

// Clock kinds.
const (
	// ClockNone: the sensor gives no usable time; it cannot take part.
	ClockNone Clock = iota
	// ClockGPS: nanoseconds on the common GPS time base (Radarcape-style
	// Beast timestamps); used directly.
	ClockGPS
	// Clock12MHz: a free-running counter (dump1090/readsb Beast
	// timestamps) in nanoseconds; usable only through a good pair sync.
	Clock12MHz
)

// String returns the clock kind as configuration spells it.
func (c Clock) String() string {
	switch c {
	case ClockGPS:
		return "gps"
	case Clock12MHz:
		return "12mhz"
	}
	return "none"
}

// ParseClock parses "gps" or "12mhz" (an empty string is 12mhz, the
// Beast default).
func ParseClock(s string) (Clock, bool) {
	switch s {
	case "gps":
		return ClockGPS, true
	case "12mhz", "":
		return Clock12MHz, true
	}
	return ClockNone, false
}

// SensorID is a sensor's index in the caller's sensor table.
type SensorID uint16

// syncWindow is how many sync points a pair keeps.
const syncWindow = 32

// SyncConfig tunes Sync; the zero value means the defaults.
type SyncConfig struct {
	// MaxAgeNS is how long, in nanoseconds of the first sensor's clock, a
	// pair's sync stays usable after its last point (default 60 s; a live
	// network sees many ADS-B positions a second).
	MaxAgeNS int64
	// HorizonNS drops points older than this behind a pair's newest, so
	// the offset/drift line follows a wandering crystal (default 10 min).
	HorizonNS int64
	// MinPoints is how many points a pair needs before use (default 4).
	MinPoints int
	// MaxRMSNS refuses a pair whose line fits its points worse (default
	// 300 ns).
	MaxRMSNS float64
	// MaxSigmaNS refuses a conversion whose predicted standard deviation
	// (the fit's scatter widened by the drift's uncertainty at that
	// moment) is larger (default 150 ns, 45 m).
	MaxSigmaNS float64
	// OutlierNS is the smallest deviation from the line called an
	// outlier; deviations over OutlierK × the fit's RMS are too (defaults
	// 1 µs and 6).
	OutlierNS, OutlierK float64
	// JumpAfter consecutive outliers mean the clock jumped: the pair
	// restarts from the newest point (default 3).
	JumpAfter int
}

func (c SyncConfig) withDefaults() SyncConfig {
	def := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.MaxAgeNS, 60e9)
	def(&c.HorizonNS, 600e9)
	if c.MinPoints <= 0 {
		c.MinPoints = 4
	}
	if c.MaxRMSNS <= 0 {
		c.MaxRMSNS = 300
	}
	if c.MaxSigmaNS <= 0 {
		c.MaxSigmaNS = 150
	}
	if c.OutlierNS <= 0 {
		c.OutlierNS = 1000
	}
	if c.OutlierK <= 0 {
		c.OutlierK = 6
	}
	if c.JumpAfter <= 0 {
		c.JumpAfter = 3
	}
	return c
}

// SyncStats counts what Sync did with the points it was given.
type SyncStats struct {
	Points, Outliers, Jumps uint64
}

// Sync keeps the pairwise clock relations of free-running sensors: for
// each pair (a, b) the difference between b's and a's clock, as a line in
// a's time (offset and drift), fitted to points from transmissions whose
// origin is known. Not safe for concurrent use.
type Sync struct {
	cfg   SyncConfig
	pairs map[uint32]*pairSync
	Stats SyncStats
}

// pairSync is one pair's points and fitted line: y = b's clock − a's
// clock at x = a's clock, both in nanoseconds, x relative to base.
type pairSync struct {
	base       int64
	x, y       [syncWindow]float64
	n, head    int
	last       int64 // a's clock at the newest point
	off, drift float64
	rms        float64
	// xbar and sxx (mean and spread of the points' x relative to the
	// newest) give the line's uncertainty away from its points.
	xbar, sxx float64
	rejects   int
}

// sigmaAt is the standard deviation of the line's value at x: the fit's
// scatter (never taken below rmsFloorNS, as few points understate it)
// widened by the drift's uncertainty away from the points.
func (p *pairSync) sigmaAt(x float64) float64 {
	r := math.Max(p.rms, rmsFloorNS)
	d := x - p.newest() - p.xbar
	v := 1 / float64(p.n)
	if p.sxx > 0 {
		v += d * d / p.sxx
	}
	return r * math.Sqrt(v)
}

// rmsFloorNS is the least scatter a pair's fit is credited with.
const rmsFloorNS = 50

// NewSync returns an empty Sync with cfg's settings.
func NewSync(cfg SyncConfig) *Sync {
	return &Sync{cfg: cfg.withDefaults(), pairs: make(map[uint32]*pairSync)}
}

func pairKey(a, b SensorID) (uint32, bool) {
	if a > b {
		return uint32(b)<<16 | uint32(a), true
	}
	return uint32(a)<<16 | uint32(b), false
}

// Observe adds one sync point: sensor a heard a transmission at ta and b
// at tb (each on its own clock, ns), and the transmitter's known position
// puts b's true arrival predictedNS after a's. It reports whether the
// point was accepted (not an outlier).
func (s *Sync) Observe(a, b SensorID, ta, tb int64, predictedNS float64) bool {
	if a == b {
		return false
	}
	k, swap := pairKey(a, b)
	if swap {
		ta, tb, predictedNS = tb, ta, -predictedNS
	}
	p := s.pairs[k]
	if p == nil {
		p = &pairSync{base: ta}
		s.pairs[k] = p
	}
	s.Stats.Points++
	x := float64(ta - p.base)
	y := float64(tb-ta) - predictedNS
	if p.n >= s.cfg.MinPoints {
		dev := math.Abs(y - (p.off + p.drift*(x-p.newest())))
		if dev > math.Max(s.cfg.OutlierNS, s.cfg.OutlierK*p.sigmaAt(x)) {
			p.rejects++
			s.Stats.Outliers++
			if p.rejects < s.cfg.JumpAfter {
				return false
			}
			s.Stats.Jumps++
			*p = pairSync{base: ta}
			x = 0
		}
	}
	p.rejects = 0
	p.add(x, y, ta, s.cfg.HorizonNS)
	return true
}

func (p *pairSync) newest() float64 {
	return p.x[(p.head+syncWindow-1)%syncWindow]
}

// add appends a point, forgets those beyond the horizon and refits.
func (p *pairSync) add(x, y float64, ta int64, horizon int64) {
	p.x[p.head], p.y[p.head] = x, y
	p.head = (p.head + 1) % syncWindow
	if p.n < syncWindow {
		p.n++
	}
	p.last = ta
	for p.n > 1 && x-p.x[(p.head+syncWindow-p.n)%syncWindow] > float64(horizon) {
		p.n--
	}
	p.fit()
}

// fit is a trimmed least-squares line through the pair's points, x
// relative to the newest point so the offset is the current one: a plain
// fit, then again without the points further from it than three robust
// standard deviations (the median absolute deviation's), so one bad
// reference position cannot bend the line.
func (p *pairSync) fit() {
	p.line(math.Inf(1))
	if p.n < 5 {
		return
	}
	var dev [syncWindow]float64
	x0 := p.newest()
	for i := 0; i < p.n; i++ {
		j := (p.head + syncWindow - 1 - i) % syncWindow
		dev[i] = math.Abs(p.y[j] - (p.off + p.drift*(p.x[j]-x0)))
	}
	mad := median(dev[:p.n])
	p.line(math.Max(3*1.4826*mad, 2*rmsFloorNS))
}

// line fits y = off + drift·(x − newest) over the points whose deviation
// from the current line is at most cut, and sets rms, xbar and sxx.
func (p *pairSync) line(cut float64) {
	x0 := p.newest()
	oldOff, oldDrift := p.off, p.drift
	var sx, sy, sxx, sxy, n float64
	var use [syncWindow]bool
	for i := 0; i < p.n; i++ {
		j := (p.head + syncWindow - 1 - i) % syncWindow
		dx := p.x[j] - x0
		if math.Abs(p.y[j]-(oldOff+oldDrift*dx)) > cut {
			continue
		}
		use[i] = true
		sx, sy, sxx, sxy, n = sx+dx, sy+p.y[j], sxx+dx*dx, sxy+dx*p.y[j], n+1
	}
	if n == 0 {
		return
	}
	p.xbar, p.sxx = sx/n, sxx-sx*sx/n
	if den := n*sxx - sx*sx; n < 2 || den <= 0 {
		p.off, p.drift = sy/n, 0
	} else {
		p.drift = (n*sxy - sx*sy) / den
		p.off = (sy - p.drift*sx) / n
	}
	var ss float64
	for i := 0; i < p.n; i++ {
		if use[i] {
			j := (p.head + syncWindow - 1 - i) % syncWindow
			e := p.y[j] - (p.off + p.drift*(p.x[j]-x0))
			ss += e * e
		}
	}
	p.rms = 0
	if n > 2 {
		p.rms = math.Sqrt(ss / (n - 2))
	}
}

// median sorts v in place (insertion sort: at most syncWindow values)
// and returns its median.
func median(v []float64) float64 {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
	return v[len(v)/2]
}

// Convert maps tb, a time on b's clock, to a's clock, using the pair's
// line at that moment. ok is false unless the pair's sync is good: enough
// points, a small enough RMS, a recent enough last point, and a small
// enough predicted error at tb; sigmaNS is that predicted error, to widen
// the reception's sigma.
func (s *Sync) Convert(a, b SensorID, tb int64) (ta int64, sigmaNS float64, ok bool) {
	if a == b {
		return tb, 0, true
	}
	k, swap := pairKey(a, b)
	p := s.pairs[k]
	if p == nil || p.n < s.cfg.MinPoints || p.rms > s.cfg.MaxRMSNS {
		return 0, 0, false
	}
	var x, y float64
	if swap {
		// the pair's line maps b's clock (its first) to a's: y = a − b at x = b
		x = float64(tb - p.base)
		y = p.off + p.drift*(x-p.newest())
		ta = tb + int64(math.Round(y))
	} else {
		// y = b − a at x = a's clock, and a = tb − y(a): solved for x
		// exactly. Taking a ≈ tb − (current offset) instead was off by
		// drift² × (time since the newest point): 1 µs ten minutes out for
		// two crystals 40 ppm apart.
		x = p.firstClock(tb)
		y = p.off + p.drift*(x-p.newest())
		ta = tb - int64(math.Round(y))
	}
	sigmaNS = p.sigmaAt(x)
	if abs64(int64(x)+p.base-p.last) > s.cfg.MaxAgeNS || sigmaNS > s.cfg.MaxSigmaNS {
		return 0, 0, false
	}
	return ta, sigmaNS, true
}

// firstClock is the pair's x (its first sensor's clock, relative to
// base) at the moment its second sensor's clock reads t.
func (p *pairSync) firstClock(t int64) float64 {
	return (float64(t-p.base) - p.off + p.drift*p.newest()) / (1 + p.drift)
}

// Good reports whether the pair (a, b) is usable at time t of a's clock.
func (s *Sync) Good(a, b SensorID, t int64) bool {
	k, swap := pairKey(a, b)
	p := s.pairs[k]
	if p == nil || p.n < s.cfg.MinPoints || p.rms > s.cfg.MaxRMSNS {
		return false
	}
	x := float64(t - p.base)
	if swap {
		// a is the pair's second sensor: t on its clock, x on the first's
		x = p.firstClock(t)
	}
	return math.Abs(x+float64(p.base-p.last)) <= float64(s.cfg.MaxAgeNS) && p.sigmaAt(x) <= s.cfg.MaxSigmaNS
}

// Forget drops every pair sensor id is in.
func (s *Sync) Forget(id SensorID) {
	for k := range s.pairs {
		if SensorID(k>>16) == id || SensorID(k&0xffff) == id {
			delete(s.pairs, k)
		}
	}
}

// PairState is one pair's sync, for display.
type PairState struct {
	A, B     SensorID
	Points   int
	RMSNS    float64
	DriftPPM float64
	LastNS   int64
	Good     bool
}

// Pairs appends every pair's state to dst, judging "good" at now(a), the
// current time of each pair's first sensor's clock (the newest time it
// gave).
func (s *Sync) Pairs(dst []PairState, now func(SensorID) int64) []PairState {
	for k, p := range s.pairs {
		a, b := SensorID(k>>16), SensorID(k&0xffff)
		dst = append(dst, PairState{A: a, B: b, Points: p.n, RMSNS: p.rms, DriftPPM: p.drift * 1e6, LastNS: p.last,
			Good: s.Good(a, b, now(a))})
	}
	return dst
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
