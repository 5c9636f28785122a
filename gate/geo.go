package gate

import "math"

// EarthRadiusM is the mean Earth radius R₁ = (2a + b)/3 of the WGS-84
// ellipsoid, in metres, used by every great-circle computation here. A
// sphere is accurate to about 0.3 % against the ellipsoid, which is far
// below the uncertainty of a broadcast position claim.
const EarthRadiusM = 6371008.8

// BoundaryToleranceM is how close to a geofence edge a point must be to
// count as on the boundary. On the boundary is inside (a breach); the
// tolerance absorbs floating-point rounding so that a point placed exactly
// on the edge by a published distance is not reported outside by 1e-9 m.
const BoundaryToleranceM = 0.001

const (
	deg = math.Pi / 180
	rad = 180 / math.Pi
)

// Point is a position on the sphere in degrees: latitude north positive,
// longitude east positive.
type Point struct {
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
}

// Distance returns the great-circle (haversine) distance between a and b in
// metres.
func Distance(a, b Point) float64 {
	return EarthRadiusM * centralAngle(a, b)
}

// centralAngle is the haversine formula: the angle subtended at the centre
// of the sphere, in radians. The atan2 form stays accurate for both tiny
// and near-antipodal separations.
func centralAngle(a, b Point) float64 {
	φ1, φ2 := a.Lat*deg, b.Lat*deg
	sΔφ := math.Sin((φ2 - φ1) / 2)
	sΔλ := math.Sin((b.Lon - a.Lon) * deg / 2)
	h := sΔφ*sΔφ + math.Cos(φ1)*math.Cos(φ2)*sΔλ*sΔλ
	h = math.Min(1, math.Max(0, h))
	return 2 * math.Atan2(math.Sqrt(h), math.Sqrt(1-h))
}

// Bearing returns the initial great-circle bearing from a to b in degrees
// clockwise from true north, in [0, 360). Coincident points give 0.
func Bearing(a, b Point) float64 {
	return normDeg(bearingRad(a, b) * rad)
}

// bearingRad is the initial bearing in radians in (-π, π].
func bearingRad(a, b Point) float64 {
	φ1, φ2 := a.Lat*deg, b.Lat*deg
	Δλ := (b.Lon - a.Lon) * deg
	y := math.Sin(Δλ) * math.Cos(φ2)
	x := math.Cos(φ1)*math.Sin(φ2) - math.Sin(φ1)*math.Cos(φ2)*math.Cos(Δλ)
	return math.Atan2(y, x)
}

// Destination returns the point reached from p by travelling distM metres
// along the great circle that starts on bearingDeg.
func Destination(p Point, distM, bearingDeg float64) Point {
	δ := distM / EarthRadiusM
	θ := bearingDeg * deg
	φ1, λ1 := p.Lat*deg, p.Lon*deg
	sφ2 := math.Sin(φ1)*math.Cos(δ) + math.Cos(φ1)*math.Sin(δ)*math.Cos(θ)
	φ2 := math.Asin(math.Min(1, math.Max(-1, sφ2)))
	λ2 := λ1 + math.Atan2(math.Sin(θ)*math.Sin(δ)*math.Cos(φ1), math.Cos(δ)-math.Sin(φ1)*sφ2)
	return Point{Lat: φ2 * rad, Lon: normLon(λ2 * rad)}
}

// CrossTrackDistance returns the signed distance in metres from p to the
// great circle through a and b: positive to the right of the direction of
// travel from a to b, negative to the left.
func CrossTrackDistance(p, a, b Point) float64 {
	δ13 := centralAngle(a, p)
	θ13 := bearingRad(a, p)
	θ12 := bearingRad(a, b)
	return EarthRadiusM * math.Asin(math.Min(1, math.Max(-1, math.Sin(δ13)*math.Sin(θ13-θ12))))
}

// DistanceToSegment returns the shortest great-circle distance in metres
// from p to the minor arc from a to b: the cross-track distance when the
// foot of the perpendicular falls on the arc, otherwise the distance to the
// nearer end.
func DistanceToSegment(p, a, b Point) float64 {
	return EarthRadiusM * segAngle(toVec(p.Lat, p.Lon), toVec(a.Lat, a.Lon), toVec(b.Lat, b.Lon))
}

