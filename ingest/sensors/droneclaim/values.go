package droneclaim

import (
	"math"
	"strconv"
	"strings"
)

// units a numeric string may carry after its number. The feeds write SI
// units only; a value in feet or knots would be misread, so it is refused.
var units = map[string]bool{
	"": true, "m": true, "m/s": true, "dbm": true, "db": true, "deg": true, "°": true,
	"s": true, "hz": true, "%": true, "c": true, "°c": true,
}

// number reads a JSON number or a numeric string with an optional unit.
// ok is false when the value is absent (null, ""); err is set when it is
// there but is not a number.
func number(v any) (x float64, ok bool, err *Error) {
	switch t := v.(type) {
	case nil:
		return 0, false, nil
	case float64:
		return t, true, nil
	case string:
		return numericString(t)
	}
	return 0, false, &Error{Reason: "type", Detail: "want a number"}
}

func numericString(s string) (float64, bool, *Error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false, nil
	}
	i := strings.IndexFunc(s, func(r rune) bool { return !strings.ContainsRune("+-.0123456789eE", r) })
	num, unit := s, ""
	if i >= 0 {
		num, unit = s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	}
	x, err := strconv.ParseFloat(num, 64)
	if err != nil || !units[unit] || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, false, &Error{Reason: "type", Detail: strconv.Quote(clip(s)) + " is not a number in SI units"}
	}
	return x, true, nil
}

// text reads a string (a number is accepted and formatted, as some feeds
// send numeric ids as numbers).
func text(v any) (string, *Error) {
	switch t := v.(type) {
	case nil:
		return "", nil
	case string:
		return strings.TrimSpace(t), nil
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), nil
	}
	return "", &Error{Reason: "type", Detail: "want a string"}
}

func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}

// enum reads an enumeration given as a number or as one of names
// (case-insensitive, punctuation-insensitive). A name it does not know is
// absent, not an error: the decoders' label texts differ from version to
// version (DragonSync maps an unknown one to "unknown" too), while a
// number out of range is refused.
func enum(v any, names map[string]uint8, max uint8) (uint8, bool, *Error) {
	if s, ok := v.(string); ok {
		if n, found := names[normName(s)]; found {
			return n, true, nil
		}
		if _, _, err := numericString(s); err != nil {
			return 0, false, nil
		}
	}
	x, ok, err := number(v)
	if err != nil || !ok {
		return 0, ok, err
	}
	if x < 0 || x > float64(max) || x != math.Trunc(x) {
		return 0, false, &Error{Reason: "range", Detail: "enumeration value out of range"}
	}
	return uint8(x), true, nil
}

func normName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return -1
	}, s)
}

// The names the feeds give to F3411 enumerations (opendroneid's texts and
// cuasd's own *_name values).
var (
	idTypes = map[string]uint8{
		"none": 0, "serialnumberansicta2063a": 1, "serialnumber": 1,
		"caaassignedregistrationid": 2, "caaregistrationid": 2, "utmassigneduuid": 3, "utmassignedid": 3,
		"specificsessionid": 4,
	}
	uaTypes = map[string]uint8{
		"none": 0, "nouatypedefined": 0, "aeroplane": 1, "airplane": 1, "aeroplaneairplanefixedwing": 1,
		"helicoptermultirotor": 2, "helicopterormultirotor": 2,
		"gyroplane": 3, "hybridlift": 4, "vtol": 4, "ornithopter": 5, "glider": 6, "kite": 7, "freeballoon": 8,
		"captiveballoon": 9, "airship": 10, "freefallparachute": 11, "rocket": 12,
		"tetheredpoweredaircraft": 13, "groundobstacle": 14, "other": 15, "othertype": 15,
	}
	statuses = map[string]uint8{
		"undeclared": 0, "ground": 1, "airborne": 2, "emergency": 3,
		"remoteidsystemfailure": 4, "systemfailure": 4,
	}
	heightTypes = map[string]uint8{
		"abovetakeoff": 0, "takeoff": 0, "aboveground": 1, "abovegroundlevel": 1, "agl": 1,
	}
)
