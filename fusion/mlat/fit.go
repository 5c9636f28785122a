package mlat

import "math"

// fit runs a damped Gauss–Newton (Levenberg–Marquardt) least-squares fit
// of position and emission time to the receptions selected by mask, and
// fills f. The model: c·T_i = |x − s_i| + b, with b = c·(emission time);
// the unknown emission time makes this the time-difference problem
// without choosing a reference sensor.
func (sv *Solver) fit(p *Problem, mask uint32, f *Fix) error {
	m := sv.load(p, mask)
	if !enough(m, p.AltSigma > 0) {
		return ReasonTooFew
	}
	x := sv.start(p, m)
	b := sv.bias(x, m)
	cost := sv.cost(p, x, b, m)
	lambda := 1e-3
	for it := 0; it < 40; it++ {
		var a [4][4]float64
		var g [4]float64
		sv.normal(p, x, b, m, &a, &g)
		d, ok := dampedStep(a, g, lambda)
		if !ok {
			return ReasonBadGeometry
		}
		nx := x.add(Vec{d[0], d[1], d[2]})
		nb := b + d[3]
		nc := sv.cost(p, nx, nb, m)
		if nc > cost && math.Abs(nc-cost) > 1e-12*cost {
			lambda *= 10
			if lambda > 1e8 {
				break
			}
			continue
		}
		x, b, cost = nx, nb, nc
		lambda = math.Max(lambda/10, 1e-7)
		if d[0]*d[0]+d[1]*d[1]+d[2]*d[2] < 1e-4 {
			break
		}
	}
	return sv.finish(p, x, b, m, cost, mask, f)
}

// load copies the selected receptions' ranges, weights and sensor
// positions into the scratch arrays and returns how many there are.
func (sv *Solver) load(p *Problem, mask uint32) int {
	m := 0
	for i := range p.M {
		if i >= MaxReceptions {
			break
		}
		if mask&(1<<i) == 0 {
			continue
		}
		s := p.M[i].Sigma
		if s <= 0 {
			s = sv.cfg.Sigma
		}
		sv.r[m] = p.M[i].T * CAir
		sv.w[m] = 1 / (s * CAir * s * CAir)
		sv.s[m] = p.M[i].Sensor
		m++
	}
	return m
}

// start is the fit's first position: the caller's, or above the
// receivers' centroid, nudged towards the first receiver to hear it.
func (sv *Solver) start(p *Problem, m int) Vec {
	if p.Start != (Vec{}) {
		return p.Start
	}
	var c Vec
	first := 0
	for i := 0; i < m; i++ {
		c = c.add(sv.s[i])
		if sv.r[i] < sv.r[first] {
			first = i
		}
	}
	c = c.scale(1 / float64(m)).add(sv.s[first]).scale(0.5)
	lat, lon, _ := Geodetic(c)
	h := 9000.0
	if p.AltSigma > 0 {
		h = p.Alt
	}
	return ECEF(lat, lon, h)
}

// bias is the weighted mean emission offset for position x.
func (sv *Solver) bias(x Vec, m int) float64 {
	var sw, sb float64
	for i := 0; i < m; i++ {
		sw += sv.w[i]
		sb += sv.w[i] * (sv.r[i] - dist(x, sv.s[i]))
	}
	return sb / sw
}

func (sv *Solver) cost(p *Problem, x Vec, b float64, m int) float64 {
	var c float64
	for i := 0; i < m; i++ {
		e := sv.r[i] - dist(x, sv.s[i]) - b
		c += sv.w[i] * e * e
	}
	if p.AltSigma > 0 {
		_, _, h := Geodetic(x)
		e := (p.Alt - h) / p.AltSigma
		c += e * e
	}
	return c
}

// normal accumulates the normal equations JᵀWJ and JᵀWe at (x, b).
func (sv *Solver) normal(p *Problem, x Vec, b float64, m int, a *[4][4]float64, g *[4]float64) {
	for i := 0; i < m; i++ {
		d := x.sub(sv.s[i])
		rho := d.norm()
		j := [4]float64{d[0] / rho, d[1] / rho, d[2] / rho, 1}
		e := sv.r[i] - rho - b
		accumulate(a, g, &j, sv.w[i], e)
	}
	if p.AltSigma > 0 {
		lat, lon, h := Geodetic(x)
		_, _, u := enuAt(lat, lon)
		j := [4]float64{u[0], u[1], u[2], 0}
		accumulate(a, g, &j, 1/(p.AltSigma*p.AltSigma), p.Alt-h)
	}
}

