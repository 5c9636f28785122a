package sensors

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cuasd/cuasd/ingest"
)

// Spec is the parsed value of a sensor input flag: an address and the
// options after a '?' (sensor=NAME names the sensor; lat, lon and alt
// place it; expect=DURATION is how long it may be silent before it counts
// as down; see docs/SENSORS.md).
type Spec struct {
	Addr   string
	Sensor string
	// Position is the configured position, nil when not given.
	Position *Position
	// Expect is the sensor's own silence limit (0: the registry's).
	Expect time.Duration
}

// ParseSpec splits "ADDR[?sensor=NAME&lat=..&lon=..&alt=..&expect=..]".
func ParseSpec(s string) (Spec, error) {
	addr, query, _ := strings.Cut(s, "?")
	sp := Spec{Addr: addr}
	q, err := ingest.SpecOptions(s, query, "sensor", "lat", "lon", "alt", "expect")
	if err != nil {
		return sp, err
	}
	sp.Sensor = q.Get("sensor")
	if q.Has("expect") {
		d, err := time.ParseDuration(q.Get("expect"))
		if err != nil || d <= 0 {
			return sp, fmt.Errorf("%q: expect must be a positive duration such as 30s", s)
		}
		sp.Expect = d
	}
	if sp.Position, err = position(q); err != nil {
		return sp, fmt.Errorf("%q: %w", s, err)
	}
	return sp, nil
}

// position reads lat, lon and alt (nil when no position is given).
func position(q url.Values) (*Position, error) {
	if !q.Has("lat") && !q.Has("lon") {
		return nil, nil
	}
	lat, err1 := strconv.ParseFloat(q.Get("lat"), 64)
	lon, err2 := strconv.ParseFloat(q.Get("lon"), 64)
	// written to fail for NaN too, which the sensor registry could then
	// not encode
	if err1 != nil || err2 != nil || !(lat >= -90 && lat <= 90 && lon >= -180 && lon <= 180) {
		return nil, fmt.Errorf("lat and lon must both be given, in degrees")
	}
	p := &Position{Lat: lat, Lon: lon}
	if q.Has("alt") {
		alt, err := strconv.ParseFloat(q.Get("alt"), 64)
		if err != nil || math.IsNaN(alt) || math.IsInf(alt, 0) {
			return nil, fmt.Errorf("alt must be a number of metres, got %q", q.Get("alt"))
		}
		p.AltM, p.HasAlt = alt, true
	}
	return p, nil
}
