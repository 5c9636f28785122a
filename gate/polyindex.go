package gate

import (
	"math"
	"slices"
)

// The polygon index (issue 23): a sweep measured every track sample against
// every edge of every nearby zone, so 200 zones of 1,000 positions cost
// seconds. Geofence.Prepare builds, once per zone version, a tree of
// bounding caps over each ring's edges. Polygon edges come in order and
// neighbouring edges lie near each other, so consecutive runs of edges
// make tight caps without sorting. A query visits only the caps that can
// matter and evaluates, on the edges of the leaves it reaches, exactly the
// per-edge arithmetic of ringScan; every cap it skips is proven, with a
// margin far above rounding, not to hold an edge that could change the
// answer. The index therefore returns ringScan's result bit for bit.
const (
	// fanout is the number of edges of a leaf and of children of a node.
	fanout = 8
	// minIndexedEdges: a ring with fewer edges is scanned linearly; the
	// tree would not pay for itself.
	minIndexedEdges = 32
	// maxIndexedCapRad bounds the root cap of an indexed ring (Validate
	// keeps rings within 1,000 km, about 0.16 rad, of their first position).
	maxIndexedCapRad = 0.5
	// maxIndexedReachRad: the index answers for a point only when every
	// vertex lies within this angle of it, where the gnomonic projection
	// of ringScan is defined (cos > 0.26) and the error bounds below hold.
	maxIndexedReachRad = 1.3
	// maxIndexDepth bounds the traversal stack: 8⁸ edges.
	maxIndexDepth = 8
	// capMarginRad widens every cap far beyond the rounding of the angles
	// that build and test it (about 1e-15 rad).
	capMarginRad = 1e-12
	// eps is the unit roundoff of float64 arithmetic.
	eps = 0x1p-52
)

// capNode is a spherical cap holding every vertex of a run of edges, and
// therefore (a cap smaller than a hemisphere being convex) the edges'
// arcs too.
type capNode struct {
	c    vec     // centre, a unit vector
	r    float64 // radius in radians, margin included
	sinR float64 // sin(r)
	// slack bounds how far segAngle may come out below the true angle from
	// a point to any edge under this node: rounding in the normal a×b of a
	// short edge (|a×b| small) grows as eps/|a×b|. Infinite for an edge
	// too short to bound, so that its node is never pruned.
	slack float64
}

// ringIndex is the cap tree of one ring.
type ringIndex struct {
	v []vec // v[i] is ring[i] as toVec makes it
	// levels[0] are the leaves: leaf j holds edges j*fanout … (j+1)*fanout-1,
	// edge e running from v[e] to v[e+1]. Node j of levels[k] holds nodes
	// j*fanout … of levels[k-1]. The last level is the root alone.
	levels [][]capNode
}

// polyShape is what Prepare computes once for a polygon geofence.
type polyShape struct {
	poly     *Polygon // the polygon it describes; another one is not indexed
	centroid vec
	scale    float64
	rings    []*ringIndex // nil for a ring scanned linearly
}

// Prepare computes, once, the polygon's centroid and scale and a spatial
// index of each ring's edges, so that SignedDistance, Centre, ScaleM,
// Bounds and Evaluate cost about log n instead of n for a ring of n
// positions, with results bit for bit equal to those of an unprepared
// geofence. Call it on a valid geofence before sharing it read-only (the
// zone store prepares every version it keeps); the index is shared by
// copies of g. A geofence whose Polygon is replaced afterwards is scanned
// linearly; its coordinates must not be modified in place.
func (g *Geofence) Prepare() {
	if g.Polygon == nil || len(g.Polygon.Coordinates) == 0 || g.prepared() != nil {
		return
	}
	c := g.centroid()
	s := &polyShape{poly: g.Polygon, centroid: c, scale: g.scaleFrom(c)}
	for _, ring := range g.Polygon.Coordinates {
		s.rings = append(s.rings, newRingIndex(ring))
	}
	g.shape = s
}

// Prepared reports whether g carries Prepare's index for its current
// polygon (one of at least one ring of 32 edges or more).
func (g *Geofence) Prepared() bool {
	s := g.prepared()
	return s != nil && slices.ContainsFunc(s.rings, func(r *ringIndex) bool { return r != nil })
}

