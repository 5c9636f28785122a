package swarm

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/internal/cputime"
)

func TestUnionFind(t *testing.T) {
	u := NewUnionFind(10)
	for _, p := range [][2]int32{{0, 1}, {1, 2}, {3, 4}, {5, 6}, {6, 7}, {7, 5}, {2, 0}} {
		u.Union(p[0], p[1])
	}
	want := map[int32]int{0: 3, 1: 3, 2: 3, 3: 2, 4: 2, 5: 3, 8: 1, 9: 1}
	for x, n := range want {
		if got := u.Size(x); got != n {
			t.Errorf("size(%d) = %d, want %d", x, got, n)
		}
	}
	if u.Find(0) != u.Find(2) || u.Find(0) == u.Find(3) || u.Find(5) != u.Find(7) {
		t.Error("wrong sets")
	}
	if u.Union(0, 2) {
		t.Error("union of one set reported a merge")
	}
	// Path compression: after Find every element of a chain points at the root.
	u.Reset(1000)
	for i := int32(1); i < 1000; i++ {
		u.Union(i-1, i)
	}
	root := u.Find(999)
	for i := range int32(1000) {
		if u.Find(i) != root || u.parent[i] != root {
			t.Fatalf("element %d not compressed onto the root after Find", i)
		}
	}
	if u.Size(0) != 1000 {
		t.Fatalf("size %d", u.Size(0))
	}
	// Union by rank keeps a chain of unions flat: rank stays logarithmic.
	for _, r := range u.rank {
		if r > 10 {
			t.Fatalf("rank %d for 1000 elements", r)
		}
	}
}

// cluster places n tracks in a ring of radius r metres around c.
func cluster(prefix string, c gate.Point, n int, r float64) []Track {
	var out []Track
	for i := range n {
		q := gate.Destination(c, r, float64(i)*360/float64(n))
		out = append(out, Track{ID: fmt.Sprintf("%s%02d", prefix, i), Lat: q.Lat, Lon: q.Lon})
	}
	return out
}