func accumulate(a *[4][4]float64, g *[4]float64, j *[4]float64, w, e float64) {
	for r := 0; r < 4; r++ {
		g[r] += w * j[r] * e
		for c := 0; c < 4; c++ {
			a[r][c] += w * j[r] * j[c]
		}
	}
}

// finish fills f from the converged fit and applies the geometry and
// plausibility checks.
func (sv *Solver) finish(p *Problem, x Vec, b float64, m int, cost float64, mask uint32, f *Fix) error {
	var a [4][4]float64
	var g [4]float64
	sv.normal(p, x, b, m, &a, &g)
	inv, ok := invert4(a)
	if !ok {
		return ReasonBadGeometry
	}
	lat, lon, h := Geodetic(x)
	if h < -1500 || h > 30000 || dist(x, sv.centroid(m)) > sv.cfg.MaxRangeM {
		return ReasonNoConvergence
	}
	*f = Fix{Pos: x, Lat: lat, Lon: lon, Alt: h, Used: mask, Sensors: m, Chi2: cost, EmitT: b / CAir}
	for r := 0; r < 3; r++ {
		for c := 0; c < 3; c++ {
			f.Cov[r][c] = inv[r][c]
		}
	}
	e, n, _ := enuAt(lat, lon)
	f.ErrorM = math.Sqrt(math.Max(quad(&f.Cov, e)+quad(&f.Cov, n), 0))
	f.GDOP = math.Sqrt(math.Max(inv[0][0]+inv[1][1]+inv[2][2], 0)) / (sv.cfg.Sigma * CAir)
	var ss, sw float64
	for i := 0; i < m; i++ {
		e := sv.r[i] - dist(x, sv.s[i]) - b
		ss += e * e
		sw += sv.w[i]
	}
	f.ResidualM = math.Sqrt(ss / float64(m))
	f.HDOP = f.ErrorM * math.Sqrt(sw/float64(m))
	if f.GDOP > sv.cfg.MaxGDOP || f.ErrorM > sv.cfg.MaxErrorM {
		return ReasonBadGeometry
	}
	return nil
}

func (sv *Solver) centroid(m int) Vec {
	var c Vec
	for i := 0; i < m; i++ {
		c = c.add(sv.s[i])
	}
	return c.scale(1 / float64(m))
}

// quad returns vᵀCv.
func quad(c *[3][3]float64, v Vec) float64 {
	var s float64
	for r := 0; r < 3; r++ {
		for k := 0; k < 3; k++ {
			s += v[r] * c[r][k] * v[k]
		}
	}
	return s
}

// dampedStep solves (A + λ·diag(A)) d = g by Cholesky.
func dampedStep(a [4][4]float64, g [4]float64, lambda float64) ([4]float64, bool) {
	for i := 0; i < 4; i++ {
		a[i][i] *= 1 + lambda
	}
	l, ok := cholesky4(a)
	if !ok {
		return g, false
	}
	return cholSolve4(&l, g), true
}

func cholesky4(a [4][4]float64) ([4][4]float64, bool) {
	var l [4][4]float64
	for i := 0; i < 4; i++ {
		for j := 0; j <= i; j++ {
			s := a[i][j]
			for k := 0; k < j; k++ {
				s -= l[i][k] * l[j][k]
			}
			if i == j {
				if s <= 0 || math.IsNaN(s) {
					return l, false
				}
				l[i][i] = math.Sqrt(s)
			} else {
				l[i][j] = s / l[j][j]
			}
		}
	}
	return l, true
}

func cholSolve4(l *[4][4]float64, g [4]float64) [4]float64 {
	var y, x [4]float64
	for i := 0; i < 4; i++ {
		s := g[i]
		for k := 0; k < i; k++ {
			s -= l[i][k] * y[k]
		}
		y[i] = s / l[i][i]
	}
	for i := 3; i >= 0; i-- {
		s := y[i]
		for k := i + 1; k < 4; k++ {
			s -= l[k][i] * x[k]
		}
		x[i] = s / l[i][i]
	}
	return x
}

// invert4 inverts a symmetric positive-definite 4×4 matrix.
func invert4(a [4][4]float64) ([4][4]float64, bool) {
	var inv [4][4]float64
	l, ok := cholesky4(a)
	if !ok {
		return inv, false
	}
	for c := 0; c < 4; c++ {
		var e [4]float64
		e[c] = 1
		col := cholSolve4(&l, e)
		for r := 0; r < 4; r++ {
			inv[r][c] = col[r]
		}
	}
	return inv, true
}
