package mlat

import "math"

// MaxReceptions is the most receptions one solve uses; more are ignored
// (a transmission heard by more sensors gains little beyond this).
const MaxReceptions = 24

// Measurement is one reception of a transmission, its time already on the
// group's common time base.
type Measurement struct {
	// Sensor is the receiving sensor's antenna position, ECEF metres.
	Sensor Vec
	// T is the reception time in seconds since any epoch shared by the
	// group (subtract the first reception's time so the float keeps
	// sub-nanosecond precision).
	T float64
	// Sigma is the standard deviation of T in seconds; zero means the
	// solver's default.
	Sigma float64
}

// Problem is one transmission to locate.
type Problem struct {
	// M holds the receptions, at most MaxReceptions of them are used.
	M []Measurement
	// Alt is the transmitter's height above the WGS-84 ellipsoid in
	// metres, used as a pseudo-measurement when AltSigma > 0 (a Mode S
	// reply's barometric altitude, with a sigma wide enough to cover the
	// difference between pressure and geometric height).
	Alt, AltSigma float64
	// Start, when non-zero, is where the fit starts (a track's predicted
	// position); otherwise it starts above the sensors' centroid.
	Start Vec
	// MinDOF is the least redundancy (receptions, plus one for the
	// altitude, beyond the four unknowns) a fix needs: Network.Build asks
	// for 2 when a time came through a clock sync, whose error one
	// redundant reception could absorb unseen.
	MinDOF int
}

// Fix is a solved position.
type Fix struct {
	Pos           Vec     // ECEF, metres
	Lat, Lon, Alt float64 // degrees, metres above the ellipsoid
	// ErrorM is the 1-σ horizontal error estimate in metres (the square
	// root of the east and north variances from the fit's covariance).
	ErrorM float64
	// ResidualM is the RMS of the used receptions' range residuals, metres.
	ResidualM float64
	// GDOP is the geometric dilution of precision: the position's 3-D
	// standard deviation over the range noise's.
	GDOP float64
	// HDOP is the horizontal dilution of precision: ErrorM over the
	// used receptions' RMS range noise (their weights' own, so a noisier
	// synced time does not read as worse geometry).
	HDOP float64
	// Cov is the position covariance in ECEF, m².
	Cov [3][3]float64
	// Used marks the receptions of Problem.M the fix used (bit i for M[i]);
	// Sensors counts them.
	Used    uint32
	Sensors int
	// Chi2 is the weighted sum of squared residuals, altitude included.
	Chi2 float64
	// EmitT is the estimated emission time on the group's time base, s.
	EmitT float64
}

// SolverConfig tunes Solver; the zero value means the defaults.
type SolverConfig struct {
	// Sigma is the default reception-time standard deviation, seconds
	// (default DefaultSigmaNS).
	Sigma float64
	// MaxGDOP refuses fixes whose geometry amplifies noise more (default 100).
	MaxGDOP float64
	// MaxErrorM refuses fixes whose horizontal error estimate is larger
	// (default 2,000 m).
	MaxErrorM float64
	// MaxHDOP is the largest horizontal dilution of precision of a
	// position Solve reports (default DefaultMaxHDOP); Verify still
	// judges claims against a fix beyond it, its covariance saying how
	// little it can tell.
	MaxHDOP float64
	// OutlierChi2 scales the χ² acceptance threshold; a fit above it has
	// its worst reception left out when enough remain (default 1).
	OutlierChi2 float64
	// MaxRangeM is the farthest a fix may be from the sensors' centroid
	// (default 600 km: beyond radio line of sight for any aircraft).
	MaxRangeM float64
}

func (c SolverConfig) withDefaults() SolverConfig {
	if c.Sigma <= 0 {
		c.Sigma = DefaultSigmaNS * 1e-9
	}
	if c.MaxGDOP <= 0 {
		c.MaxGDOP = 100
	}
	if c.MaxErrorM <= 0 {
		c.MaxErrorM = 2000
	}
	if c.MaxHDOP <= 0 {
		c.MaxHDOP = DefaultMaxHDOP
	}
	if c.OutlierChi2 <= 0 {
		c.OutlierChi2 = 1
	}
	if c.MaxRangeM <= 0 {
		c.MaxRangeM = 600e3
	}
	return c
}