func TestHandBuiltClusters(t *testing.T) {
	var tracks []Track
	// 6 drones 40 m around a point (neighbours ~40 m apart): one swarm.
	tracks = append(tracks, cluster("a", gate.Point{Lat: 51.5, Lon: -0.12}, 6, 40)...)
	// A pair 100 m apart 5 km away: a component below min_size.
	tracks = append(tracks, cluster("b", gate.Point{Lat: 51.5, Lon: -0.05}, 2, 50)...)
	// A chain of 4 at 140 m spacing: linked through each other.
	start := gate.Point{Lat: 51.45, Lon: -0.12}
	for i := range 4 {
		q := gate.Destination(start, float64(i)*140, 90)
		tracks = append(tracks, Track{ID: fmt.Sprintf("c%02d", i), Lat: q.Lat, Lon: q.Lon})
	}
	// Two loners, one 160 m from the chain's end.
	end := gate.Destination(start, 3*140+160, 90)
	tracks = append(tracks, Track{ID: "z1", Lat: end.Lat, Lon: end.Lon}, Track{ID: "z2", Lat: -33, Lon: 151})

	top, err := Detect(tracks, Options{CollectEdges: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Components) != 3 {
		t.Fatalf("components: %+v", top.Components)
	}
	a, c, b := top.Components[0], top.Components[1], top.Components[2]
	if a.ID != "grp-a00" || a.Size != 6 || !a.Swarm {
		t.Errorf("ring: %+v", a)
	}
	if c.ID != "grp-c00" || c.Size != 4 || !c.Swarm || !slices.Equal(c.Members, []string{"c00", "c01", "c02", "c03"}) {
		t.Errorf("chain: %+v", c)
	}
	if b.ID != "grp-b00" || b.Size != 2 || b.Swarm {
		t.Errorf("pair: %+v", b)
	}
	if !slices.Equal(top.Singletons, []string{"z1", "z2"}) {
		t.Errorf("singletons %v", top.Singletons)
	}
	// The ring's centroid is its centre, its radius 40 m.
	if d := gate.Distance(gate.Point{Lat: a.Centroid.Lat, Lon: a.Centroid.Lon}, gate.Point{Lat: 51.5, Lon: -0.12}); d > 0.01 {
		t.Errorf("ring centroid off by %v m", d)
	}
	if math.Abs(a.RadiusM-40) > 0.01 {
		t.Errorf("ring radius %v", a.RadiusM)
	}
	// Edges: every pair of the 6-ring within 150 m (all 15: the diameter is
	// 80 m), the pair, and 3 chain links.
	if top.EdgeCount != 15+1+3 || len(top.Edges) != top.EdgeCount {
		t.Errorf("edges %d (%d listed)", top.EdgeCount, len(top.Edges))
	}
	for _, e := range top.Edges {
		if e.A >= e.B || e.DistanceM > 150 {
			t.Errorf("edge %+v", e)
		}
	}
	// With min_size 7 the ring is no swarm.
	top, _ = Detect(tracks, Options{MinSize: 7})
	if top.Swarms != 0 || top.Edges == nil || len(top.Edges) != 0 {
		t.Errorf("min_size 7: %d swarms, edges %v", top.Swarms, top.Edges)
	}
}

func TestAltitudeAndVelocityRules(t *testing.T) {
	a := Track{ID: "a", Lat: 0, Lon: 0, AltM: 50, HasAlt: true, SpeedMps: 10, HeadingDeg: 350, HasVelocity: true}
	q := gate.Destination(gate.Point{}, 100, 90)
	b := Track{ID: "b", Lat: q.Lat, Lon: q.Lon, AltM: 150, HasAlt: true, SpeedMps: 12, HeadingDeg: 20, HasVelocity: true}
	tests := []struct {
		name string
		opt  Options
		b    func(Track) Track
		link bool
	}{
		{"distance only", Options{}, nil, true},
		{"altitude within", Options{MaxAltDiffM: 100}, nil, true},
		{"altitude beyond", Options{MaxAltDiffM: 99}, nil, false},
		{"altitude unknown", Options{MaxAltDiffM: 10}, func(t Track) Track { t.HasAlt = false; return t }, true},
		{"headings 30° apart across north", Options{MaxHeadingDiffDeg: 30}, nil, true},
		{"headings too far apart", Options{MaxHeadingDiffDeg: 29}, nil, false},
		{"speeds", Options{MaxSpeedDiffMps: 1}, nil, false},
		{"both hover", Options{MaxHeadingDiffDeg: 5}, func(t Track) Track { t.SpeedMps = 0.5; return t }, true},
		{"too far", Options{LinkM: 99}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bb := b
			if tc.b != nil {
				bb = tc.b(b)
			}
			aa := a
			if tc.name == "both hover" {
				aa.SpeedMps = 0.2
			}
			top, err := Detect([]Track{aa, bb}, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := top.EdgeCount == 1; got != tc.link {
				t.Errorf("%s: linked %v, want %v", tc.name, got, tc.link)
			}
		})
	}
}

// bruteForce links every pair within link metres: the O(n²) definition.
func bruteForce(tracks []Track, linkM float64) (links int, sizes []int) {
	u := NewUnionFind(len(tracks))
	for i := range tracks {
		for j := i + 1; j < len(tracks); j++ {
			d := gate.Distance(gate.Point{Lat: tracks[i].Lat, Lon: tracks[i].Lon}, gate.Point{Lat: tracks[j].Lat, Lon: tracks[j].Lon})
			if d <= linkM {
				u.Union(int32(i), int32(j))
				links++
			}
		}
	}
	for i := range tracks {
		sizes = append(sizes, u.Size(int32(i)))
	}
	return links, sizes
}

// The grid finds exactly the links of the brute-force definition,
// including at the poles and across the antimeridian.
func TestGridMatchesBruteForce(t *testing.T) {
	centres := []gate.Point{{Lat: 0, Lon: 0}, {Lat: 51.5, Lon: -0.1}, {Lat: 0, Lon: 180}, {Lat: -0.001, Lon: -179.999},
		{Lat: 89.999, Lon: 10}, {Lat: -90, Lon: 0}, {Lat: 78, Lon: 179.99}, {Lat: -60, Lon: -180}}
	for ci, c := range centres {
		t.Run(fmt.Sprintf("lat %g lon %g", c.Lat, c.Lon), func(t *testing.T) {
			for _, link := range []float64{50, 150, 2000} {
				rng := rand.New(rand.NewPCG(uint64(ci), uint64(link)))
				var tracks []Track
				for i := range 400 {
					q := gate.Destination(c, rng.Float64()*link*8, rng.Float64()*360)
					tracks = append(tracks, Track{ID: fmt.Sprint(i), Lat: q.Lat, Lon: q.Lon})
				}
				wantLinks, wantSizes := bruteForce(tracks, link)
				g := Groups(tracks, Options{LinkM: link}, func(i, j int, d float64) {
					if i >= j || d > link*(1+1e-9) {
						t.Errorf("bad link %d-%d %v", i, j, d)
					}
				})
				if g.Links != wantLinks {
					t.Errorf("centre %v link %v: %d links, brute force %d", c, link, g.Links, wantLinks)
				}
				for i, s := range g.Size {
					if int(s) != wantSizes[i] {
						t.Errorf("centre %v link %v: track %d size %d, want %d", c, link, i, s, wantSizes[i])
						break
					}
				}
			}
		})
	}
}

func TestValidation(t *testing.T) {
	_, err := Detect([]Track{{ID: "a", Lat: 91}, {ID: "a", Lon: 200}, {Lat: math.NaN()}}, Options{LinkM: -1, MinSize: 1})
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("want *Error, got %v", err)
	}
	want := []string{"link_m", "min_size"}
	if got := fieldsOf(e); !slices.Equal(got[:2], want) {
		t.Errorf("options fields %v", got)
	}
	_, err = Detect([]Track{{ID: "a", Lat: 91}, {ID: "a", Lon: 200}, {Lat: math.NaN()}}, Options{})
	want = []string{"tracks[0].lat", "tracks[1].id", "tracks[1].lon", "tracks[2].id", "tracks[2].lat"}
	if got := fieldsOf(err.(*Error)); !slices.Equal(got, want) {
		t.Errorf("track fields %v, want %v", got, want)
	}
	top, err := Detect(nil, Options{})
	if err != nil || len(top.Components) != 0 || top.Singletons == nil {
		t.Errorf("empty input: %+v %v", top, err)
	}
	b, _ := json.Marshal(top)
	if string(b) != `{"components":[],"edges":[],"edge_count":0,"singletons":[],"swarms":0,"link_m":150,"min_size":3}` {
		t.Errorf("empty JSON %s", b)
	}
}

