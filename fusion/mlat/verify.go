package mlat

import "math"

// Status is a claim verification's verdict.
type Status uint8

// Verdicts.
const (
	// Unverifiable: too few synchronised receptions, or geometry that
	// could not tell the claim from a position MinDistanceM away.
	Unverifiable Status = iota
	// Verified: the measured times put the transmitter within
	// MinDistanceM of its claim, and a claim that far off would have been
	// caught.
	Verified
	// Contradicted: the measured times put the transmitter more than
	// MinDistanceM (and more than K standard deviations) from its claim,
	// and the claim fits them significantly worse than that position.
	Contradicted
)

var statusNames = [...]string{"unverifiable", "verified", "contradicted"}

// String returns the verdict as the API spells it.
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// Verification is the verdict on one position claim.
type Verification struct {
	Status Status
	// Reason says why a claim is unverifiable (ReasonNone otherwise).
	Reason Reason
	// ResidualM is the RMS range residual of the receptions at the
	// claimed position (emission time fitted), metres: tens of metres
	// for a true claim.
	ResidualM float64
	// DistanceM is the horizontal distance from the claim to the
	// position the times give, metres; SigmaM that distance's standard
	// deviation along the same direction.
	DistanceM, SigmaM float64
	// Sensors is how many receptions the verdict used.
	Sensors int
	// Fix is the position the times give (valid unless Reason says no).
	Fix Fix
}

// VerifyConfig tunes Verify; the zero value means the defaults.
type VerifyConfig struct {
	// MinDistanceM is the smallest disagreement called a contradiction
	// (default 500 m: ADS-B positions may be a second stale, and an
	// honest claim must never be called false).
	MinDistanceM float64
	// K is how many standard deviations the disagreement must exceed
	// (default 4).
	K float64
}

func (c VerifyConfig) withDefaults() VerifyConfig {
	if c.MinDistanceM <= 0 {
		c.MinDistanceM = 500
	}
	if c.K <= 0 {
		c.K = 4
	}
	return c
}

// Verify checks a claimed position (ECEF) against p's receptions. The
// fit starts at the claim, so it finds the position consistent with the
// times nearest to it rather than a distant mirror solution, however
// imprecise (MaxHDOP does not apply: the fix's covariance says how little
// a poor geometry can tell). p.Start is overwritten. It never returns Contradicted without a converged fix that
// is both far and significantly better than the claim, nor when the
// disagreement rests on one reception that arrived late (lateAlone).
func (sv *Solver) Verify(p *Problem, claim Vec, cfg VerifyConfig, v *Verification) {
	cfg = cfg.withDefaults()
	*v = Verification{}
	n := len(p.M)
	if n > MaxReceptions {
		n = MaxReceptions
	}
	v.Sensors = n
	p.Start = claim
	if err := sv.solve(p, &v.Fix); err != nil {
		v.Reason = err.(Reason)
		return
	}
	v.Sensors = v.Fix.Sensors
	chi2Claim, rms := sv.claimChi2(p, claim, v.Fix.Used)
	v.ResidualM = rms
	e, nn, _ := enu(claim)
	d := claim.sub(v.Fix.Pos)
	de, dn := d.dot(e), d.dot(nn)
	v.DistanceM = math.Hypot(de, dn)
	u := e.scale(1)
	if v.DistanceM > 0 {
		u = e.scale(de / v.DistanceM).add(nn.scale(dn / v.DistanceM))
	}
	v.SigmaM = math.Sqrt(math.Max(quad(&v.Fix.Cov, u), 0))
	major := majorAxis(&v.Fix.Cov, e, nn)
	switch {
	case v.DistanceM > cfg.MinDistanceM && v.DistanceM > cfg.K*v.SigmaM &&
		chi2Claim-v.Fix.Chi2 > chi2Limit(2):
		if sv.lateAlone(p, claim) {
			v.Reason = ReasonOneReception
			return
		}
		v.Status = Contradicted
	case v.DistanceM <= cfg.MinDistanceM && cfg.K*major < cfg.MinDistanceM:
		v.Status = Verified
	default:
		v.Reason = ReasonInsensitive
	}
}

// lateAlone reports whether the claim fits all of p's receptions but
// one within their noise (χ² at 0.001, over three or more), and that one
// arrived more than lateSigmas standard deviations later than the claim
// predicts. A signal can reach a sensor late, never early: by a
// reflection off terrain or a weak signal's late detection. On the
// reference sets, honest claims fitted four receptions within tens of
// metres and the fifth, always one sensor 200–250 km away, 2.7–3.1 µs
// late, while the fit moved a kilometre to absorb it (two of the five
// sensors being co-located, too little redundancy was left to tell).
// A displaced claim is excused only when the other receptions alone
// cannot see its displacement and the one left out is late, not early:
// about half of the rare cases where the others cannot see it.
func (sv *Solver) lateAlone(p *Problem, claim Vec) bool {
	n := min(len(p.M), MaxReceptions)
	all := uint32(1)<<n - 1
	for i := 0; i < n; i++ {
		rest := all &^ (1 << i)
		m := sv.load(p, rest)
		if m < 3 {
			return false
		}
		b := sv.bias(claim, m)
		d := m - 1
		if p.AltSigma > 0 {
			d++
		}
		if sv.cost(p, claim, b, m) > sv.cfg.OutlierChi2*chi2Limit(d) {
			continue
		}
		sig := p.M[i].Sigma
		if sig <= 0 {
			sig = sv.cfg.Sigma
		}
		if late := p.M[i].T*CAir - dist(claim, p.M[i].Sensor) - b; late > lateSigmas*sig*CAir {
			return true
		}
	}
	return false
}

// lateSigmas is how many standard deviations late a reception must be
// to be the one a claim's disagreement rests on.
const lateSigmas = 4

// claimChi2 is the weighted sum of squared residuals at the claim (the
// emission time fitted, the altitude term included) over the receptions
// in used, and their RMS range residual in metres.
func (sv *Solver) claimChi2(p *Problem, claim Vec, used uint32) (chi2, rms float64) {
	m := sv.load(p, used)
	b := sv.bias(claim, m)
	chi2 = sv.cost(p, claim, b, m)
	var ss float64
	for i := 0; i < m; i++ {
		r := sv.r[i] - dist(claim, sv.s[i]) - b
		ss += r * r
	}
	return chi2, math.Sqrt(ss / float64(m))
}

// majorAxis is the 1-σ semi-major axis of the horizontal error ellipse.
func majorAxis(c *[3][3]float64, e, n Vec) float64 {
	a, b := quad(c, e), quad(c, n)
	var ab float64
	for r := 0; r < 3; r++ {
		for k := 0; k < 3; k++ {
			ab += e[r] * c[r][k] * n[k]
		}
	}
	tr, det := a+b, a*b-ab*ab
	l := tr/2 + math.Sqrt(math.Max(tr*tr/4-det, 0))
	return math.Sqrt(math.Max(l, 0))
}
