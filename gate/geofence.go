package gate

import (
	"fmt"
	"math"
	"regexp"
)

// Class is the kind of site a geofence protects; it sets the default zone
// sensitivity.
type Class string

// The geofence classes.
const (
	ClassAirport                Class = "airport"
	ClassPrison                 Class = "prison"
	ClassStadium                Class = "stadium"
	ClassCriticalInfrastructure Class = "critical-infrastructure"
	ClassMilitary               Class = "military"
	ClassEvent                  Class = "event"
	ClassGeneric                Class = "generic"
)

// Classes lists every geofence class, in the order the API documents them.
var Classes = [...]Class{ClassAirport, ClassPrison, ClassStadium, ClassCriticalInfrastructure,
	ClassMilitary, ClassEvent, ClassGeneric}

// classSensitivity is the default sensitivity of each class. The order
// follows the consequence of an intrusion: aviation safety and military
// sites first, then infrastructure, custody, crowds.
func classSensitivity(c Class) (float64, bool) {
	switch c {
	case ClassAirport, ClassMilitary:
		return 1.0, true
	case ClassCriticalInfrastructure:
		return 0.9, true
	case ClassPrison:
		return 0.8, true
	case ClassStadium, ClassEvent:
		return 0.7, true
	case ClassGeneric:
		return 0.5, true
	}
	return 0.5, false
}

// Limits on geofences, chosen to keep evaluation cheap and the geometry
// inside the range where the spherical formulas here are exact.
const (
	MaxRadiusM        = 1_000_000 // a circle's radius; larger is not a geofence
	MaxPolygonExtentM = 1_000_000 // every vertex within this of the first vertex
	MaxPolygonPoints  = 10_000    // positions over all rings
	MaxNameLen        = 200
)

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidID reports whether id can name a geofence: 1 to 64 characters from
// A-Z, a-z, 0-9, '_' and '-' (the characters that are safe in a URL path
// segment and a NATS KV key).
func ValidID(id string) bool { return idPattern.MatchString(id) }

// Geofence is a protected volume: a circle (Center and RadiusM) or a GeoJSON
// polygon, optionally limited to an altitude band, with a class and a
// sensitivity that weigh how grave an intrusion is. Exactly one of the
// circle and the polygon is set; Validate checks that and every range.
type Geofence struct {
	// ID names the geofence in the store; evaluation ignores it.
	ID   string `json:"id,omitempty" yaml:"id,omitempty"`
	Name string `json:"name,omitempty" yaml:"name,omitempty"`
	// Class defaults to generic.
	Class Class `json:"class,omitempty" yaml:"class,omitempty"`
	// Sensitivity in [0, 1] overrides the class default.
	Sensitivity *float64 `json:"sensitivity,omitempty" yaml:"sensitivity,omitempty"`
	// Center is [lat, lon] in degrees (the interface contract's order, docs/INTERFACE.md, not GeoJSON's).
	Center []float64 `json:"center,omitempty" yaml:"center,omitempty"`
	// RadiusM is the circle's radius in metres, in (0, MaxRadiusM].
	RadiusM float64 `json:"radius_m,omitempty" yaml:"radius_m,omitempty"`
	// Polygon is a GeoJSON Polygon geometry (RFC 7946): positions are
	// [lon, lat], rings are closed, the first ring is the exterior and
	// later rings are holes. Edges are taken as great-circle arcs.
	Polygon *Polygon `json:"polygon,omitempty" yaml:"polygon,omitempty"`
	// FloorM and CeilingM bound the protected volume vertically, in the
	// same datum as the tracks' alt_m. Nil means unbounded.
	FloorM   *float64 `json:"floor_m,omitempty" yaml:"floor_m,omitempty"`
	CeilingM *float64 `json:"ceiling_m,omitempty" yaml:"ceiling_m,omitempty"`

	// shape is the polygon's index, set by Prepare.
	shape *polyShape
}

// Polygon is a GeoJSON Polygon geometry object.
type Polygon struct {
	Type        string        `json:"type" yaml:"type"`
	Coordinates [][][]float64 `json:"coordinates" yaml:"coordinates"`
}

// IsCircle reports whether g is a circle rather than a polygon.
func (g *Geofence) IsCircle() bool { return g.Polygon == nil }

