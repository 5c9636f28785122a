package swarm

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cuasd/cuasd/gate"
)

// Track is one position to link. Altitude and velocity are optional.
type Track struct {
	ID          string
	Lat, Lon    float64
	AltM        float64
	HasAlt      bool
	SpeedMps    float64
	HeadingDeg  float64
	HasVelocity bool
}

// Options sets the linking rule. The zero value of a field means its
// default.
type Options struct {
	// LinkM is the greatest great-circle distance of a link (default 150 m).
	LinkM float64
	// MinSize is the smallest component called a swarm (default 3).
	MinSize int
	// MaxAltDiffM, when positive, also requires two tracks that both have an
	// altitude to be within this vertical distance. A track without
	// altitude is not excluded by it: missing data never breaks a link.
	MaxAltDiffM float64
	// MaxSpeedDiffMps and MaxHeadingDiffDeg, when positive, require two
	// tracks that both have a velocity to move coherently: speeds within
	// MaxSpeedDiffMps, and headings within MaxHeadingDiffDeg unless both
	// hover (under HoverMps), where a heading means nothing.
	MaxSpeedDiffMps   float64
	MaxHeadingDiffDeg float64
	// CollectEdges asks Detect to list the links, a page of at most
	// MaxEdges of them starting at EdgeOffset.
	CollectEdges bool
	// MaxEdges bounds the links Detect lists (0: DefaultMaxEdges); the
	// answer says when more exist and where the next page starts.
	MaxEdges int
	// EdgeOffset skips that many links of the stable link order.
	EdgeOffset int
	// MaxPairTests bounds the candidate pairs (two tracks in neighbouring
	// grid cells) tested: the work of a run. Spread tracks cost a few
	// tests each; n tracks within one link distance cost n²/2, so a dense
	// input is refused rather than left to run for minutes. 0 means
	// DefaultMaxPairTests; negative means unlimited.
	MaxPairTests int
}

// Defaults and limits of Options.
const (
	DefaultLinkM   = 150.0
	DefaultMinSize = 3
	MaxLinkM       = 50_000.0
	// DefaultMaxEdges and MaxMaxEdges bound one page of links.
	DefaultMaxEdges = 10_000
	MaxMaxEdges     = 100_000
	// DefaultMaxPairTests is a fraction of a second of one core; spread
	// tracks (BenchmarkDetect100k) stay far below it.
	DefaultMaxPairTests = 30_000_000
	// HoverMps is the speed under which a heading is ignored.
	HoverMps = 1.0
)

func (o Options) withDefaults() Options {
	if o.LinkM == 0 {
		o.LinkM = DefaultLinkM
	}
	if o.MinSize == 0 {
		o.MinSize = DefaultMinSize
	}
	if o.MaxEdges == 0 {
		o.MaxEdges = DefaultMaxEdges
	}
	if o.MaxPairTests == 0 {
		o.MaxPairTests = DefaultMaxPairTests
	}
	return o
}

// Validate checks the options and returns an *Error naming each invalid
// field, or nil.
func (o Options) Validate() error {
	var e Error
	if !finite(o.LinkM) || o.LinkM < 0 || o.LinkM > MaxLinkM {
		e.add("link_m", fmt.Sprintf("must be a number in (0, %g] metres", MaxLinkM))
	}
	if o.MinSize < 0 || o.MinSize == 1 {
		e.add("min_size", "must be an integer of at least 2")
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"max_alt_diff_m", o.MaxAltDiffM}, {"max_speed_diff_mps", o.MaxSpeedDiffMps}, {"max_heading_diff_deg", o.MaxHeadingDiffDeg}} {
		if !finite(f.v) || f.v < 0 {
			e.add(f.name, "must be a non-negative number")
		}
	}
	if o.MaxHeadingDiffDeg > 180 {
		e.add("max_heading_diff_deg", "must be at most 180")
	}
	if o.MaxEdges < 0 || o.MaxEdges > MaxMaxEdges {
		e.add("max_edges", fmt.Sprintf("must be an integer in [1, %d]", MaxMaxEdges))
	}
	if o.EdgeOffset < 0 {
		e.add("edge_offset", "must be a non-negative integer")
	}
	return e.orNil()
}

