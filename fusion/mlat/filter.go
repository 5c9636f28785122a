package mlat

import "math"

// Filter is a constant-velocity Kalman filter over one aircraft's fixes,
// in ECEF: state position and velocity, white-acceleration process noise,
// each fix's covariance as its measurement noise. A fix whose innovation
// is beyond the gate is refused (ReasonFilterGate); three refusals in a
// row, or a gap longer than MaxGap, restart the filter from the fix, so a
// wrong first fix cannot hold the track. The zero value is an empty
// filter; it allocates nothing.
type Filter struct {
	x       [6]float64
	p       [6][6]float64
	t       int64 // time of the state, ns
	started bool
	refused int
}

// Filter settings.
const (
	// filterAccel is the process noise's acceleration spectral density,
	// (m/s²)²·s: a manoeuvring airliner or helicopter.
	filterAccel = 4.0
	// filterGate is the χ² (3 degrees of freedom, p = 0.001) beyond which
	// a fix is refused.
	filterGate = 16.27
	// filterMaxGapNS restarts the filter after this long without a fix.
	filterMaxGapNS = 30e9
	// filterVel0 is the initial velocity standard deviation, m/s.
	filterVel0 = 300.0
)

// Update folds in fix f taken at t (ns) and returns the filtered position
// and its covariance, or ReasonFilterGate when f disagrees with the track.
func (k *Filter) Update(f *Fix, t int64) (Vec, [3][3]float64, error) {
	if !k.started || t-k.t > filterMaxGapNS || t < k.t-filterMaxGapNS {
		k.reset(f, t)
		return k.pos(), k.cov(), nil
	}
	k.predict(float64(t-k.t) * 1e-9)
	k.t = max(k.t, t)
	var s [3][3]float64
	var nu Vec
	for r := 0; r < 3; r++ {
		nu[r] = f.Pos[r] - k.x[r]
		for c := 0; c < 3; c++ {
			s[r][c] = k.p[r][c] + f.Cov[r][c]
		}
	}
	si, ok := inv3(s)
	if !ok {
		return Vec{}, s, ReasonBadGeometry
	}
	if d2 := mahalanobis(&si, nu); d2 > filterGate {
		k.refused++
		if k.refused >= 3 {
			k.reset(f, t)
			return k.pos(), k.cov(), nil
		}
		return Vec{}, s, ReasonFilterGate
	}
	k.refused = 0
	k.correct(&si, nu)
	return k.pos(), k.cov(), nil
}

// Predict returns the filter's position extrapolated to t, and whether it
// has a state (a solve's start point).
func (k *Filter) Predict(t int64) (Vec, bool) {
	if !k.started || t-k.t > filterMaxGapNS {
		return Vec{}, false
	}
	dt := float64(t-k.t) * 1e-9
	return Vec{k.x[0] + k.x[3]*dt, k.x[1] + k.x[4]*dt, k.x[2] + k.x[5]*dt}, true
}

func (k *Filter) reset(f *Fix, t int64) {
	*k = Filter{t: t, started: true}
	for r := 0; r < 3; r++ {
		k.x[r] = f.Pos[r]
		for c := 0; c < 3; c++ {
			k.p[r][c] = f.Cov[r][c]
		}
		k.p[r+3][r+3] = filterVel0 * filterVel0
	}
}

func (k *Filter) predict(dt float64) {
	if dt <= 0 {
		return
	}
	// P = F P Fᵀ + Q with F = [I dt·I; 0 I]
	for r := 0; r < 3; r++ {
		k.x[r] += k.x[r+3] * dt
	}
	var fp [6][6]float64
	for r := 0; r < 6; r++ {
		for c := 0; c < 6; c++ {
			fp[r][c] = k.p[r][c]
			if r < 3 {
				fp[r][c] += dt * k.p[r+3][c]
			}
		}
	}
	for r := 0; r < 6; r++ {
		for c := 0; c < 6; c++ {
			k.p[r][c] = fp[r][c]
			if c < 3 {
				k.p[r][c] += dt * fp[r][c+3]
			}
		}
	}
	q := filterAccel
	for i := 0; i < 3; i++ {
		k.p[i][i] += q * dt * dt * dt / 3
		k.p[i][i+3] += q * dt * dt / 2
		k.p[i+3][i] += q * dt * dt / 2
		k.p[i+3][i+3] += q * dt
	}
}

// correct applies the Kalman gain K = P Hᵀ S⁻¹ (H picks the position).
func (k *Filter) correct(si *[3][3]float64, nu Vec) {
	var g [6][3]float64
	for r := 0; r < 6; r++ {
		for c := 0; c < 3; c++ {
			for m := 0; m < 3; m++ {
				g[r][c] += k.p[r][m] * si[m][c]
			}
		}
	}
	for r := 0; r < 6; r++ {
		for c := 0; c < 3; c++ {
			k.x[r] += g[r][c] * nu[c]
		}
	}
	var np [6][6]float64
	for r := 0; r < 6; r++ {
		for c := 0; c < 6; c++ {
			v := k.p[r][c]
			for m := 0; m < 3; m++ {
				v -= g[r][m] * k.p[m][c]
			}
			np[r][c] = v
		}
	}
	k.p = np
}

func (k *Filter) pos() Vec { return Vec{k.x[0], k.x[1], k.x[2]} }

func (k *Filter) cov() [3][3]float64 {
	var c [3][3]float64
	for r := 0; r < 3; r++ {
		for m := 0; m < 3; m++ {
			c[r][m] = k.p[r][m]
		}
	}
	return c
}

func mahalanobis(si *[3][3]float64, v Vec) float64 {
	return quad(si, v)
}

// inv3 inverts a 3×3 matrix by cofactors.
func inv3(m [3][3]float64) ([3][3]float64, bool) {
	var r [3][3]float64
	r[0][0] = m[1][1]*m[2][2] - m[1][2]*m[2][1]
	r[0][1] = m[0][2]*m[2][1] - m[0][1]*m[2][2]
	r[0][2] = m[0][1]*m[1][2] - m[0][2]*m[1][1]
	r[1][0] = m[1][2]*m[2][0] - m[1][0]*m[2][2]
	r[1][1] = m[0][0]*m[2][2] - m[0][2]*m[2][0]
	r[1][2] = m[0][2]*m[1][0] - m[0][0]*m[1][2]
	r[2][0] = m[1][0]*m[2][1] - m[1][1]*m[2][0]
	r[2][1] = m[0][1]*m[2][0] - m[0][0]*m[2][1]
	r[2][2] = m[0][0]*m[1][1] - m[0][1]*m[1][0]
	det := m[0][0]*r[0][0] + m[0][1]*r[1][0] + m[0][2]*r[2][0]
	if det == 0 || math.IsNaN(det) {
		return r, false
	}
	for i := range r {
		for j := range r[i] {
			r[i][j] /= det
		}
	}
	return r, true
}
