package history

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/cuasd/cuasd/events"
)

// decodeTrackEvent decodes what the recorder needs of a track event
// (events.TrackEvent): v, type, the track's id, position, altitude and its
// kind, velocity, sensors, last_seen and history, and the assessment's
// decision and Λ; every other member is skipped. Written by hand because
// the handler runs for every event: encoding/json spent ~10 µs and 29
// allocations on a two-fix event (BenchmarkPointsOf), most of the
// recorder's CPU after SQLite. It accepts what encoding/json accepts into
// those fields and gives the same values
// (FuzzDecodeTrackEventMatchesEncodingJSON), member names matched
// case-insensitively as encoding/json matches them.
func decodeTrackEvent(data []byte) (*events.TrackEvent, error) {
	d := decoder{b: data}
	ev := &events.TrackEvent{}
	d.ws()
	if d.literal("null") {
		return ev, d.end()
	}
	err := d.object(func(key []byte) error {
		switch string(key) {
		case "v":
			return d.int(&ev.V)
		case "type":
			return d.str(&ev.Type)
		case "track":
			return d.track(&ev.Track)
		case "assessment":
			return d.assessment(&ev.Assessment)
		}
		return d.skip()
	})
	if err != nil {
		return nil, err
	}
	return ev, d.end()
}

// decoder reads JSON from b at i.
type decoder struct {
	b []byte
	i int
}

var errSyntax = errors.New("track event: not the JSON expected")

func (d *decoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// end checks that only whitespace follows the value.
func (d *decoder) end() error {
	d.ws()
	if d.i != len(d.b) {
		return errSyntax
	}
	return nil
}

// literal consumes lit (null, true, false) when it is next.
func (d *decoder) literal(lit string) bool {
	if len(d.b)-d.i >= len(lit) && string(d.b[d.i:d.i+len(lit)]) == lit {
		d.i += len(lit)
		return true
	}
	return false
}

// object reads an object (or null), calling member for each member with
// the decoder at its value.
func (d *decoder) object(member func(key []byte) error) error {
	return d.list('{', '}', func() error {
		key, err := d.rawString()
		if err != nil {
			return err
		}
		d.ws()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return errSyntax
		}
		d.i++
		d.ws()
		return member(foldKey(key))
	})
}

// array reads an array (or null), calling elem with the decoder at each
// element; null calls none.
func (d *decoder) array(elem func() error) error { return d.list('[', ']', elem) }

// list reads what open and close enclose (or null), calling elem with the
// decoder at each comma-separated item: an object's members, an array's
// elements.
func (d *decoder) list(open, close byte, elem func() error) error {
	d.ws()
	if d.literal("null") {
		return nil
	}
	if d.i >= len(d.b) || d.b[d.i] != open {
		return errSyntax
	}
	d.i++
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == close {
		d.i++
		return nil
	}
	for {
		d.ws()
		if err := elem(); err != nil {
			return err
		}
		d.ws()
		if d.i >= len(d.b) {
			return errSyntax
		}
		d.i++
		switch d.b[d.i-1] {
		case ',':
			continue
		case close:
			return nil
		}
		return errSyntax
	}
}

// track reads the members of events.Track the recorder uses.
func (d *decoder) track(t *events.Track) error {
	return d.object(func(key []byte) error {
		switch string(key) {
		case "track_id":
			return d.str(&t.TrackID)
		case "lat":
			return d.optFloat(&t.Lat)
		case "lon":
			return d.optFloat(&t.Lon)
		case "alt_m":
			return d.optFloat(&t.AltM)
		case "alt_kind":
			return d.str(&t.AltKind)
		case "speed_mps":
			return d.optFloat(&t.SpeedMps)
		case "heading_deg":
			return d.optFloat(&t.HeadingDeg)
		case "vertical_rate_mps":
			return d.optFloat(&t.VRateMps)
		case "last_seen":
			return d.time(&t.LastSeen)
		case "sensors":
			return d.strings(&t.Sensors)
		case "history":
			return d.history(&t.History)
		}
		return d.skip()
	})
}

// strings reads an array of strings; null sets nil, as encoding/json does.
func (d *decoder) strings(dst *[]string) error {
	if d.literal("null") {
		*dst = nil
		return nil
	}
	out := []string{}
	err := d.array(func() error {
		var s string
		err := d.str(&s)
		out = append(out, s)
		return err
	})
	*dst = out
	return err
}