// ValidateTracks checks ids (non-empty, unique), positions (finite, lat in
// [-90, 90], lon in [-180, 180]) and the optional fields, and returns an
// *Error naming each invalid field, or nil.
func ValidateTracks(tracks []Track) error {
	var e Error
	seen := make(map[string]int, len(tracks))
	for i, t := range tracks {
		p := fmt.Sprintf("tracks[%d]", i)
		switch j, dup := seen[t.ID]; {
		case t.ID == "":
			e.add(p+".id", "is required")
		case dup:
			e.add(p+".id", fmt.Sprintf("duplicates tracks[%d].id %q", j, t.ID))
		default:
			seen[t.ID] = i
		}
		e.addTrackFields(p, &t)
		if len(e.Fields) > 100 {
			e.add("tracks", "too many errors; stopped")
			break
		}
	}
	return e.orNil()
}

// addTrackFields names the invalid position, altitude and velocity fields
// of the track at prefix p.
func (e *Error) addTrackFields(p string, t *Track) {
	if !finite(t.Lat) || t.Lat < -90 || t.Lat > 90 {
		e.add(p+".lat", "must be a number in [-90, 90]")
	}
	if !finite(t.Lon) || t.Lon < -180 || t.Lon > 180 {
		e.add(p+".lon", "must be a number in [-180, 180]")
	}
	if t.HasAlt && !finite(t.AltM) {
		e.add(p+".alt_m", "must be a finite number")
	}
	if t.HasVelocity && (!finite(t.SpeedMps) || t.SpeedMps < 0) {
		e.add(p+".speed_mps", "must be a non-negative number")
	}
	if t.HasVelocity && !finite(t.HeadingDeg) {
		e.add(p+".heading_deg", "must be a finite number")
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Grouping is the component structure of a set of tracks: Comp[i] is the
// representative (a track index) of tracks[i]'s component and Size[i] that
// component's size, so Size[i] is what the swarm axis of the gate reads.
type Grouping struct {
	Comp  []int32
	Size  []int32
	Links int
	// Exceeded says the run stopped at Options.MaxPairTests: the
	// components are then only those found so far (a lower bound).
	Exceeded bool
}

// Groups links the tracks under the options and returns their grouping.
// Tracks must be valid (see ValidateTracks). onLink, when not nil, is
// called once for every link with the two track indices (i < j) and their
// distance in metres.
func Groups(tracks []Track, opt Options, onLink func(i, j int, distM float64)) Grouping {
	var d Detector
	return d.Groups(tracks, opt, onLink)
}

// Detector holds the buffers of Groups so that repeated runs (every
// update of the live picture) do not reallocate. A Detector is not safe
// for concurrent use; its zero value is ready.
type Detector struct {
	uf    UnionFind
	cells []cellEntry
	pts   []point // in cell order
	rows  []rowSeg
	links int
	tests int // candidate pairs tested
	limit int // at most this many (<0: unlimited)
}

// cellEntry places one track in the grid: key is row<<32 | col, so that
// sorting by key orders cells row by row, column by column.
type cellEntry struct {
	key uint64
	idx int32
}

// point is a track as a unit vector, in cell order.
type point struct {
	x, y, z  float64
	lat, lon float64
	col      int32
	idx      int32
}

// rowSeg is the run of cells of one occupied grid row in cell order.
type rowSeg struct {
	row        int32
	start, end int32
	nc         int32 // columns in the row
}

// Groups is the package function Groups using d's buffers. The returned
// slices are freshly allocated and owned by the caller.
func (d *Detector) Groups(tracks []Track, opt Options, onLink func(i, j int, distM float64)) Grouping {
	opt = opt.withDefaults()
	n := len(tracks)
	d.uf.Reset(n)
	d.links, d.tests, d.limit = 0, 0, opt.MaxPairTests
	g := Grouping{Comp: make([]int32, n), Size: make([]int32, n)}
	if n == 0 {
		return g
	}
	δ := opt.LinkM / gate.EarthRadiusM // link as a central angle
	// Two unit vectors are within δ exactly when their chord is within
	// 2 sin(δ/2): compare squared chords, no trigonometry per pair.
	chord := 2 * math.Sin(δ/2)
	s := linkScan{
		grid:   newGrid(δ * 180 / math.Pi),
		sinδ:   math.Sin(δ),
		chord2: chord * chord,
		opt:    &opt,
		onLink: onLink,
	}
	s.margin = s.grid.rowDeg*(1+1e-9) + 1e-12
	d.place(tracks, s.grid)
	for ri, seg := range d.rows {
		for k := seg.start; k < seg.end && !d.over(); k++ {
			d.linkPoint(tracks, ri, k, &s)
		}
	}
	for i := range n {
		root := d.uf.Find(int32(i))
		g.Comp[i] = root
		g.Size[i] = d.uf.size[root]
	}
	g.Links = d.links
	g.Exceeded = d.over()
	return g
}

// linkScan is what one run of Groups compares points with.
type linkScan struct {
	grid   grid
	sinδ   float64 // sine of the link's central angle
	margin float64 // latitude span of the link circle, widened by a hair
	chord2 float64 // squared chord of the link distance
	opt    *Options
	onLink func(i, j int, distM float64)
}

// place puts the tracks in grid cells: d.cells and d.pts in cell order,
// and d.rows the runs of the occupied rows.
func (d *Detector) place(tracks []Track, grid grid) {
	n := len(tracks)
	if cap(d.cells) < n {
		d.cells, d.pts = make([]cellEntry, n), make([]point, n)
	}
	d.cells, d.pts = d.cells[:n], d.pts[:n]
	for i, t := range tracks {
		r := grid.row(t.Lat)
		d.cells[i] = cellEntry{key: uint64(r)<<32 | uint64(grid.col(r, t.Lon)), idx: int32(i)}
	}
	// Ties broken by index: the link order, and so the pages of links, is
	// the same for the same input.
	slices.SortFunc(d.cells, func(a, b cellEntry) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.idx, b.idx)) })
	d.rows = d.rows[:0]
	for k, c := range d.cells {
		t := &tracks[c.idx]
		row, col := int32(c.key>>32), int32(uint32(c.key))
		sφ, cφ := math.Sincos(t.Lat * math.Pi / 180)
		sλ, cλ := math.Sincos(t.Lon * math.Pi / 180)
		d.pts[k] = point{cφ * cλ, cφ * sλ, sφ, t.Lat, t.Lon, col, c.idx}
		if len(d.rows) == 0 || d.rows[len(d.rows)-1].row != row {
			d.rows = append(d.rows, rowSeg{row: row, start: int32(k), nc: int32(grid.cols(int(row)))})
		}
		d.rows[len(d.rows)-1].end = int32(k + 1)
	}
}

