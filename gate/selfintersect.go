package gate

import (
	"cmp"
	"fmt"
	"slices"
)

// SelfIntersection finds two edges of a polygon's rings that cross or
// touch although they are not neighbours on one ring: a self-intersecting
// exterior, a hole crossing the exterior or another hole. It returns the
// JSON paths of the two edges' first positions and whether such a pair
// exists. Rings must be closed and valid (see Validate).
//
// Edges are compared in a plane of longitude (unwrapped around the first
// position, so a polygon may cross the antimeridian) and latitude: for
// the sizes Validate allows, the great-circle edges differ from those
// segments by far less than a polygon that only nearly touches itself
// would need. A sweep over the edges sorted by their western end keeps
// the cost near n log n for ordinary polygons.
func SelfIntersection(p *Polygon) (a, b string, found bool) {
	if len(p.Coordinates) == 0 || len(p.Coordinates[0]) == 0 {
		return "", "", false
	}
	edges := polygonEdges(p)
	slices.SortFunc(edges, func(u, v polyEdge) int { return cmp.Compare(min(u.x1, u.x2), min(v.x1, v.x2)) })
	for k := range edges {
		u := &edges[k]
		uMax := max(u.x1, u.x2)
		for m := k + 1; m < len(edges) && min(edges[m].x1, edges[m].x2) <= uMax; m++ {
			v := &edges[m]
			if u.ring == v.ring && adjacent(u.i, v.i, u.n) {
				continue
			}
			if segmentsMeet(u.x1, u.y1, u.x2, u.y2, v.x1, v.y1, v.x2, v.y2) {
				e1, e2 := *u, *v
				if cmp.Or(cmp.Compare(e1.ring, e2.ring), cmp.Compare(e1.i, e2.i)) > 0 {
					e1, e2 = e2, e1
				}
				return fmt.Sprintf("coordinates[%d][%d]", e1.ring, e1.pos), fmt.Sprintf("coordinates[%d][%d]", e2.ring, e2.pos), true
			}
		}
	}
	return "", "", false
}

// polyEdge is one edge of a ring in the unwrapped plane.
type polyEdge struct {
	ring, i, n     int // ring, edge number, edges in the ring
	x1, y1, x2, y2 float64
	pos            int // index of the edge's first position in the ring
}

// polygonEdges lists the edges of every ring, longitudes unwrapped around
// the first position.
func polygonEdges(p *Polygon) []polyEdge {
	lon0 := p.Coordinates[0][0][0]
	var edges []polyEdge
	for r, ring := range p.Coordinates {
		// A repeated position is not an edge: keep the positions that
		// differ from their predecessor, so that neighbours stay adjacent.
		keep := make([]int, 0, len(ring))
		for i := range ring {
			if i == 0 || ring[i][0] != ring[i-1][0] || ring[i][1] != ring[i-1][1] {
				keep = append(keep, i)
			}
		}
		n := len(keep) - 1
		for k := 0; k < n; k++ {
			i, j := keep[k], keep[k+1]
			edges = append(edges, polyEdge{r, k, n, unwrap(ring[i][0], lon0), ring[i][1], unwrap(ring[j][0], lon0), ring[j][1], i})
		}
	}
	return edges
}

// adjacent reports whether edges i and j of a closed ring of n edges share
// a position.
func adjacent(i, j, n int) bool {
	d := i - j
	if d < 0 {
		d = -d
	}
	return d <= 1 || d == n-1
}

// unwrap puts lon within 180° of ref.
func unwrap(lon, ref float64) float64 {
	for lon-ref > 180 {
		lon -= 360
	}
	for lon-ref < -180 {
		lon += 360
	}
	return lon
}

// segmentsMeet reports whether the closed segments p1p2 and p3p4 share a
// point.
func segmentsMeet(x1, y1, x2, y2, x3, y3, x4, y4 float64) bool {
	d1 := orient(x3, y3, x4, y4, x1, y1)
	d2 := orient(x3, y3, x4, y4, x2, y2)
	d3 := orient(x1, y1, x2, y2, x3, y3)
	d4 := orient(x1, y1, x2, y2, x4, y4)
	if opposite(d1, d2) && opposite(d3, d4) {
		return true
	}
	return (d1 == 0 && within(x3, y3, x4, y4, x1, y1)) || (d2 == 0 && within(x3, y3, x4, y4, x2, y2)) ||
		(d3 == 0 && within(x1, y1, x2, y2, x3, y3)) || (d4 == 0 && within(x1, y1, x2, y2, x4, y4))
}

// opposite reports whether a and b have strictly opposite signs.
func opposite(a, b float64) bool { return (a > 0 && b < 0) || (a < 0 && b > 0) }

func orient(ax, ay, bx, by, cx, cy float64) float64 {
	return (bx-ax)*(cy-ay) - (by-ay)*(cx-ax)
}

// within reports whether c, collinear with ab, lies on the segment ab.
func within(ax, ay, bx, by, cx, cy float64) bool {
	return min(ax, bx) <= cx && cx <= max(ax, bx) && min(ay, by) <= cy && cy <= max(ay, by)
}
