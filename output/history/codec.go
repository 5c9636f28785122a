package history

import (
	"encoding/binary"
	"errors"
	"math"
	"time"
)

// The packed form of a run of one track's points, oldest first, as a
// chunk row's data (and, with the track id before each run, a pending
// row's). Each point is:
//
//	uvarint  nanoseconds after the previous point (the first: after the base time)
//	8 bytes  lat, 8 bytes lon (IEEE 754, little-endian: exact round trip)
//	1 byte   flags: which of alt, speed, heading, vrate, lambda follow,
//	         and whether the strings changed since the previous point
//	8 bytes  each measurement present
//	strings  when changed (always for the first point): alt_kind,
//	         protocol, sensor, decision, each uvarint length + bytes
//
// A point costs 26–70 bytes instead of a row of its own with its key in
// two b-trees; the strings rarely change along a track.
const (
	flagAlt = 1 << iota
	flagSpeed
	flagHeading
	flagVRate
	flagLambda
	flagStrings
)

var errCorrupt = errors.New("corrupt packed points")

// appendPoints packs pts (one track, time order) after base (Unix ns).
func appendPoints(b []byte, base int64, pts []Point) []byte {
	prev := base
	for i := range pts {
		b = appendPoint(b, prev, &pts[i], i == 0 || !sameStrings(&pts[i], &pts[i-1]))
		prev = pts[i].Time.UnixNano()
	}
	return b
}

// appendPoint packs one point after the point at prev (Unix ns), with its
// strings when withStrings.
func appendPoint(b []byte, prev int64, p *Point, withStrings bool) []byte {
	b = binary.AppendUvarint(b, uint64(p.Time.UnixNano()-prev))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.Lat))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.Lon))
	flags := byte(0)
	measures := [...]*float64{p.AltM, p.SpeedMps, p.HeadingDeg, p.VRateMps, p.Lambda}
	for j, v := range measures {
		if v != nil {
			flags |= 1 << j
		}
	}
	if withStrings {
		flags |= flagStrings
	}
	b = append(b, flags)
	for _, v := range measures {
		if v != nil {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(*v))
		}
	}
	if withStrings {
		for _, s := range [...]string{p.AltKind, p.Protocol, p.Sensor, p.Decision} {
			b = appendString(b, s)
		}
	}
	return b
}

func sameStrings(a, b *Point) bool {
	return a.AltKind == b.AltKind && a.Protocol == b.Protocol && a.Sensor == b.Sensor && a.Decision == b.Decision
}

// chunk is one track's run of packed points with its time range and
// box: a row of the chunks table, or one being filled in memory.
type chunk struct {
	track                          string
	t0, t1                         int64
	n                              int
	minLat, maxLat, minLon, maxLon float64
	protocol                       string
	data                           []byte
	last                           Point // the strings of the newest point
}

// fits reports whether p may be added to c: c has room, p is newer than
// c's points and within maxChunkSpan of its first, and of its protocol.
func (c *chunk) fits(p *Point) bool {
	t := p.Time.UnixNano()
	return c.n < maxChunkPoints && t > c.t1 && t-c.t0 <= int64(maxChunkSpan) && p.Protocol == c.protocol
}

// add appends p, which fits (or starts an empty chunk).
func (c *chunk) add(p *Point) {
	t := p.Time.UnixNano()
	if c.n == 0 {
		c.track, c.t0, c.t1, c.protocol = p.TrackID, t, t, p.Protocol
		c.minLat, c.maxLat, c.minLon, c.maxLon = p.Lat, p.Lat, p.Lon, p.Lon
	}
	c.data = appendPoint(c.data, c.t1, p, c.n == 0 || !sameStrings(p, &c.last))
	c.t1 = t
	c.n++
	c.minLat, c.maxLat = min(c.minLat, p.Lat), max(c.maxLat, p.Lat)
	c.minLon, c.maxLon = min(c.minLon, p.Lon), max(c.maxLon, p.Lon)
	c.last.AltKind, c.last.Protocol, c.last.Sensor, c.last.Decision = p.AltKind, p.Protocol, p.Sensor, p.Decision
}

// chunksOf packs pts (one track, time order, no two at one time) into
// chunks.
func chunksOf(pts []Point) []*chunk {
	var out []*chunk
	for i := range pts {
		if len(out) == 0 || !out[len(out)-1].fits(&pts[i]) {
			out = append(out, &chunk{})
		}
		out[len(out)-1].add(&pts[i])
	}
	return out
}

// points calls fn for each of c's points.
func (c *chunk) points(fn func(*Point) error) error { return eachPoint(c.data, c.t0, c.track, fn) }

// overlaps reports whether c may hold points in [lo, hi] (Unix ns).
func (c *chunk) overlaps(lo, hi int64) bool { return c.t1 >= lo && c.t0 <= hi }

// pointReader unpacks what appendPoints packed.
type pointReader struct {
	b    []byte
	t    int64
	prev Point // the strings carry over from point to point
}

func newPointReader(b []byte, base int64, trackID string) pointReader {
	return pointReader{b: b, t: base, prev: Point{TrackID: trackID}}
}

// next unpacks the next point into p; false at the end. Measurements are
// freshly allocated: callers may keep p.
func (r *pointReader) next(p *Point) (bool, error) {
	if len(r.b) == 0 {
		return false, nil
	}
	dt, n := binary.Uvarint(r.b)
	if n <= 0 || len(r.b) < n+17 {
		return false, errCorrupt
	}
	r.t += int64(dt)
	b := r.b[n:]
	*p = r.prev
	p.Time = time.Unix(0, r.t).UTC()
	p.Lat = math.Float64frombits(binary.LittleEndian.Uint64(b))
	p.Lon = math.Float64frombits(binary.LittleEndian.Uint64(b[8:]))
	flags := b[16]
	b = b[17:]
	for j, dst := range [...]**float64{&p.AltM, &p.SpeedMps, &p.HeadingDeg, &p.VRateMps, &p.Lambda} {
		*dst = nil
		if flags&(1<<j) == 0 {
			continue
		}
		if len(b) < 8 {
			return false, errCorrupt
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(b))
		*dst = &v
		b = b[8:]
	}
	if flags&flagStrings != 0 {
		var err error
		for _, dst := range [...]*string{&p.AltKind, &p.Protocol, &p.Sensor, &p.Decision} {
			if *dst, b, err = readString(b); err != nil {
				return false, err
			}
		}
		r.prev.AltKind, r.prev.Protocol, r.prev.Sensor, r.prev.Decision = p.AltKind, p.Protocol, p.Sensor, p.Decision
	}
	r.b = b
	return true, nil
}

// nextTime is the next point's time (for counting); false at the end.
func (r *pointReader) nextTime() (int64, bool, error) {
	var p Point
	ok, err := r.next(&p)
	return p.Time.UnixNano(), ok, err
}

func readString(b []byte) (string, []byte, error) {
	l, n := binary.Uvarint(b)
	if n <= 0 || uint64(len(b)-n) < l {
		return "", nil, errCorrupt
	}
	return string(b[n : n+int(l)]), b[n+int(l):], nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func uvarint(b []byte) (uint64, int) { return binary.Uvarint(b) }