// linkPoint links the point at cell position k (in occupied row ri) with
// the later points within the link distance, scanning the rows its link
// circle reaches.
func (d *Detector) linkPoint(tracks []Track, ri int, k int32, s *linkScan) {
	p := &d.pts[k]
	// The longitudes the link circle spans: asin(sin δ / cos φ), or
	// all of them when the circle reaches a pole. Widened by a hair
	// so that rounding never drops a pair at exactly the link
	// distance.
	cφ := math.Cos(p.lat * math.Pi / 180)
	allLon := cφ <= s.sinδ
	Δλ := 0.0
	if !allLon {
		Δλ = math.Asin(s.sinδ/cφ)*180/math.Pi*(1+1e-9) + 1e-12
	}
	r0 := int32(s.grid.row(math.Max(-90, p.lat-s.margin)))
	r1 := int32(s.grid.row(math.Min(90, p.lat+s.margin)))
	// Occupied rows r0..r1 sit next to ri in d.rows.
	lo := ri
	for lo > 0 && d.rows[lo-1].row >= r0 {
		lo--
	}
	for rj := lo; rj < len(d.rows) && d.rows[rj].row <= r1; rj++ {
		d.scanRow(tracks, k, &d.rows[rj], allLon, Δλ, s.chord2, s.opt, s.onLink)
	}
}