// Validate checks g and returns an *Error naming every invalid field, or
// nil. It does not require an ID; the store does.
func (g *Geofence) Validate() error {
	var e Error
	g.validate(&e, "")
	return e.orNil()
}

func (g *Geofence) validate(e *Error, prefix string) {
	if g.ID != "" && !ValidID(g.ID) {
		e.add(prefix, "id", "must be 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-'")
	}
	if len(g.Name) > MaxNameLen {
		e.add(prefix, "name", fmt.Sprintf("must be at most %d bytes", MaxNameLen))
	}
	if g.Class != "" {
		if _, ok := classSensitivity(g.Class); !ok {
			e.add(prefix, "class", "must be one of airport, prison, stadium, critical-infrastructure, military, event, generic")
		}
	}
	if s := g.Sensitivity; s != nil && !(finite(*s) && *s >= 0 && *s <= 1) {
		e.add(prefix, "sensitivity", "must be a number in [0, 1]")
	}
	circle := g.Center != nil || g.RadiusM != 0
	switch {
	case circle && g.Polygon != nil:
		e.add(prefix, "polygon", "give either center and radius_m (a circle) or polygon, not both")
	case g.Polygon != nil:
		validatePolygon(e, join(prefix, "polygon"), g.Polygon)
	default:
		g.validateCircle(e, prefix)
	}
	g.validateHeights(e, prefix)
}

// validateCircle checks the center and radius of a circular geofence.
func (g *Geofence) validateCircle(e *Error, prefix string) {
	switch {
	case g.Center == nil:
		e.add(prefix, "center", "is required: [lat, lon] in degrees")
	case len(g.Center) != 2:
		e.add(prefix, "center", "must be an array of exactly 2 numbers [lat, lon]")
	default:
		validLat(e, join(prefix, "center"), "[0]", g.Center[0])
		validLon(e, join(prefix, "center"), "[1]", g.Center[1])
	}
	if !(finite(g.RadiusM) && g.RadiusM > 0 && g.RadiusM <= MaxRadiusM) {
		e.add(prefix, "radius_m", "must be a number in (0, 1000000] metres")
	}
}

// validateHeights checks the optional floor and ceiling, the floor below
// the ceiling.
func (g *Geofence) validateHeights(e *Error, prefix string) {
	for _, f := range []struct {
		name string
		v    *float64
	}{{"floor_m", g.FloorM}, {"ceiling_m", g.CeilingM}} {
		if f.v != nil && !finite(*f.v) {
			e.add(prefix, f.name, "must be a finite number of metres")
		}
	}
	if g.FloorM != nil && g.CeilingM != nil && finite(*g.FloorM) && finite(*g.CeilingM) && *g.FloorM >= *g.CeilingM {
		e.add(prefix, "ceiling_m", "must be above floor_m")
	}
}

func validatePolygon(e *Error, prefix string, p *Polygon) {
	if p.Type != "Polygon" {
		e.add(prefix, "type", `must be "Polygon"`)
	}
	if len(p.Coordinates) == 0 {
		e.add(prefix, "coordinates", "must hold at least the exterior ring")
		return
	}
	n0 := len(e.Fields)
	total := 0
	var first Point
	for r, ring := range p.Coordinates {
		rp := fmt.Sprintf("%s.coordinates[%d]", prefix, r)
		total += len(ring)
		if len(ring) < 4 {
			e.add(rp, "", "a linear ring needs at least 4 positions (3 corners and the closing repeat of the first)")
			continue
		}
		if validRingPositions(e, rp, r == 0, ring, &first) {
			validRingShape(e, rp, ring)
		}
	}
	if total > MaxPolygonPoints {
		e.add(prefix, "coordinates", fmt.Sprintf("at most %d positions in all", MaxPolygonPoints))
	}
	checkSimple(e, prefix, p, n0)
}