func fieldsOf(e *Error) []string {
	var out []string
	for _, f := range e.Fields {
		out = append(out, f.Field)
	}
	return out
}

// benchTracks spreads n tracks over a 100 km square around London at about
// 10 per km², with a fifth of them in tight groups of 5 to 20.
func benchTracks(n int) []Track {
	rng := rand.New(rand.NewPCG(42, 42))
	c := gate.Point{Lat: 51.5, Lon: -0.12}
	tracks := make([]Track, 0, n)
	for len(tracks) < n {
		q := gate.Point{Lat: c.Lat + (rng.Float64()-0.5)*0.9, Lon: c.Lon + (rng.Float64()-0.5)*1.44}
		if rng.IntN(5) == 0 {
			k := 5 + rng.IntN(16)
			for i := 0; i < k && len(tracks) < n; i++ {
				p := gate.Destination(q, rng.Float64()*120, rng.Float64()*360)
				tracks = append(tracks, Track{ID: fmt.Sprint(len(tracks)), Lat: p.Lat, Lon: p.Lon})
			}
			continue
		}
		tracks = append(tracks, Track{ID: fmt.Sprint(len(tracks)), Lat: q.Lat, Lon: q.Lon})
	}
	return tracks
}

func benchGroups(b *testing.B, n int) {
	tracks := benchTracks(n)
	var d Detector
	b.ReportAllocs()
	c0 := cputime.Process()
	for b.Loop() {
		d.Groups(tracks, Options{}, nil)
	}
	b.ReportMetric(float64(cputime.Process()-c0)/float64(b.N), "cpu-ns/op")
}

func BenchmarkGroups100k(b *testing.B) { benchGroups(b, 100_000) }
func BenchmarkGroups10k(b *testing.B)  { benchGroups(b, 10_000) }
func BenchmarkGroups1k(b *testing.B)   { benchGroups(b, 1000) }

func BenchmarkDetect100k(b *testing.B) {
	tracks := benchTracks(100_000)
	b.ReportAllocs()
	c0 := cputime.Process()
	for b.Loop() {
		if _, err := Detect(tracks, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cputime.Process()-c0)/float64(b.N), "cpu-ns/op")
}

// TestPairBudget: a run stops once it has tested MaxPairTests candidate
// pairs and says so; Detect turns that into an over-budget *Error.
func TestPairBudget(t *testing.T) {
	pile := cluster("p", gate.Point{Lat: 10, Lon: 10}, 200, 5) // 19,900 pairs
	if g := Groups(pile, Options{MaxPairTests: 1000}, nil); !g.Exceeded || g.Links > 1000 {
		t.Errorf("budget 1000: exceeded %v, %d links", g.Exceeded, g.Links)
	}
	if g := Groups(pile, Options{MaxPairTests: -1}, nil); g.Exceeded || g.Links != 19_900 {
		t.Errorf("unlimited: exceeded %v, %d links", g.Exceeded, g.Links)
	}
	_, err := Detect(pile, Options{MaxPairTests: 1000})
	var e *Error
	if !errors.As(err, &e) || !e.OverBudget || len(e.Fields) != 1 || e.Fields[0].Field != "tracks" {
		t.Errorf("Detect over budget: %v", err)
	}
	top, err := Detect(pile, Options{CollectEdges: true, MaxEdges: 100, EdgeOffset: 19_850})
	if err != nil || len(top.Edges) != 50 || top.NextEdgeOffset != nil || top.EdgeCount != 19_900 {
		t.Errorf("last page: %v, %d edges, next %v", err, len(top.Edges), top.NextEdgeOffset)
	}
}