// over reports whether the pair-test budget is spent.
func (d *Detector) over() bool { return d.limit >= 0 && d.tests > d.limit }

// scanRow compares the point at cell position k with the points of one
// row whose columns its link circle overlaps.
func (d *Detector) scanRow(tracks []Track, k int32, seg *rowSeg, allLon bool, Δλ, chord2 float64, opt *Options, onLink func(int, int, float64)) {
	nc := int(seg.nc)
	lo, hi := 0, nc-1
	if !allLon {
		p := &d.pts[k]
		w := 360 / float64(nc)
		lo = int(math.Floor((p.lon - Δλ + 180) / w))
		hi = int(math.Floor((p.lon + Δλ + 180) / w))
		if hi-lo+1 >= nc {
			lo, hi = 0, nc-1
		}
	}
	// Columns lo..hi, wrapping across the antimeridian, as at most two
	// contiguous runs of the row.
	switch {
	case lo < 0:
		d.scanCols(tracks, k, seg, int32(lo+nc), int32(nc-1), chord2, opt, onLink)
		d.scanCols(tracks, k, seg, 0, int32(hi), chord2, opt, onLink)
	case hi >= nc:
		d.scanCols(tracks, k, seg, int32(lo), int32(nc-1), chord2, opt, onLink)
		d.scanCols(tracks, k, seg, 0, int32(hi-nc), chord2, opt, onLink)
	default:
		d.scanCols(tracks, k, seg, int32(lo), int32(hi), chord2, opt, onLink)
	}
}

// scanCols tests the point at cell position k against the points of
// columns c0..c1 of a row that come after it in cell order (so each pair is
// tested once) and links them.
func (d *Detector) scanCols(tracks []Track, k int32, seg *rowSeg, c0, c1 int32, chord2 float64, opt *Options, onLink func(int, int, float64)) {
	// First cell of the row at column c0 or after, and not before k+1.
	a, b := max(seg.start, k+1), seg.end
	for a < b {
		m := int32(uint32(a+b) >> 1)
		if d.pts[m].col < c0 {
			a = m + 1
		} else {
			b = m
		}
	}
	p := &d.pts[k]
	for m := a; m < seg.end && d.pts[m].col <= c1; m++ {
		if d.tests++; d.over() {
			return
		}
		q := &d.pts[m]
		dx, dy, dz := p.x-q.x, p.y-q.y, p.z-q.z
		c2 := dx*dx + dy*dy + dz*dz
		if c2 > chord2 {
			continue
		}
		i, j := int(p.idx), int(q.idx)
		if i > j {
			i, j = j, i
		}
		if !coherent(&tracks[i], &tracks[j], opt) {
			continue
		}
		d.uf.Union(int32(i), int32(j))
		d.links++
		if onLink != nil {
			// Central angle from the chord: 2 asin(c/2).
			onLink(i, j, 2*math.Asin(math.Min(1, math.Sqrt(c2)/2))*gate.EarthRadiusM)
		}
	}
}

// coherent applies the optional altitude and velocity rules.
func coherent(a, b *Track, o *Options) bool {
	if o.MaxAltDiffM > 0 && a.HasAlt && b.HasAlt && math.Abs(a.AltM-b.AltM) > o.MaxAltDiffM {
		return false
	}
	if !a.HasVelocity || !b.HasVelocity {
		return true
	}
	if o.MaxSpeedDiffMps > 0 && math.Abs(a.SpeedMps-b.SpeedMps) > o.MaxSpeedDiffMps {
		return false
	}
	if o.MaxHeadingDiffDeg > 0 && (a.SpeedMps >= HoverMps || b.SpeedMps >= HoverMps) {
		d := math.Abs(math.Mod(a.HeadingDeg-b.HeadingDeg, 360))
		if d > 180 {
			d = 360 - d
		}
		if d > o.MaxHeadingDiffDeg {
			return false
		}
	}
	return true
}

