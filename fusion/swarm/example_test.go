package swarm_test

import (
	"fmt"

	"github.com/cuasd/cuasd/fusion/swarm"
	"github.com/cuasd/cuasd/gate"
)

// Four drones 100 m apart in a line form one component (each links to the
// next within the default 150 m); a fifth 1 km away stays alone.
func ExampleDetect() {
	start := gate.Point{Lat: 52.3086, Lon: 4.7639}
	var tracks []swarm.Track
	for i, d := range []float64{0, 100, 200, 300, 1300} {
		p := gate.Destination(start, d, 90)
		tracks = append(tracks, swarm.Track{ID: fmt.Sprintf("d%d", i), Lat: p.Lat, Lon: p.Lon})
	}
	top, err := swarm.Detect(tracks, swarm.Options{CollectEdges: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range top.Components {
		fmt.Printf("%s: %v, swarm %v, radius %.0f m\n", c.ID, c.Members, c.Swarm, c.RadiusM)
	}
	fmt.Println("links:", top.EdgeCount, "singletons:", top.Singletons)
	// Output:
	// grp-d0: [d0 d1 d2 d3], swarm true, radius 150 m
	// links: 3 singletons: [d4]
}
