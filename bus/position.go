package bus

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SensorPosition is an antenna's position as a receiver states it in
// HeaderSensorPosition: degrees north and east, and metres above the
// WGS-84 ellipsoid.
type SensorPosition struct {
	Lat, Lon, AltM float64
}

// The range of an antenna's height above the WGS-84 ellipsoid, metres:
// the Dead Sea shore to above any mountain station. A value outside is a
// unit mistake (feet) or a wrong field, never an antenna.
const (
	MinSensorAltM = -500
	MaxSensorAltM = 9000
)

// MaxSensorPositionLen bounds HeaderSensorPosition: three decimals with
// far more digits than any receiver's fix has.
const MaxSensorPositionLen = 80

// ParseSensorPosition reads a HeaderSensorPosition value: exactly three
// comma-separated decimal numbers (spaces around them allowed; no hex,
// no Inf or NaN, no underscores), lat in [-90, 90], lon in [-180, 180],
// alt in [MinSensorAltM, MaxSensorAltM]. 0,0 is refused: it is what a
// receiver without a position fix reports, not a place with antennas.
// The error says what was wrong, for a dead letter's reason.
func ParseSensorPosition(s string) (SensorPosition, error) {
	var p SensorPosition
	if len(s) > MaxSensorPositionLen {
		return p, positionError(s, fmt.Errorf("%d bytes; at most %d", len(s), MaxSensorPositionLen))
	}
	fields := strings.Split(s, ",")
	if len(fields) != 3 {
		return p, positionError(s, errors.New("want LAT,LON,ALT (degrees, degrees, metres above the WGS-84 ellipsoid)"))
	}
	var v [3]float64
	for i, f := range fields {
		f = strings.TrimSpace(f)
		if !decimal(f) {
			return p, positionError(s, fmt.Errorf("%s %q is not a decimal number", positionField[i], f))
		}
		var err error
		if v[i], err = strconv.ParseFloat(f, 64); err != nil || math.IsInf(v[i], 0) {
			return p, positionError(s, fmt.Errorf("%s %q is not a finite number", positionField[i], f))
		}
	}
	p = SensorPosition{Lat: v[0], Lon: v[1], AltM: v[2]}
	return p, p.Check()
}

var positionField = [3]string{"lat", "lon", "alt"}

// Check says why p is not an antenna's position, or nil.
func (p SensorPosition) Check() error {
	switch {
	case !(p.Lat >= -90 && p.Lat <= 90):
		return positionError(p.String(), errors.New("lat out of range (-90 to 90 degrees)"))
	case !(p.Lon >= -180 && p.Lon <= 180):
		return positionError(p.String(), errors.New("lon out of range (-180 to 180 degrees)"))
	case p.Lat == 0 && p.Lon == 0:
		return positionError(p.String(), errors.New("0,0 is a receiver without a position fix"))
	case !(p.AltM >= MinSensorAltM && p.AltM <= MaxSensorAltM):
		return positionError(p.String(), fmt.Errorf("alt out of range (%d to %d metres above the WGS-84 ellipsoid)", MinSensorAltM, MaxSensorAltM))
	}
	return nil
}

// StatedPosition reads the HeaderSensorPosition values vs of one message:
// ok is false without one; a malformed value is an error, and so are two
// or more (two values are two claims, and cuasd does not pick one). The
// intake and the decoders read the header through it alike.
func StatedPosition(vs []string) (p SensorPosition, ok bool, err error) {
	switch len(vs) {
	case 0:
		return SensorPosition{}, false, nil
	case 1:
	default:
		return SensorPosition{}, false, fmt.Errorf("%d %s headers; one position per message", len(vs), HeaderSensorPosition)
	}
	if p, err = ParseSensorPosition(vs[0]); err != nil {
		return SensorPosition{}, false, err
	}
	return p, true, nil
}

// String is p as HeaderSensorPosition carries it: each number the
// shortest that reads back the same, with an exponent where that is
// shorter ('g'), so that any position ParseSensorPosition accepts fits in
// MaxSensorPositionLen again (at most 24 bytes a number; in plain
// decimals 1e-77° took 80 alone, found by FuzzSensorPosition).
func (p SensorPosition) String() string {
	return strconv.FormatFloat(p.Lat, 'g', -1, 64) + "," + strconv.FormatFloat(p.Lon, 'g', -1, 64) + "," +
		strconv.FormatFloat(p.AltM, 'g', -1, 64)
}

// positionError names the refused value, quoted and cut to at most
// MaxSensorPositionLen+3 bytes: cut before quoting, 80 bytes that each
// quote as \xNN made an error of 400 (FuzzSensorPosition).
func positionError(value string, err error) error {
	q := strconv.Quote(value)
	if len(q) > MaxSensorPositionLen {
		q = strings.ToValidUTF8(q[:MaxSensorPositionLen], "") + "…"
	}
	return &Error{Op: HeaderSensorPosition + " " + q, Err: err}
}

// decimal reports whether f is a plain decimal number: an optional sign,
// digits with at most one point, an optional exponent. strconv.ParseFloat
// alone also takes hex floats, "Inf", "NaN" and underscores.
func decimal(f string) bool {
	if f == "" {
		return false
	}
	digits := false
	for i := 0; i < len(f); i++ {
		switch c := f[i]; {
		case c >= '0' && c <= '9':
			digits = true
		case c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E':
		default:
			return false
		}
	}
	return digits
}