// grid is a latitude-row by longitude-column bucketing of the sphere. Rows
// are rowDeg tall; each row has as many columns as fit while every column
// stays at least rowDeg of arc wide at the row's poleward edge.
type grid struct {
	rowDeg float64
	nRows  int
}

func newGrid(rowDeg float64) grid {
	return grid{rowDeg: rowDeg, nRows: int(math.Ceil(180 / rowDeg))}
}

func (g grid) row(lat float64) int {
	return min(g.nRows-1, max(0, int(math.Floor((lat+90)/g.rowDeg))))
}

func (g grid) cols(r int) int {
	lo := -90 + float64(r)*g.rowDeg
	hi := math.Min(90, lo+g.rowDeg)
	c := math.Cos(math.Max(math.Abs(lo), math.Abs(hi)) * math.Pi / 180)
	if c <= 0 {
		return 1
	}
	n := int(360 * c / g.rowDeg)
	return max(1, n)
}

func (g grid) col(r int, lon float64) int {
	n := g.cols(r)
	c := int(math.Floor((lon + 180) / (360 / float64(n))))
	return ((c % n) + n) % n
}

// Component is one connected component of at least two tracks.
type Component struct {
	// ID is "grp-" followed by the smallest member id: stable while that
	// member stays in the group.
	ID      string   `json:"id"`
	Members []string `json:"members"`
	Size    int      `json:"size"`
	// Centroid is the normalised mean of the members' unit vectors, with
	// the mean altitude of the members that report one.
	Centroid Centroid `json:"centroid"`
	// RadiusM is the largest distance from the centroid to a member.
	RadiusM float64 `json:"radius_m"`
	// Swarm is Size >= MinSize.
	Swarm bool `json:"swarm"`
}

// Centroid is a component's centre.
type Centroid struct {
	Lat  float64  `json:"lat"`
	Lon  float64  `json:"lon"`
	AltM *float64 `json:"alt_m,omitempty"`
}

// Edge is one link of the proximity graph.
type Edge struct {
	A         string  `json:"a"`
	B         string  `json:"b"`
	DistanceM float64 `json:"distance_m"`
}

// Topology is the answer of the swarm endpoints.
type Topology struct {
	// Components have at least two members, largest first, then by ID.
	Components []Component `json:"components"`
	// Edges lists a page of the links when Options.CollectEdges is set:
	// at most Options.MaxEdges from Options.EdgeOffset in a stable order
	// (the same input gives the same pages), each page sorted by A, B.
	Edges []Edge `json:"edges"`
	// EdgeCount is the number of links.
	EdgeCount int `json:"edge_count"`
	// NextEdgeOffset is where the next page of links starts, when there is
	// one.
	NextEdgeOffset *int `json:"next_edge_offset,omitempty"`
	// Singletons are the ids of the tracks with no link, sorted.
	Singletons []string `json:"singletons"`
	// Swarms counts the components that are swarms.
	Swarms int     `json:"swarms"`
	LinkM  float64 `json:"link_m"`
	// MinSize is the swarm threshold used.
	MinSize int `json:"min_size"`
}