// validRingPositions checks every position of a ring and that each lies
// within MaxPolygonExtentM of the exterior ring's first position, which it
// records in *first while checking the exterior ring. It reports whether
// all of them were valid.
func validRingPositions(e *Error, rp string, exterior bool, ring [][]float64, first *Point) bool {
	ok := true
	for i, pos := range ring {
		pp := fmt.Sprintf("%s[%d]", rp, i)
		pt, valid := validPosition(e, pp, pos)
		if !valid {
			ok = false
			continue
		}
		if exterior && i == 0 {
			*first = pt
		} else if Distance(*first, pt) > MaxPolygonExtentM {
			e.add(pp, "", "every position must lie within 1,000 km of the exterior ring's first position")
			ok = false
		}
	}
	return ok
}

// validPosition checks one GeoJSON position, [lon, lat] or [lon, lat, alt],
// and returns it as a Point when its longitude and latitude are valid.
func validPosition(e *Error, pp string, pos []float64) (Point, bool) {
	if len(pos) < 2 || len(pos) > 3 {
		e.add(pp, "", "a position must be [lon, lat] or [lon, lat, alt]")
		return Point{}, false
	}
	okLon := validLon(e, pp, "[0]", pos[0])
	okLat := validLat(e, pp, "[1]", pos[1])
	if len(pos) == 3 && !finite(pos[2]) {
		e.add(pp, "[2]", "must be a finite number")
	}
	if !okLon || !okLat {
		return Point{}, false
	}
	return Point{Lat: pos[1], Lon: pos[0]}, true
}

// validRingShape checks that a ring of valid positions is closed and has
// at least 3 distinct corners.
func validRingShape(e *Error, rp string, ring [][]float64) {
	a, z := ring[0], ring[len(ring)-1]
	if a[0] != z[0] || a[1] != z[1] {
		e.add(rp, "", "a linear ring must be closed: the last position must equal the first")
		return
	}
	if distinctCorners(ring) < 3 {
		e.add(rp, "", "a linear ring needs at least 3 distinct corners")
	}
}

// checkSimple rejects a polygon whose rings cross or touch (issue 23): its
// inside is ambiguous. It runs only on rings that were otherwise valid
// (no field error since n0).
func checkSimple(e *Error, prefix string, p *Polygon, n0 int) {
	if len(e.Fields) != n0 {
		return
	}
	if a, b, bad := SelfIntersection(p); bad {
		e.add(prefix, "coordinates", fmt.Sprintf("the polygon intersects itself: the edge from %s meets the edge from %s", a, b))
	}
}

func distinctCorners(ring [][]float64) int {
	n := 0
	for i := 0; i < len(ring)-1 && n < 3; i++ {
		dup := false
		for j := 0; j < i; j++ {
			if ring[i][0] == ring[j][0] && ring[i][1] == ring[j][1] {
				dup = true
				break
			}
		}
		if !dup {
			n++
		}
	}
	return n
}

func validLat(e *Error, prefix, field string, v float64) bool {
	if !(finite(v) && v >= -90 && v <= 90) {
		e.add(prefix, field, "latitude must be a number in [-90, 90]")
		return false
	}
	return true
}