// prepared returns g's index when it describes g's current polygon.
func (g *Geofence) prepared() *polyShape {
	if s := g.shape; s != nil && s.poly == g.Polygon {
		return s
	}
	return nil
}

// newRingIndex builds the cap tree of a ring, or returns nil when the ring
// is better (or only correctly) scanned linearly.
func newRingIndex(ring [][]float64) *ringIndex {
	m := len(ring) - 1
	if m < minIndexedEdges {
		return nil
	}
	v := make([]vec, len(ring))
	for i, pos := range ring {
		if len(pos) < 2 {
			return nil
		}
		v[i] = toVec(pos[1], pos[0])
	}
	leaves := make([]capNode, (m+fanout-1)/fanout)
	for j := range leaves {
		leaves[j] = leafCap(v[j*fanout : min(m, (j+1)*fanout)+1])
	}
	levels := [][]capNode{leaves}
	for top := leaves; len(top) > 1; top = levels[len(levels)-1] {
		next := make([]capNode, (len(top)+fanout-1)/fanout)
		for j := range next {
			next[j] = parentCap(top[j*fanout : min(len(top), (j+1)*fanout)])
		}
		levels = append(levels, next)
	}
	if root := levels[len(levels)-1][0]; !(root.r <= maxIndexedCapRad) || len(levels) > maxIndexDepth {
		return nil
	}
	return &ringIndex{v: v, levels: levels}
}

// leafCap is the cap of the vertices vs (the edges between neighbours).
func leafCap(vs []vec) capNode {
	var s vec
	for _, p := range vs {
		s = vec{s.x + p.x, s.y + p.y, s.z + p.z}
	}
	n := capNode{c: unit(s)}
	for i, p := range vs {
		n.r = math.Max(n.r, angle(n.c, p))
		if i > 0 {
			n.slack = math.Max(n.slack, segSlack(vs[i-1], p))
		}
	}
	n.r += capMarginRad
	n.sinR = math.Sin(n.r)
	return n
}

// parentCap is a cap holding the caps cs.
func parentCap(cs []capNode) capNode {
	var s vec
	for i := range cs {
		s = vec{s.x + cs[i].c.x, s.y + cs[i].c.y, s.z + cs[i].c.z}
	}
	n := capNode{c: unit(s)}
	for i := range cs {
		n.r = math.Max(n.r, angle(n.c, cs[i].c)+cs[i].r)
		n.slack = math.Max(n.slack, cs[i].slack)
	}
	n.r += capMarginRad
	n.sinR = math.Sin(n.r)
	return n
}

// unit returns s scaled to length 1; a zero s (vertices cancelling out)
// gives a cap of radius π, which fails the root check.
func unit(s vec) vec {
	l := s.norm()
	if l == 0 || math.IsNaN(l) {
		return vec{math.NaN(), math.NaN(), math.NaN()}
	}
	return vec{s.x / l, s.y / l, s.z / l}
}

// segSlack bounds how far segAngle(p, a, b) may fall below the true angle
// from p to the arc from a to b, for any p within maxIndexedReachRad. With
// |a×b| = nn the normal carries an absolute rounding of a few eps, so the
// cross-track sine and the on-arc tests are off by about 12·eps/nn, and
// asin amplifies that at most 1/cos(1.3) ≈ 3.7 times: 256·eps/nn covers
// it fivefold. Below nn = 1e-15 segAngle measures to a alone, which is
// exact; an edge between 1e-15 and 1e-9 (shorter than 6 mm) is not
// bounded, and the nodes above it are never pruned.
func segSlack(a, b vec) float64 {
	nn := a.cross(b).norm()
	switch {
	case nn < 1e-15:
		return capMarginRad
	case nn < 1e-9:
		return math.Inf(1)
	}
	return 256*eps/nn + capMarginRad
}

// reaches reports whether p is near enough to every vertex for scan.
func (x *ringIndex) reaches(p vec) bool {
	root := &x.levels[len(x.levels)-1][0]
	return angle(p, root.c)+root.r <= maxIndexedReachRad
}

// nodeRef names a node of the tree: its level and its index there.
type nodeRef struct{ level, j int32 }