// Solver fits positions to receptions. It is not safe for concurrent use
// (it keeps scratch space); use one per goroutine. The zero value is not
// usable: call NewSolver.
type Solver struct {
	cfg SolverConfig
	// reporting is set while Solve runs: a reception is left out only
	// when the rest still over-determine the position counting
	// co-located sensors once (sites), so the fit without it can still
	// show a second outlier. Verify, which only compares a claim with
	// the best fit, does without.
	reporting bool
	// scratch, sized MaxReceptions: ranges and weights of the current fit.
	r, w [MaxReceptions]float64
	s    [MaxReceptions]Vec
}

// NewSolver returns a solver with cfg's settings (zero fields: defaults).
func NewSolver(cfg SolverConfig) *Solver { return &Solver{cfg: cfg.withDefaults()} }

// Config returns the solver's effective settings.
func (sv *Solver) Config() SolverConfig { return sv.cfg }

// DefaultMaxHDOP is the default SolverConfig.MaxHDOP. A fix's horizontal
// error is its HDOP times the timing noise (30 m at 100 ns); with five
// receptions, two of them at co-located sensors on some networks, a
// reception heard hundreds of metres late is absorbed by the fit unseen,
// and where the geometry is poor the same noise moves the fix several
// times as far. HDOP 5 is where GNSS practice stops calling geometry
// good. On the reference sets (GPS clocks) 4.0–4.4 % of the fixes lie
// beyond it, and they erred a median 63–129 m against the reference
// where the kept ones erred 33–45 m (TestReferenceAccuracyGPS).
const DefaultMaxHDOP = 5

// Solve locates p's transmitter into f. It returns nil or a Reason: too
// few receptions, bad geometry, no convergence, residuals no single
// left-out reception explains, an ambiguous position, or one too
// imprecise to report (HDOP over MaxHDOP; f is filled). One outlying
// reception is left out when the rest fit and still over-determine the
// position.
//
// Times of arrival at sensors spread over the ground can fit two
// positions, one on each side of the sensors (the "mirror" solution), and
// a fit can stop in a local minimum far from the truth. Without a start
// point Solve therefore fits from both closed-form (Bancroft) solutions
// of the times (with three receptions and an altitude: from the usual
// start, its mirror through the sensors' centroid and above each sensor),
// and keeps the best; when another fit kilometres away is about as good, the position
// is ambiguous and refused rather than guessed (ReasonAmbiguous). With a
// start point (a track's prediction, a claim) the fit near it is taken.
func (sv *Solver) Solve(p *Problem, f *Fix) error {
	sv.reporting = true
	err := sv.solve(p, f)
	sv.reporting = false
	if err != nil {
		return err
	}
	if f.HDOP > sv.cfg.MaxHDOP {
		return ReasonImprecise
	}
	return nil
}

// solve is Solve without the precision limit.
func (sv *Solver) solve(p *Problem, f *Fix) error {
	if p.Start != (Vec{}) {
		return sv.solveOnce(p, f)
	}
	var c candidates
	var first error = ReasonNoConvergence
	if sol, n := bancroft(p); n > 0 {
		for i := 0; i < n; i++ {
			first = sv.tryFrom(p, sol[i], &c)
		}
	} else {
		if first = sv.solveOnce(p, f); first == nil {
			c.add(f)
			sv.tryFrom(p, sv.mirror(p, f), &c)
		}
		sv.aboveSensors(p, &c)
	}
	if c.n == 0 {
		return first
	}
	*f = c.best
	if c.rivalled() {
		return ReasonAmbiguous
	}
	return nil
}

// ambiguousM is how far apart two fits must be to be two positions.
const ambiguousM = 2000

// candidates are the fits found from several starts.
type candidates struct {
	best Fix
	pos  [MaxReceptions + 2]Vec
	chi2 [MaxReceptions + 2]float64
	n    int
}

func (c *candidates) add(f *Fix) {
	if c.n == 0 || f.Chi2 < c.best.Chi2 {
		c.best = *f
	}
	if c.n < len(c.pos) {
		c.pos[c.n], c.chi2[c.n] = f.Pos, f.Chi2
		c.n++
	}
}

// rivalled reports whether a fit far from the best fits about as well.
func (c *candidates) rivalled() bool {
	for i := 0; i < c.n; i++ {
		if dist(c.pos[i], c.best.Pos) >= ambiguousM && c.chi2[i] < c.best.Chi2+chi2Limit(1) {
			return true
		}
	}
	return false
}