// normDeg maps an angle in degrees to [0, 360).
func normDeg(d float64) float64 {
	d = math.Mod(d, 360)
	if d < 0 {
		d += 360
	}
	if d >= 360 {
		d = 0
	}
	return d
}

// normLon maps a longitude in degrees to [-180, 180).
func normLon(l float64) float64 {
	return normDeg(l+180) - 180
}

// angleDiff returns the signed difference a - b in degrees in (-180, 180].
func angleDiff(a, b float64) float64 {
	d := math.Mod(a-b, 360)
	switch {
	case d > 180:
		d -= 360
	case d <= -180:
		d += 360
	}
	return d
}

// vec is a point as a unit vector from the centre of the sphere.
type vec struct{ x, y, z float64 }

func toVec(lat, lon float64) vec {
	sφ, cφ := math.Sincos(lat * deg)
	sλ, cλ := math.Sincos(lon * deg)
	return vec{cφ * cλ, cφ * sλ, sφ}
}

func (a vec) dot(b vec) float64 { return a.x*b.x + a.y*b.y + a.z*b.z }
func (a vec) cross(b vec) vec {
	return vec{a.y*b.z - a.z*b.y, a.z*b.x - a.x*b.z, a.x*b.y - a.y*b.x}
}
func (a vec) norm() float64 { return math.Sqrt(a.dot(a)) }

// angle is the central angle between two unit vectors, accurate at every
// separation (atan2 of sine and cosine rather than acos).
func angle(a, b vec) float64 { return math.Atan2(a.cross(b).norm(), a.dot(b)) }

// segAngle is the central angle from p to the nearest point of the minor
// arc from a to b. The foot of the perpendicular lies on the arc exactly
// when p is on the inner side of the planes through a and b that are
// normal to the arc's great circle.
func segAngle(p, a, b vec) float64 {
	n := a.cross(b)
	nn := n.norm()
	if nn < 1e-15 {
		return angle(a, p)
	}
	if a.cross(p).dot(n) >= 0 && p.cross(b).dot(n) >= 0 {
		return math.Abs(math.Asin(math.Min(1, math.Max(-1, p.dot(n)/nn))))
	}
	return math.Min(angle(a, p), angle(b, p))
}

// ringScan measures one closed ring of GeoJSON positions ([lon, lat, ...])
// against p in one pass: whether the ring contains p, and the central
// angle from p to the nearest edge. Edges are great-circle arcs.
//
// Containment projects the ring gnomonically about p, a projection that
// maps great circles to straight lines, so the even-odd ray test on the
// projected ring is exact for arcs. A corner 90° or more from p cannot be
// projected; since validation keeps every ring within 1,000 km, such a p is
// far outside.
func ringScan(ring [][]float64, p vec, east, north vec) (inside bool, minAngle float64) {
	minAngle = math.Inf(1)
	projectable := true
	var prev vec
	var px, py float64
	for i, pos := range ring {
		v := toVec(pos[1], pos[0])
		if i > 0 {
			minAngle = math.Min(minAngle, segAngle(p, prev, v))
		}
		prev = v
		c, x, y := project(v, p, east, north)
		if c <= 0 {
			projectable = false
		}
		if !projectable {
			continue
		}
		if i > 0 && crossesRay(px, py, x, y) {
			inside = !inside
		}
		px, py = x, y
	}
	return inside && projectable, minAngle
}

// tangentBasis returns the unit vectors pointing east and north at p.
func tangentBasis(lat, lon float64) (east, north vec) {
	sφ, cφ := math.Sincos(lat * deg)
	sλ, cλ := math.Sincos(lon * deg)
	return vec{-sλ, cλ, 0}, vec{-sφ * cλ, -sφ * sλ, cφ}
}

// InBBox reports whether lat, lon lies in the box bb (min lon, min lat,
// max lon, max lat; edges inside). A box whose min lon is greater than its
// max lon crosses the antimeridian (RFC 7946 §5.2): it holds min lon…180
// and -180…max lon. The live track filter and the history's area queries
// both read boxes so.
func InBBox(bb *[4]float64, lat, lon float64) bool {
	if lat < bb[1] || lat > bb[3] {
		return false
	}
	if bb[0] > bb[2] {
		return lon >= bb[0] || lon <= bb[2]
	}
	return lon >= bb[0] && lon <= bb[2]
}
