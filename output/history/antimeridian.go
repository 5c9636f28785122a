package history

import "time"

// vertex is one position of a drawn line: a recorded point, or where the
// line between two recorded points crosses the antimeridian (interpolated).
type vertex struct {
	Lon, Lat float64
	// Alt is meaningful only when HasAlt.
	Alt    float64
	HasAlt bool
	Time   time.Time
}

// splitAntimeridian cuts a track's line where it crosses ±180° longitude
// (RFC 7946 §3.1.9): two consecutive points more than 180° of longitude
// apart are taken to cross the antimeridian (the short way round), and
// the line ends at the crossing on one side (lon ±180, latitude, altitude
// and time interpolated) and goes on from the same crossing on the other
// side. Without the cut a renderer draws the segment across the whole
// world. It returns one part when the track does not cross; every part
// of a crossing track has at least two vertices.
func splitAntimeridian(pts []Point) [][]vertex {
	parts := [][]vertex{make([]vertex, 0, len(pts))}
	for i := range pts {
		v := vertexOf(&pts[i])
		cur := &parts[len(parts)-1]
		if i > 0 {
			prev := (*cur)[len(*cur)-1]
			if d := v.Lon - prev.Lon; d > 180 || d < -180 {
				end, start := crossing(prev, v)
				*cur = append(*cur, end)
				parts = append(parts, []vertex{start})
				cur = &parts[len(parts)-1]
			}
		}
		*cur = append(*cur, v)
	}
	return parts
}

func vertexOf(p *Point) vertex {
	v := vertex{Lon: p.Lon, Lat: p.Lat, Time: p.Time}
	if p.AltM != nil {
		v.Alt, v.HasAlt = *p.AltM, true
	}
	return v
}

// crossing is where the segment a→b (whose longitudes differ by more than
// 180°) meets the antimeridian: as the end of a's side and as the start
// of b's side.
func crossing(a, b vertex) (end, start vertex) {
	edge := 180.0 // a is east of the antimeridian, b west
	bLon := b.Lon + 360
	if b.Lon > a.Lon {
		edge, bLon = -180, b.Lon-360 // a west, b east
	}
	f := 0.0
	if bLon != a.Lon {
		f = (edge - a.Lon) / (bLon - a.Lon)
	}
	end = vertex{Lon: edge, Lat: a.Lat + f*(b.Lat-a.Lat), HasAlt: a.HasAlt && b.HasAlt,
		Time: a.Time.Add(time.Duration(f * float64(b.Time.Sub(a.Time))))}
	if end.HasAlt {
		end.Alt = a.Alt + f*(b.Alt-a.Alt)
	}
	start = end
	start.Lon = -edge
	return end, start
}