func validLon(e *Error, prefix, field string, v float64) bool {
	if !(finite(v) && v >= -180 && v <= 180) {
		e.add(prefix, field, "longitude must be a number in [-180, 180]")
		return false
	}
	return true
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Centre returns the circle's centre, or the polygon's centroid: the
// normalised mean of the exterior ring's corners as unit vectors, which is
// well defined across the antimeridian.
func (g *Geofence) Centre() Point {
	if g.IsCircle() {
		if len(g.Center) != 2 {
			return Point{}
		}
		return Point{Lat: g.Center[0], Lon: g.Center[1]}
	}
	c := g.centroid()
	return Point{Lat: math.Atan2(c.z, math.Hypot(c.x, c.y)) * rad, Lon: math.Atan2(c.y, c.x) * rad}
}

// centroid is the polygon's centroid as a unit vector.
func (g *Geofence) centroid() vec {
	if ps := g.prepared(); ps != nil {
		return ps.centroid
	}
	var s vec
	if len(g.Polygon.Coordinates) == 0 {
		return vec{1, 0, 0}
	}
	ring := g.Polygon.Coordinates[0]
	for i := 0; i < len(ring)-1; i++ {
		v := toVec(ring[i][1], ring[i][0])
		s = vec{s.x + v.x, s.y + v.y, s.z + v.z}
	}
	n := s.norm()
	if n == 0 {
		return vec{1, 0, 0}
	}
	return vec{s.x / n, s.y / n, s.z / n}
}

// ScaleM returns the geofence's characteristic size in metres: the
// circle's radius, or the largest distance from the polygon's centroid to
// a corner of its exterior ring. Proximity decays over this length.
func (g *Geofence) ScaleM() float64 {
	if g.IsCircle() {
		return g.RadiusM
	}
	if ps := g.prepared(); ps != nil {
		return ps.scale
	}
	return g.scaleFrom(g.centroid())
}

func (g *Geofence) scaleFrom(c vec) float64 {
	best := 0.0
	if len(g.Polygon.Coordinates) == 0 {
		return 0
	}
	for _, pos := range g.Polygon.Coordinates[0] {
		best = math.Max(best, angle(c, toVec(pos[1], pos[0])))
	}
	return EarthRadiusM * best
}

// SignedDistance returns the horizontal distance in metres from p to the
// geofence's edge: negative inside, positive outside. Within
// BoundaryToleranceM of the edge the result is snapped to 0 (on the
// boundary, which counts as inside).
func (g *Geofence) SignedDistance(p Point) float64 {
	var d float64
	if g.IsCircle() {
		d = Distance(g.Centre(), p) - g.RadiusM
	} else {
		d = g.polygonSignedDistance(p)
	}
	return snap(d)
}

func snap(d float64) float64 {
	if math.Abs(d) <= BoundaryToleranceM {
		return 0
	}
	return d
}

// polygonSignedDistance applies the even-odd rule (inside the exterior
// ring and outside every hole) and measures the nearest edge of any ring.
func (g *Geofence) polygonSignedDistance(p Point) float64 {
	rings := g.Polygon.Coordinates
	if len(rings) == 0 {
		return math.Inf(1)
	}
	pv := toVec(p.Lat, p.Lon)
	east, north := tangentBasis(p.Lat, p.Lon)
	ps := g.prepared()
	inside, best := false, math.Inf(1)
	for i, ring := range rings {
		var in bool
		if x := ps.ring(i); x != nil && x.reaches(pv) {
			in, best = x.crossings(pv, east, north), x.nearest(pv, best)
		} else {
			var a float64
			in, a = ringScan(ring, pv, east, north)
			best = math.Min(best, a)
		}
		switch {
		case i == 0:
			inside = in
		case in:
			inside = false
		}
	}
	if inside {
		return -EarthRadiusM * best
	}
	return EarthRadiusM * best
}

// VerticalOutsideM returns how far altM lies outside the altitude band:
// 0 within the band (or when the geofence has none), otherwise the
// distance in metres to the nearer limit.
func (g *Geofence) VerticalOutsideM(altM float64) float64 {
	if g.FloorM != nil && altM < *g.FloorM {
		return *g.FloorM - altM
	}
	if g.CeilingM != nil && altM > *g.CeilingM {
		return altM - *g.CeilingM
	}
	return 0
}

// HasBand reports whether the geofence limits altitude.
func (g *Geofence) HasBand() bool { return g.FloorM != nil || g.CeilingM != nil }

// Bounds returns a latitude/longitude box that contains the geofence, for
// spatial indexing: south, west, north, east in degrees. A polygon is boxed
// through its bounding cap (centroid and ScaleM): a spherical cap smaller
// than a hemisphere contains every great-circle arc between its points,
// whereas the corners' own box misses the poleward bulge of the edges.
// Near a pole or across the antimeridian the box spans every longitude
// (west = -180, east = 180).
func (g *Geofence) Bounds() (south, west, north, east float64) {
	c, r := g.Centre(), g.ScaleM()
	δ := r / EarthRadiusM * rad
	south, north = math.Max(-90, c.Lat-δ), math.Min(90, c.Lat+δ)
	s := math.Sin(r/EarthRadiusM) / math.Cos(c.Lat*deg)
	if s >= 1 || south == -90 || north == 90 {
		return south, -180, north, 180
	}
	Δλ := math.Asin(s) * rad
	west, east = c.Lon-Δλ, c.Lon+Δλ
	if west < -180 || east > 180 {
		return south, -180, north, 180
	}
	return south, west, north, east
}