// aboveSensors fits from above each sensor (three receptions and an
// altitude, where no closed form applies).
func (sv *Solver) aboveSensors(p *Problem, c *candidates) {
	h := 9000.0
	if p.AltSigma > 0 {
		h = p.Alt
	}
	for i := 0; i < min(len(p.M), MaxReceptions); i++ {
		lat, lon, _ := Geodetic(p.M[i].Sensor)
		sv.tryFrom(p, ECEF(lat, lon, h), c)
	}
}

// tryFrom solves from start and adds an accepted fit to c.
func (sv *Solver) tryFrom(p *Problem, start Vec, c *candidates) error {
	var f Fix
	p.Start = start
	err := sv.solveOnce(p, &f)
	p.Start = Vec{}
	if err == nil {
		c.add(&f)
	}
	return err
}

// mirror is f's position reflected horizontally through the centroid of
// p's sensors, at f's height.
func (sv *Solver) mirror(p *Problem, f *Fix) Vec {
	var c Vec
	for i := range p.M {
		c = c.add(p.M[i].Sensor)
	}
	c = c.scale(1 / float64(len(p.M)))
	lat, lon, _ := Geodetic(c.scale(2).sub(f.Pos))
	return ECEF(lat, lon, f.Alt)
}

func (sv *Solver) solveOnce(p *Problem, f *Fix) error {
	n := len(p.M)
	if n > MaxReceptions {
		n = MaxReceptions
	}
	hasAlt := p.AltSigma > 0
	if !enough(n, hasAlt) || dof(n, hasAlt) < p.MinDOF {
		return ReasonTooFew
	}
	all := uint32(1)<<n - 1
	err := sv.fit(p, all, f)
	if err == nil && sv.acceptable(f, hasAlt) {
		return nil
	}
	if !enough(n-1, hasAlt) || dof(n-1, hasAlt) < max(1, p.MinDOF) {
		if err != nil {
			return err
		}
		return ReasonResidual
	}
	return sv.leaveOneOut(p, n, all, f, err)
}

// leaveOneOut refits without each reception in turn and keeps the best
// acceptable fit.
func (sv *Solver) leaveOneOut(p *Problem, n int, all uint32, f *Fix, first error) error {
	hasAlt := p.AltSigma > 0
	var best, try Fix
	found := false
	for i := 0; i < n; i++ {
		rest := all &^ (1 << i)
		if sv.reporting && dof(sites(p, rest), hasAlt) < max(1, p.MinDOF) {
			continue
		}
		if sv.fit(p, rest, &try) != nil || !sv.acceptable(&try, hasAlt) {
			continue
		}
		if !found || try.Chi2 < best.Chi2 {
			best, found = try, true
		}
	}
	if !found {
		if first != nil {
			return first
		}
		return ReasonResidual
	}
	*f = best
	return nil
}

// colocatedM is how close two sensors must be to count as one site for
// redundancy: their times carry independent noise but no independent
// geometry, so a reception's error (a late detection, a sync's error)
// moves the fix as if only one of them had heard it.
const colocatedM = 100

// sites counts the distinct sites among p's receptions in mask.
func sites(p *Problem, mask uint32) int {
	k := 0
	for i := 0; i < min(len(p.M), MaxReceptions); i++ {
		if mask&(1<<i) == 0 {
			continue
		}
		dup := false
		for j := 0; j < i && !dup; j++ {
			dup = mask&(1<<j) != 0 && dist(p.M[i].Sensor, p.M[j].Sensor) < colocatedM
		}
		if !dup {
			k++
		}
	}
	return k
}

func enough(n int, hasAlt bool) bool {
	return n >= 4 || (n == 3 && hasAlt)
}

func dof(n int, hasAlt bool) int {
	if hasAlt {
		n++
	}
	return n - 4
}

// acceptable applies the χ² test to a converged fit.
func (sv *Solver) acceptable(f *Fix, hasAlt bool) bool {
	d := dof(f.Sensors, hasAlt)
	if d < 1 {
		return true
	}
	return f.Chi2 <= sv.cfg.OutlierChi2*chi2Limit(d)
}

// chi2Limit is the χ² value exceeded with probability 0.001 at d degrees
// of freedom (exact table, Wilson–Hilferty beyond it).
func chi2Limit(d int) float64 {
	table := [...]float64{0, 10.83, 13.82, 16.27, 18.47, 20.52, 22.46, 24.32, 26.12, 27.88, 29.59}
	if d < len(table) {
		return table[d]
	}
	k := float64(d)
	const z = 3.090 // standard normal quantile at 0.999
	t := 1 - 2/(9*k) + z*math.Sqrt(2/(9*k))
	return k * t * t * t
}
