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
	// scratch, sized MaxReceptions: ranges and weights of the current fit.
	r, w [MaxReceptions]float64
	s    [MaxReceptions]Vec
}

// NewSolver returns a solver with cfg's settings (zero fields: defaults).
func NewSolver(cfg SolverConfig) *Solver { return &Solver{cfg: cfg.withDefaults()} }

// Config returns the solver's effective settings.
func (sv *Solver) Config() SolverConfig { return sv.cfg }

// Solve locates p's transmitter into f. It returns nil or a Reason: too
// few receptions, bad geometry, no convergence, or residuals no single
// left-out reception explains. One outlying reception is left out when
// the rest fit and still over-determine the position.
func (sv *Solver) Solve(p *Problem, f *Fix) error {
	n := len(p.M)
	if n > MaxReceptions {
		n = MaxReceptions
	}
	hasAlt := p.AltSigma > 0
	if !enough(n, hasAlt) {
		return ReasonTooFew
	}
	all := uint32(1)<<n - 1
	err := sv.fit(p, all, f)
	if err == nil && sv.acceptable(f, hasAlt) {
		return nil
	}
	if !enough(n-1, hasAlt) || dof(n-1, hasAlt) < 1 {
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
		if sv.fit(p, all&^(1<<i), &try) != nil || !sv.acceptable(&try, hasAlt) {
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
