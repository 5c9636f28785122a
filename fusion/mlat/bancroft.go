package mlat

import "math"

// bancroft returns the closed-form solutions (at most two) of the
// pseudorange equations c·T_i = |x − s_i| + b for four or more receptions
// (Bancroft, 1985), as fit starting points: the algebra finds both
// positions the times allow, so the least-squares fit need not guess
// which minimum to fall into. Coordinates are taken relative to the
// sensors' centroid to keep the squares well conditioned.
func bancroft(p *Problem) (sol [2]Vec, n int) {
	m := min(len(p.M), MaxReceptions)
	if m < 4 {
		return sol, 0
	}
	var c Vec
	for i := 0; i < m; i++ {
		c = c.add(p.M[i].Sensor)
	}
	c = c.scale(1 / float64(m))
	// Normal equations of B·(M y) = a + E·1, solved for the two
	// right-hand sides a and 1 at once.
	var btb [4][4]float64
	var bta, bt1 [4]float64
	for i := 0; i < m; i++ {
		s := p.M[i].Sensor.sub(c)
		rho := p.M[i].T * CAir
		row := [4]float64{s[0], s[1], s[2], rho}
		a := 0.5 * (s.dot(s) - rho*rho)
		for r := 0; r < 4; r++ {
			bta[r] += row[r] * a
			bt1[r] += row[r]
			for k := 0; k < 4; k++ {
				btb[r][k] += row[r] * row[k]
			}
		}
	}
	l, ok := cholesky4(btb)
	if !ok {
		return sol, 0
	}
	v, u := cholSolve4(&l, bta), cholSolve4(&l, bt1)
	lor := func(a, b [4]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] - a[3]*b[3] }
	qa, qb, qc := lor(u, u), 2*(lor(u, v)-1), lor(v, v)
	disc := qb*qb - 4*qa*qc
	if disc < 0 || qa == 0 {
		return sol, 0
	}
	for _, e := range []float64{(-qb + math.Sqrt(disc)) / (2 * qa), (-qb - math.Sqrt(disc)) / (2 * qa)} {
		x := Vec{v[0] + e*u[0], v[1] + e*u[1], v[2] + e*u[2]}.add(c)
		if !math.IsNaN(x[0]) && !math.IsInf(x[0], 0) {
			sol[n] = x
			n++
		}
	}
	return sol, n
}