// history reads the track's points; null sets nil.
func (d *decoder) history(dst *[]events.Point) error {
	if d.literal("null") {
		*dst = nil
		return nil
	}
	out := make([]events.Point, 0, 8)
	err := d.array(func() error {
		var p events.Point
		err := d.object(func(key []byte) error {
			switch string(key) {
			case "t":
				return d.time(&p.T)
			case "lat":
				return d.float(&p.Lat)
			case "lon":
				return d.float(&p.Lon)
			case "alt_m":
				return d.optFloat(&p.AltM)
			}
			return d.skip()
		})
		out = append(out, p)
		return err
	})
	*dst = out
	return err
}

// assessment reads the decision and Λ of an assessment; null sets nil.
func (d *decoder) assessment(dst **events.Assessment) error {
	if d.literal("null") {
		*dst = nil
		return nil
	}
	if *dst == nil {
		*dst = &events.Assessment{}
	}
	a := *dst
	return d.object(func(key []byte) error {
		switch string(key) {
		case "decision":
			return d.str(&a.Decision)
		case "lambda":
			return d.float(&a.Lambda)
		}
		return d.skip()
	})
}

// rawString reads a string, returning its bytes (unescaped; a view into
// the input when it needs no unescaping).
func (d *decoder) rawString() ([]byte, error) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, errSyntax
	}
	start := d.i + 1
	for j := start; j < len(d.b); j++ {
		c := d.b[j]
		if c == '"' {
			d.i = j + 1
			return d.b[start:j], nil
		}
		if c < 0x20 || c == '\\' || c >= 0x80 {
			return d.slowString()
		}
	}
	return nil, errSyntax
}

// slowString reads a string with escapes or non-ASCII bytes through
// encoding/json (which also replaces invalid UTF-8 as it always does).
func (d *decoder) slowString() ([]byte, error) {
	start := d.i
	j := start + 1
	for ; j < len(d.b) && d.b[j] != '"'; j++ {
		if d.b[j] == '\\' {
			j++
		}
	}
	if j >= len(d.b) {
		return nil, errSyntax
	}
	var s string
	if err := json.Unmarshal(d.b[start:j+1], &s); err != nil {
		return nil, errSyntax
	}
	d.i = j + 1
	return []byte(s), nil
}

// str reads a string into dst; null leaves dst as it is.
func (d *decoder) str(dst *string) error {
	if d.literal("null") {
		return nil
	}
	b, err := d.rawString()
	if err == nil {
		*dst = string(b)
	}
	return err
}

