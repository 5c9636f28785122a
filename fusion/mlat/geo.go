package mlat

import "math"

// WGS-84 ellipsoid.
const (
	wgsA  = 6378137.0
	wgsF  = 1 / 298.257223563
	wgsB  = wgsA * (1 - wgsF)
	wgsE2 = wgsF * (2 - wgsF)
	wgsEP = wgsE2 / (1 - wgsE2) // second eccentricity squared
)

// CAir is the speed of radio waves in the lower atmosphere (refractive
// index 1.0003, as mlat-server assumes), in metres per second.
const CAir = 299792458.0 / 1.0003

// Vec is a point or direction in ECEF coordinates, metres.
type Vec [3]float64

func (a Vec) sub(b Vec) Vec       { return Vec{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func (a Vec) add(b Vec) Vec       { return Vec{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }
func (a Vec) scale(k float64) Vec { return Vec{a[0] * k, a[1] * k, a[2] * k} }
func (a Vec) dot(b Vec) float64   { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }
func (a Vec) norm() float64       { return math.Sqrt(a.dot(a)) }
func dist(a, b Vec) float64       { return a.sub(b).norm() }

// Distance is the straight-line distance between two points, metres.
func Distance(a, b Vec) float64 { return dist(a, b) }

// ECEF converts a geodetic position (degrees, metres above the WGS-84
// ellipsoid) to ECEF.
func ECEF(latDeg, lonDeg, h float64) Vec {
	lat, lon := latDeg*math.Pi/180, lonDeg*math.Pi/180
	sl, cl := math.Sincos(lat)
	so, co := math.Sincos(lon)
	n := wgsA / math.Sqrt(1-wgsE2*sl*sl)
	return Vec{(n + h) * cl * co, (n + h) * cl * so, (n*(1-wgsE2) + h) * sl}
}

// Geodetic converts ECEF to latitude and longitude in degrees and height
// above the ellipsoid in metres (Bowring's method, sub-millimetre for
// aircraft heights).
func Geodetic(p Vec) (latDeg, lonDeg, h float64) {
	x, y, z := p[0], p[1], p[2]
	r := math.Hypot(x, y)
	th := math.Atan2(z*wgsA, r*wgsB)
	st, ct := math.Sincos(th)
	lat := math.Atan2(z+wgsEP*wgsB*st*st*st, r-wgsE2*wgsA*ct*ct*ct)
	lon := math.Atan2(y, x)
	sl, cl := math.Sincos(lat)
	n := wgsA / math.Sqrt(1-wgsE2*sl*sl)
	if math.Abs(cl) > 1e-9 {
		h = r/cl - n
	} else {
		h = math.Abs(z) - wgsB
	}
	return lat * 180 / math.Pi, lon * 180 / math.Pi, h
}

// enu returns the local east, north and up unit vectors at p.
func enu(p Vec) (e, n, u Vec) {
	lat, lon, _ := Geodetic(p)
	return enuAt(lat, lon)
}

func enuAt(latDeg, lonDeg float64) (e, n, u Vec) {
	sl, cl := math.Sincos(latDeg * math.Pi / 180)
	so, co := math.Sincos(lonDeg * math.Pi / 180)
	return Vec{-so, co, 0}, Vec{-sl * co, -sl * so, cl}, Vec{cl * co, cl * so, sl}
}

// Horizontal returns the horizontal distance in metres between two ECEF
// points, measured in the local plane at a.
func Horizontal(a, b Vec) float64 {
	e, n, _ := enu(a)
	d := b.sub(a)
	return math.Hypot(d.dot(e), d.dot(n))
}

// GroundVelocity is the ECEF velocity, m/s, of a transmitter at (latDeg,
// lonDeg) moving horizontally at speedMps along trackDeg (degrees
// clockwise from true north): an ADS-B airborne velocity's ground speed
// and track, for LearnMoving.
func GroundVelocity(latDeg, lonDeg, speedMps, trackDeg float64) Vec {
	e, n, _ := enuAt(latDeg, lonDeg)
	s, c := math.Sincos(trackDeg * math.Pi / 180)
	return e.scale(speedMps * s).add(n.scale(speedMps * c))
}
