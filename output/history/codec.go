package history

import (
	"encoding/binary"
	"errors"
	"math"
	"time"
)

// The packed form of a run of one track's points, oldest first, as a
// chunk row's data (and, with the track id before each run, a pending
// record's). It starts with the byte packV3 (or packV2), then each point
// is:
//
//	uvarint  nanoseconds after the previous point (the first: after the base time)
//	1 byte   flags: which of alt, speed, heading, vrate, Λ are known; whether
//	         the position is compact, Λ's value follows, the strings follow
//	position compact: lat and lon in 1e-6° and alt (when known) in 0.1 m,
//	         each a zigzag varint after the previous compact point's (the
//	         first: after 0); else lat, lon and alt as 8-byte IEEE 754
//	         (little-endian)
//	velocity each of speed, heading, vrate known: compact (packV3 only),
//	         in 0.01 m/s, 0.1° and 0.01 m/s, each a zigzag varint after
//	         the previous compact point's; else 8 bytes each
//	8 bytes  Λ when its value follows (else it is the previous point's)
//	strings  when changed (always for the first point): alt_kind,
//	         protocol, sensor, decision, each uvarint length + bytes
//
// A point is compact when its position and velocity read back bit for
// bit: fusion's views round positions to 1e-6°, altitudes to 0.1 m,
// speeds and vertical rates to 0.01 m/s and headings to 0.1° (and the
// recorder fed fixes rounds them so), so every fix cuasd records is, and
// a typical point costs 8–13 bytes without a velocity and ~12–16 with one
// (26–70 in the first format, which stored every float whole, and the
// velocity's 24 bytes whole in the second: those chunks are still read,
// see packV2). The strings rarely change along a track, nor Λ between two
// events.
const (
	flagAlt = 1 << iota
	flagSpeed
	flagHeading
	flagVRate
	flagLambda
	flagStrings
	flagCompact
	flagLambdaValue
)

// packV2 marks packed points of the second format: the format above with
// every velocity whole. Points of the first format (no marker, lat and
// lon whole before the flags, Λ's value with every point) never start
// with it or packV3: a chunk's first delta is 0 and a pending run's a
// Unix time in nanoseconds, so their first byte is 0x00 or ≥ 0x80.
const packV2 = 0x01

// packV3 marks packed points of the format above, whose compact points
// carry their velocity compact too (issue 30: the velocity's 24 bytes
// whole were two thirds of a fed fix's packed bytes).
const packV3 = 0x02

// velScale are the units of a compact speed, heading and vertical rate.
var velScale = [3]float64{100, 10, 100}

var errCorrupt = errors.New("corrupt packed points")

// packState is what a point is packed relative to: the previous point's
// time, the previous compact position, the last Λ written.
type packState struct {
	t                int64
	latU, lonU, altD int64
	vel              [3]int64 // speed, heading, vrate in velScale's units
	lambda           float64
	lambdaKnown      bool
}

// appendPoints packs pts (one track, time order) after base (Unix ns).
func appendPoints(b []byte, base int64, pts []Point) []byte {
	b = append(b, packV3)
	st := packState{t: base}
	for i := range pts {
		b = st.append(b, &pts[i], i == 0 || !sameStrings(&pts[i], &pts[i-1]))
	}
	return b
}

// fixed is v in units of 1/scale when it reads back (float64(k)/scale)
// bit for bit; false otherwise (NaN, ±Inf, -0, more digits, too large).
func fixed(v, scale float64) (int64, bool) {
	r := math.Round(v * scale)
	if !(math.Abs(r) < 1<<53) {
		return 0, false
	}
	k := int64(r)
	return k, math.Float64bits(float64(k)/scale) == math.Float64bits(v)
}