// number reads a number literal, checking the JSON grammar (strconv
// accepts more: hex, "inf", ".5").
func (d *decoder) number() (string, error) {
	b, start := d.b, d.i
	i := start
	if i < len(b) && b[i] == '-' {
		i++
	}
	i = intPart(b, i)
	if i < 0 {
		return "", errSyntax
	}
	if i < len(b) && b[i] == '.' {
		if i = digits(b, i+1); b[i-1] == '.' {
			return "", errSyntax
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i = expPart(b, i+1); i < 0 {
			return "", errSyntax
		}
	}
	d.i = i
	// A view of the input: strconv does not keep it (an error that
	// quotes it is dropped by the callers).
	return unsafe.String(&b[start], i-start), nil
}

// intPart is the end of the integer part starting at i (0 or digits not
// starting with 0), -1 when there is none.
func intPart(b []byte, i int) int {
	switch {
	case i < len(b) && b[i] == '0':
		return i + 1
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		return digits(b, i)
	}
	return -1
}

// expPart is the end of an exponent's sign and digits starting at i, -1
// when it has no digits.
func expPart(b []byte, i int) int {
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	if j := digits(b, i); j > i {
		return j
	}
	return -1
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// int reads an integer; null leaves dst as it is.
func (d *decoder) int(dst *int) error {
	if d.literal("null") {
		return nil
	}
	s, err := d.number()
	if err != nil {
		return err
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return errSyntax
	}
	*dst = int(v)
	return nil
}

// float reads a number; null leaves dst as it is.
func (d *decoder) float(dst *float64) error {
	if d.literal("null") {
		return nil
	}
	s, err := d.number()
	if err != nil {
		return err
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errSyntax
	}
	*dst = v
	return nil
}

// optFloat reads an optional number; null sets nil.
func (d *decoder) optFloat(dst **float64) error {
	if d.literal("null") {
		*dst = nil
		return nil
	}
	var v float64
	if err := d.float(&v); err != nil {
		return err
	}
	*dst = &v
	return nil
}

// time reads an RFC 3339 time; null leaves dst as it is. The form cuasd
// writes (UTC, "Z", up to 9 fractional digits) is read directly;
// anything else goes through time.Time's own UnmarshalJSON.
func (d *decoder) time(dst *time.Time) error {
	if d.literal("null") {
		return nil
	}
	start := d.i
	b, err := d.rawString()
	if err != nil {
		return err
	}
	if t, ok := fastTime(b); ok {
		*dst = t
		return nil
	}
	if err := dst.UnmarshalJSON(d.b[start:d.i]); err != nil {
		return errSyntax
	}
	return nil
}

// fastTime parses YYYY-MM-DDTHH:MM:SS[.f…]Z with 1–9 fractional digits,
// the form time.RFC3339Nano writes in UTC; false for anything else.
func fastTime(b []byte) (time.Time, bool) {
	n := len(b)
	if n < 20 || n > 30 || !rfc3339Shape(b) {
		return time.Time{}, false
	}
	year, month, day := decimal(b[0:4]), decimal(b[5:7]), decimal(b[8:10])
	hour, minute, sec := decimal(b[11:13]), decimal(b[14:16]), decimal(b[17:19])
	nsec, ok := fraction(b[19 : n-1])
	if !ok || year < 0 || !in(month, 1, 12) || !in(day, 1, 31) || !in(hour, 0, 23) || !in(minute, 0, 59) || !in(sec, 0, 59) {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	if t.Day() != day { // 31 April and the like
		return time.Time{}, false
	}
	return t, true
}

// rfc3339Shape reports whether b has the separators of
// YYYY-MM-DDTHH:MM:SS…Z (of a length checked by the caller).
func rfc3339Shape(b []byte) bool {
	return b[4] == '-' && b[7] == '-' && b[10] == 'T' && b[13] == ':' && b[16] == ':' && b[len(b)-1] == 'Z'
}

func in(v, lo, hi int) bool { return v >= lo && v <= hi }

// decimal is the value of b's digits, -1 when one is not a digit.
func decimal(b []byte) int {
	v := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		v = v*10 + int(c-'0')
	}
	return v
}

// fraction is the nanoseconds of "" or "." and 1–9 digits.
func fraction(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, true
	}
	if b[0] != '.' || len(b) < 2 || len(b) > 10 {
		return 0, false
	}
	v := decimal(b[1:])
	for k := len(b) - 1; k < 9; k++ {
		v *= 10
	}
	return v, v >= 0
}

// skip reads and discards any value, checking its syntax.
func (d *decoder) skip() error {
	if d.i >= len(d.b) {
		return errSyntax
	}
	switch c := d.b[d.i]; {
	case c == '"':
		_, err := d.rawString()
		return err
	case c == '{':
		return d.object(func([]byte) error { return d.skip() })
	case c == '[':
		return d.array(d.skip)
	case c == 't' && d.literal("true"), c == 'f' && d.literal("false"), c == 'n' && d.literal("null"):
		return nil
	}
	_, err := d.number()
	return err
}

// foldKey is key as encoding/json matches member names: case-insensitively
// (ASCII letters, and runes through unicode.ToUpper(unicode.ToLower(r)),
// so that the Kelvin sign is a k). Keys in lower-case ASCII, every key
// cuasd writes, are returned as they are.
func foldKey(key []byte) []byte {
	plain := true
	for _, c := range key {
		if c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return key
	}
	out := make([]byte, 0, len(key))
	for i := 0; i < len(key); {
		if c := key[i]; c < utf8.RuneSelf {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(key[i:])
		f := unicode.ToUpper(unicode.ToLower(r))
		if f < utf8.RuneSelf && f >= 'A' && f <= 'Z' {
			f += 'a' - 'A'
		}
		out = utf8.AppendRune(out, f)
		i += n
	}
	return out
}