// Detect validates the input and computes the topology.
func Detect(tracks []Track, opt Options) (Topology, error) {
	if err := opt.Validate(); err != nil {
		return Topology{}, err
	}
	if err := ValidateTracks(tracks); err != nil {
		return Topology{}, err
	}
	opt = opt.withDefaults()
	top := Topology{Components: []Component{}, Edges: []Edge{}, Singletons: []string{}, LinkM: opt.LinkM, MinSize: opt.MinSize}
	var onLink func(i, j int, d float64)
	if opt.CollectEdges {
		onLink = top.edgePage(tracks, opt.EdgeOffset, opt.MaxEdges)
	}
	g := Groups(tracks, opt, onLink)
	if g.Exceeded {
		e := &Error{OverBudget: true}
		e.add("tracks", fmt.Sprintf("more than %d candidate pairs lie within link_m of each other; lower link_m or send fewer tracks per request", opt.MaxPairTests))
		return Topology{}, e
	}
	top.EdgeCount = g.Links
	if next := opt.EdgeOffset + len(top.Edges); opt.CollectEdges && next < g.Links {
		top.NextEdgeOffset = &next
	}
	slices.SortFunc(top.Edges, func(x, y Edge) int {
		return cmp.Or(strings.Compare(x.A, y.A), strings.Compare(x.B, y.B))
	})
	top.addComponents(tracks, &g, opt.MinSize)
	return top, nil
}

// edgePage returns the link callback that keeps the page of at most
// limit links from offset in top.Edges, each edge's ids in order.
func (top *Topology) edgePage(tracks []Track, offset, limit int) func(i, j int, d float64) {
	seen := 0
	return func(i, j int, d float64) {
		if seen++; seen <= offset || len(top.Edges) >= limit {
			return
		}
		a, b := tracks[i].ID, tracks[j].ID
		if b < a {
			a, b = b, a
		}
		top.Edges = append(top.Edges, Edge{A: a, B: b, DistanceM: d})
	}
}

// addComponents adds the grouping's components (largest first, then by
// id), its singletons (sorted) and the number of swarms to top.
func (top *Topology) addComponents(tracks []Track, g *Grouping, minSize int) {
	// Group the indices by component with a counting sort on the
	// representative: linear, and one allocation instead of one per group.
	start := make([]int32, len(tracks)+1)
	for i, root := range g.Comp {
		if g.Size[i] > 1 {
			start[root+1]++
		} else {
			top.Singletons = append(top.Singletons, tracks[i].ID)
		}
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	order := make([]int, start[len(tracks)])
	fill := slices.Clone(start[:len(tracks)])
	for i, root := range g.Comp {
		if g.Size[i] > 1 {
			order[fill[root]] = i
			fill[root]++
		}
	}
	slices.Sort(top.Singletons)
	for root := range tracks {
		if a, b := start[root], start[root+1]; b > a {
			top.Components = append(top.Components, component(tracks, order[a:b], minSize))
		}
	}
	slices.SortFunc(top.Components, func(a, b Component) int {
		return cmp.Or(cmp.Compare(b.Size, a.Size), strings.Compare(a.ID, b.ID))
	})
	for _, c := range top.Components {
		if c.Swarm {
			top.Swarms++
		}
	}
}

func component(tracks []Track, idx []int, minSize int) Component {
	c := Component{Size: len(idx), Swarm: len(idx) >= minSize, Members: make([]string, 0, len(idx))}
	var x, y, z, alt float64
	nAlt := 0
	for _, i := range idx {
		t := &tracks[i]
		c.Members = append(c.Members, t.ID)
		sφ, cφ := math.Sincos(t.Lat * math.Pi / 180)
		sλ, cλ := math.Sincos(t.Lon * math.Pi / 180)
		x, y, z = x+cφ*cλ, y+cφ*sλ, z+sφ
		if t.HasAlt {
			alt += t.AltM
			nAlt++
		}
	}
	slices.Sort(c.Members)
	c.ID = "grp-" + c.Members[0]
	c.Centroid = Centroid{Lat: math.Atan2(z, math.Hypot(x, y)) * 180 / math.Pi, Lon: math.Atan2(y, x) * 180 / math.Pi}
	if nAlt > 0 {
		m := alt / float64(nAlt)
		c.Centroid.AltM = &m
	}
	ctr := gate.Point{Lat: c.Centroid.Lat, Lon: c.Centroid.Lon}
	for _, i := range idx {
		c.RadiusM = math.Max(c.RadiusM, gate.Distance(ctr, gate.Point{Lat: tracks[i].Lat, Lon: tracks[i].Lon}))
	}
	return c
}