// append packs p after the point st describes, with its strings when
// withStrings.
func (st *packState) append(b []byte, p *Point, withStrings bool) []byte {
	b = st.appendTime(b, p.Time.UnixNano())
	var u [6]int64 // lat, lon, alt, speed, heading, vrate in compact units
	var compact bool
	u[0], u[1], u[2], compact = compactPosition(p)
	vels := [...]*float64{p.SpeedMps, p.HeadingDeg, p.VRateMps}
	for j, v := range vels {
		if v != nil && compact {
			u[3+j], compact = fixed(*v, velScale[j])
		}
	}
	flags := st.flags(p, compact, withStrings)
	b = append(b, flags)
	if compact {
		b = st.appendCompact(b, flags, &u)
	} else {
		b = appendFloatBits(b, p.Lat)
		b = appendFloatBits(b, p.Lon)
		if p.AltM != nil {
			b = appendFloatBits(b, *p.AltM)
		}
		for _, v := range vels {
			if v != nil {
				b = appendFloatBits(b, *v)
			}
		}
	}
	var lambda float64
	if p.Lambda != nil {
		lambda = *p.Lambda
	}
	return st.appendTail(b, flags, lambda, p.AltKind, p.Protocol, p.Sensor, p.Decision)
}

// appendTime packs a point's time, t (Unix ns), after the previous one.
func (st *packState) appendTime(b []byte, t int64) []byte {
	b = binary.AppendUvarint(b, uint64(t-st.t))
	st.t = t
	return b
}

// appendCompact packs a compact point's position and velocity, u (lat,
// lon, alt, speed, heading, vrate in their compact units; those flags
// mark known).
func (st *packState) appendCompact(b []byte, flags byte, u *[6]int64) []byte {
	b = binary.AppendVarint(b, u[0]-st.latU)
	b = binary.AppendVarint(b, u[1]-st.lonU)
	st.latU, st.lonU = u[0], u[1]
	if flags&flagAlt != 0 {
		b = binary.AppendVarint(b, u[2]-st.altD)
		st.altD = u[2]
	}
	for j := range st.vel {
		if flags&(flagSpeed<<j) != 0 {
			b = binary.AppendVarint(b, u[3+j]-st.vel[j])
			st.vel[j] = u[3+j]
		}
	}
	return b
}

// appendTail packs Λ's value when flags say it follows, and the strings
// when they say those do.
func (st *packState) appendTail(b []byte, flags byte, lambda float64, altKind, protocol, sensor, decision string) []byte {
	if flags&flagLambdaValue != 0 {
		b = appendFloatBits(b, lambda)
		st.lambda, st.lambdaKnown = lambda, true
	}
	if flags&flagStrings != 0 {
		for _, s := range [...]string{altKind, protocol, sensor, decision} {
			b = appendString(b, s)
		}
	}
	return b
}

// compactPosition is p's position in 1e-6° and 0.1 m, when it reads back
// bit for bit from them.
func compactPosition(p *Point) (latU, lonU, altD int64, ok bool) {
	latU, okLat := fixed(p.Lat, 1e6)
	lonU, okLon := fixed(p.Lon, 1e6)
	okAlt := true
	if p.AltM != nil {
		altD, okAlt = fixed(*p.AltM, 10)
	}
	return latU, lonU, altD, okLat && okLon && okAlt
}

// flags is p's flags byte.
func (st *packState) flags(p *Point, compact, withStrings bool) byte {
	flags := byte(0)
	for j, v := range [...]*float64{p.AltM, p.SpeedMps, p.HeadingDeg, p.VRateMps} {
		if v != nil {
			flags |= 1 << j
		}
	}
	if p.Lambda != nil {
		flags |= st.lambdaFlags(*p.Lambda)
	}
	return flags | stringsCompact(withStrings, compact)
}

// lambdaFlags are the flags of a known Λ of value v: its value follows
// unless it is the last one written.
func (st *packState) lambdaFlags(v float64) byte {
	if !st.lambdaKnown || math.Float64bits(st.lambda) != math.Float64bits(v) {
		return flagLambda | flagLambdaValue
	}
	return flagLambda
}

// stringsCompact are the flags saying the strings follow and the point
// is compact.
func stringsCompact(withStrings, compact bool) byte {
	flags := byte(0)
	if withStrings {
		flags |= flagStrings
	}
	if compact {
		flags |= flagCompact
	}
	return flags
}

func appendFloatBits(b []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
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
	last                           Point     // the strings of the newest point
	st                             packState // what the next point is packed after
}

// fits reports whether p may be added to c: c has room (maxChunkPoints,
// and maxBytes of packed points), p is newer than c's points and within
// maxChunkSpan of its first, and of its protocol.
func (c *chunk) fits(p *Point, maxBytes int) bool {
	return c.fitsAt(p.Time.UnixNano(), p.Protocol, maxBytes)
}