// children returns the range of nodes (or, at level 0, edges) under n.
func (x *ringIndex) children(n nodeRef) (lo, hi int) {
	below := len(x.v) - 1
	if n.level > 0 {
		below = len(x.levels[n.level-1])
	}
	return int(n.j) * fanout, min(below, int(n.j+1)*fanout)
}

// crossings is the parity of the edges ringScan's ray test counts: only
// the caps that the plane through p and east (normal north) cuts can hold
// an edge whose ends lie on both sides of it, and y > 0 in ringScan is
// v·north > 0.
func (x *ringIndex) crossings(p, east, north vec) (inside bool) {
	var stack [fanout * maxIndexDepth]nodeRef
	stack[0] = nodeRef{int32(len(x.levels) - 1), 0}
	for sp := 1; sp > 0; {
		sp--
		n := stack[sp]
		if c := &x.levels[n.level][n.j]; math.Abs(c.c.dot(north)) > c.sinR+capMarginRad {
			continue
		}
		lo, hi := x.children(n)
		if n.level > 0 {
			for j := lo; j < hi; j++ {
				stack[sp] = nodeRef{n.level - 1, int32(j)}
				sp++
			}
			continue
		}
		for e := lo; e < hi; e++ {
			_, px, py := project(x.v[e], p, east, north)
			_, qx, qy := project(x.v[e+1], p, east, north)
			if crossesRay(px, py, qx, qy) {
				inside = !inside
			}
		}
	}
	return inside
}

// nearest returns the smaller of best and the least segAngle from p to an
// edge of the ring, visiting the nearest caps first and skipping every cap
// whose lower bound (centre distance − radius − slack) is not below the
// best so far: each of its edges' segAngle is then greater than best.
func (x *ringIndex) nearest(p vec, best float64) float64 {
	var stack [fanout * maxIndexDepth]nodeRef
	var bound [fanout * maxIndexDepth]float64
	stack[0] = nodeRef{int32(len(x.levels) - 1), 0}
	bound[0] = x.lowerBound(stack[0], p)
	for sp := 1; sp > 0; {
		sp--
		n := stack[sp]
		if bound[sp] >= best {
			continue
		}
		lo, hi := x.children(n)
		if n.level == 0 {
			for e := lo; e < hi; e++ {
				best = math.Min(best, segAngle(p, x.v[e], x.v[e+1]))
			}
			continue
		}
		base := sp
		for j := lo; j < hi; j++ {
			c := nodeRef{n.level - 1, int32(j)}
			sp = pushByBound(stack[:], bound[:], base, sp, c, x.lowerBound(c, p))
		}
	}
	return best
}

// lowerBound is a lower bound on segAngle from p to any edge under n.
func (x *ringIndex) lowerBound(n nodeRef, p vec) float64 {
	c := &x.levels[n.level][n.j]
	return angle(p, c.c) - c.r - c.slack
}

// pushByBound pushes c onto the stack above base keeping the entries from
// base up sorted by decreasing bound, so that the nearest is popped first,
// and returns the new stack size.
func pushByBound(stack []nodeRef, bound []float64, base, sp int, c nodeRef, b float64) int {
	i := sp
	for i > base && bound[i-1] < b {
		stack[i], bound[i] = stack[i-1], bound[i-1]
		i--
	}
	stack[i], bound[i] = c, b
	return sp + 1
}

// project is ringScan's gnomonic projection of v about p: the cosine of
// their angle and the coordinates along east and north.
func project(v, p, east, north vec) (c, x, y float64) {
	c = p.dot(v)
	return c, v.dot(east) / c, v.dot(north) / c
}

// crossesRay reports whether the projected edge from (px, py) to (x, y)
// crosses the ray from the origin along +x, counting an end on the axis
// with the points below it (the even-odd rule's half-open convention).
func crossesRay(px, py, x, y float64) bool {
	// Where the edge crosses the x axis; the ray runs along +x.
	return (py > 0) != (y > 0) && px+(0-py)*(x-px)/(y-py) > 0
}

// ring returns the index of ring i, or nil when it is scanned linearly
// (also for a nil s: an unprepared geofence).
func (s *polyShape) ring(i int) *ringIndex {
	if s == nil || i >= len(s.rings) {
		return nil
	}
	return s.rings[i]
}