// fitsAt reports whether a point at t (Unix ns) of protocol may be added
// to c (fits).
func (c *chunk) fitsAt(t int64, protocol string, maxBytes int) bool {
	return c.n < maxChunkPoints && len(c.data) < maxBytes && t > c.t1 && t-c.t0 <= int64(maxChunkSpan) && protocol == c.protocol
}

// add appends p, which fits (or starts an empty chunk).
func (c *chunk) add(p *Point) {
	withStrings := c.begin(p.TrackID, p.Time.UnixNano(), p.Protocol, p.Lat, p.Lon) || !sameStrings(p, &c.last)
	c.data = c.st.append(c.data, p, withStrings)
	c.added(p.Time.UnixNano(), p.Lat, p.Lon)
	if withStrings {
		c.noteStrings(p.AltKind, p.Protocol, p.Sensor, p.Decision)
	}
}

// begin starts an empty chunk with a point of track id at t (Unix ns) of
// protocol at (lat, lon), and reports whether it was empty.
func (c *chunk) begin(id string, t int64, protocol string, lat, lon float64) bool {
	if c.n > 0 {
		return false
	}
	c.track, c.t0, c.t1, c.protocol = id, t, t, protocol
	c.minLat, c.maxLat, c.minLon, c.maxLon = lat, lat, lon, lon
	c.data, c.st = append(c.data[:0], packV3), packState{t: t}
	return true
}

// added notes a point packed into c at t (Unix ns) at (lat, lon).
func (c *chunk) added(t int64, lat, lon float64) {
	c.t1 = t
	c.n++
	c.minLat, c.maxLat = min(c.minLat, lat), max(c.maxLat, lat)
	c.minLon, c.maxLon = min(c.minLon, lon), max(c.maxLon, lon)
}

// noteStrings notes the strings of a point packed with them: the points
// after it with the same four do not write them again.
func (c *chunk) noteStrings(altKind, protocol, sensor, decision string) {
	c.last.AltKind, c.last.Protocol, c.last.Sensor, c.last.Decision = altKind, protocol, sensor, decision
}

// chunksOf packs pts (one track, time order, no two at one time) into
// chunks of at most maxBytes of packed points each.
func chunksOf(pts []Point, maxBytes int) []*chunk {
	var out []*chunk
	for i := range pts {
		if len(out) == 0 || !out[len(out)-1].fits(&pts[i], maxBytes) {
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

// pointReader unpacks what appendPoints packed, in either format.
type pointReader struct {
	b []byte
	// v2: the second format or later; v3: compact velocities.
	v2, v3 bool
	st     packState
	prev   Point // the strings carry over from point to point
}

func newPointReader(b []byte, base int64, trackID string) pointReader {
	r := pointReader{b: b, st: packState{t: base}, prev: Point{TrackID: trackID}}
	if len(b) > 0 && (b[0] == packV2 || b[0] == packV3) {
		r.b, r.v2, r.v3 = b[1:], true, b[0] == packV3
	}
	return r
}

// next unpacks the next point into p; false at the end. Measurements are
// freshly allocated: callers may keep p.
func (r *pointReader) next(p *Point) (bool, error) {
	if len(r.b) == 0 {
		return false, nil
	}
	dt, n := binary.Uvarint(r.b)
	if n <= 0 {
		return false, errCorrupt
	}
	r.st.t += int64(dt)
	*p = r.prev
	p.Time = time.Unix(0, r.st.t).UTC()
	b, err := r.b[n:], error(nil)
	if r.v2 {
		b, err = r.measuresV2(b, p)
	} else {
		b, err = measuresV1(b, p)
	}
	if err != nil {
		return false, err
	}
	r.prev.AltKind, r.prev.Protocol, r.prev.Sensor, r.prev.Decision = p.AltKind, p.Protocol, p.Sensor, p.Decision
	r.b = b
	return true, nil
}

// measuresV2 reads a point of the second format after its time.
func (r *pointReader) measuresV2(b []byte, p *Point) ([]byte, error) {
	if len(b) < 1 {
		return nil, errCorrupt
	}
	flags := b[0]
	vals := new([5]float64) // alt, speed, heading, vrate, Λ: one allocation
	b, err := r.positionV2(b[1:], flags, p, &vals[0])
	if err != nil {
		return nil, err
	}
	if b, err = r.velocity(b, flags, p, vals[1:4]); err != nil {
		return nil, err
	}
	var ok bool
	p.Lambda = nil
	if flags&flagLambdaValue != 0 {
		if r.st.lambda, b, ok = float(b); !ok {
			return nil, errCorrupt
		}
		r.st.lambdaKnown = true
	}
	if flags&flagLambda != 0 {
		if !r.st.lambdaKnown {
			return nil, errCorrupt
		}
		vals[4] = r.st.lambda
		p.Lambda = &vals[4]
	}
	if flags&flagStrings != 0 {
		return readStrings(b, p)
	}
	return b, nil
}

// velocity reads a point's speed, heading and vertical rate (into vals,
// and p's pointing at them when known), compact or whole as flags and
// the format say.
func (r *pointReader) velocity(b []byte, flags byte, p *Point, vals []float64) ([]byte, error) {
	compact := r.v3 && flags&flagCompact != 0
	var ok bool
	for j, dst := range [...]**float64{&p.SpeedMps, &p.HeadingDeg, &p.VRateMps} {
		*dst = nil
		if flags&(flagSpeed<<j) == 0 {
			continue
		}
		if compact {
			var d int64
			if d, b, ok = varint(b); !ok {
				return nil, errCorrupt
			}
			r.st.vel[j] += d
			vals[j] = float64(r.st.vel[j]) / velScale[j]
		} else if vals[j], b, ok = float(b); !ok {
			return nil, errCorrupt
		}
		*dst = &vals[j]
	}
	return b, nil
}

// positionV2 reads a point's lat, lon and alt (into *alt, and p.AltM
// pointing at it when known), compact or whole as flags say.
func (r *pointReader) positionV2(b []byte, flags byte, p *Point, alt *float64) ([]byte, error) {
	p.AltM = nil
	hasAlt := flags&flagAlt != 0
	if hasAlt {
		p.AltM = alt
	}
	var ok bool
	if flags&flagCompact == 0 {
		p.Lat, b, ok = float(b)
		if ok {
			p.Lon, b, ok = float(b)
		}
		if ok && hasAlt {
			*alt, b, ok = float(b)
		}
		if !ok {
			return nil, errCorrupt
		}
		return b, nil
	}
	var d [3]int64
	n := 2
	if hasAlt {
		n = 3
	}
	for i := range n {
		if d[i], b, ok = varint(b); !ok {
			return nil, errCorrupt
		}
	}
	r.st.latU, r.st.lonU = r.st.latU+d[0], r.st.lonU+d[1]
	p.Lat, p.Lon = float64(r.st.latU)/1e6, float64(r.st.lonU)/1e6
	if hasAlt {
		r.st.altD += d[2]
		*alt = float64(r.st.altD) / 10
	}
	return b, nil
}

// measuresV1 reads a point of the first format after its time.
func measuresV1(b []byte, p *Point) ([]byte, error) {
	if len(b) < 17 {
		return nil, errCorrupt
	}
	p.Lat = math.Float64frombits(binary.LittleEndian.Uint64(b))
	p.Lon = math.Float64frombits(binary.LittleEndian.Uint64(b[8:]))
	flags := b[16]
	b = b[17:]
	for j, dst := range [...]**float64{&p.AltM, &p.SpeedMps, &p.HeadingDeg, &p.VRateMps, &p.Lambda} {
		*dst = nil
		if flags&(1<<j) == 0 {
			continue
		}
		v, rest, ok := float(b)
		if !ok {
			return nil, errCorrupt
		}
		*dst, b = &v, rest
	}
	if flags&flagStrings != 0 {
		return readStrings(b, p)
	}
	return b, nil
}

// readStrings reads a point's alt_kind, protocol, sensor and decision.
func readStrings(b []byte, p *Point) ([]byte, error) {
	var err error
	for _, dst := range [...]*string{&p.AltKind, &p.Protocol, &p.Sensor, &p.Decision} {
		if *dst, b, err = readString(b); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func float(b []byte) (float64, []byte, bool) {
	if len(b) < 8 {
		return 0, b, false
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), b[8:], true
}

func varint(b []byte) (int64, []byte, bool) {
	v, n := binary.Varint(b)
	if n <= 0 {
		return 0, b, false
	}
	return v, b[n:], true
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

func uvarint(b []byte) (uint64, int) { return binary.Uvarint(b) }
