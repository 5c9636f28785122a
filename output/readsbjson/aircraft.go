package readsbjson

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cuasd/cuasd/events"
)

// Unit conversions to readsb's units.
const (
	mToFt    = 1 / 0.3048
	mpsToKt  = 1 / 0.514444
	mpsToFpm = 1 / 0.00508
)

// epuByNACp is the 95% horizontal position error bound of each NACp value
// in metres (DO-260B table 2-70), to turn the track's stated accuracy back
// into the NACp readsb reports.
var epuByNACp = [12]float64{0, 18520, 7408, 3704, 1852, 926, 555.6, 185.2, 92.6, 30, 10, 3}

// nacp is the NACp whose bound the accuracy a is: the largest NACp whose
// bound is at least a (0 when a is unknown).
func nacp(a float64) int {
	if a <= 0 {
		return 0
	}
	n := 0
	for i := 1; i < len(epuByNACp); i++ {
		if epuByNACp[i] >= a-1e-6 {
			n = i
		}
	}
	return n
}

// Hex is the readsb "hex" of a track: the ICAO address in lower case,
// "~" and the address for non-ICAO ADS-B addresses, and for every other
// track (drones) "~" and 6 hex digits of the FNV-1a hash of its id —
// stable across restarts and instances, and outside the ICAO space.
func Hex(t *events.Track) string {
	if t.ICAO != "" {
		return strings.ToLower(t.ICAO)
	}
	if k, ok := strings.CutPrefix(t.TrackID, "adsb:~"); ok {
		return "~" + strings.ToLower(k)
	}
	h := uint32(2166136261)
	for i := 0; i < len(t.TrackID); i++ {
		h ^= uint32(t.TrackID[i])
		h *= 16777619
	}
	const digits = "0123456789abcdef"
	b := [7]byte{'~'}
	for i := 0; i < 6; i++ {
		b[6-i] = digits[h>>(4*i)&0xf]
	}
	return string(b[:])
}

// isADSB reports whether the track is an ADS-B / Mode S aircraft.
func isADSB(t *events.Track) bool { return strings.HasPrefix(t.TrackID, "adsb:") }

// emergencies maps the decoder's DO-260B names to readsb's.
var emergencies = map[string]string{
	"no emergency": "none", "general emergency": "general", "lifeguard/medical emergency": "lifeguard",
	"minimum fuel": "minfuel", "no communications": "nordo", "unlawful interference": "unlawful",
	"downed aircraft": "downed", "reserved": "reserved",
}

// validType reports an address type readsb writes as "type" (the track
// event's address_type; anything else falls back to the hex's kind).
func validType(typ string) bool {
	switch typ {
	case "adsb_icao", "adsb_icao_nt", "adsb_other", "tisb_icao", "tisb_other", "tisb_trackfile",
		"adsr_icao", "adsr_other", "mode_s":
		return true
	}
	return false
}

// appendIntegrity appends readsb's version, nac_v, sil and sil_type of an
// aircraft (issue 21). The version is the one the aircraft's operational
// status messages announced; like readsb, an aircraft heard on ADS-B
// without one is version 0 (DO-260B: a receiver assumes version 0 until
// told otherwise), and TIS-B and ADS-R targets have none (readsb keeps
// their versions apart and writes only the ADS-B one).
func appendIntegrity(b []byte, a *events.ADSBInfo) []byte {
	if a == nil {
		return b
	}
	switch a.AddressType {
	case "adsb_icao", "adsb_icao_nt", "adsb_other", "mode_s":
		b = append(b, `,"version":`...)
		v := 0
		if a.Version != nil {
			v = *a.Version
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	if a.NACv != nil {
		b = append(b, `,"nac_v":`...)
		b = strconv.AppendInt(b, int64(*a.NACv), 10)
	}
	if a.SIL != nil {
		b = append(b, `,"sil":`...)
		b = strconv.AppendInt(b, int64(*a.SIL), 10)
	}
	switch a.SILType {
	case "unknown", "perhour", "persample":
		b = append(b, `,"sil_type":"`...)
		b = append(b, a.SILType...)
		b = append(b, '"')
	}
	return b
}

// validCategory reports a readsb emitter category ("A0" to "D7").
func validCategory(c string) bool {
	return len(c) == 2 && c[0] >= 'A' && c[0] <= 'D' && c[1] >= '0' && c[1] <= '7'
}

// AppendAircraft appends the readsb aircraft.json entry of t, as seen at
// now, to b. Fields the track does not know are left out, as readsb does.
func AppendAircraft(b []byte, t *events.Track, now time.Time) []byte {
	return appendAircraft(b, t, now, nil)
}

// acCounts are an aircraft's frame counts (nil: use the track's
// observations, and no rssi).
type acCounts struct {
	messages uint64
	rssi     float64
	hasRSSI  bool
}

func appendAircraft(b []byte, t *events.Track, now time.Time, c *acCounts) []byte {
	adsb := isADSB(t)
	b = append(b, `{"hex":`...)
	b = appendString(b, Hex(t))
	b = append(b, `,"type":`...)
	mlat := adsb && t.PositionSource == "mlat"
	b = appendType(b, t, adsb, mlat)
	if f := flight(t); f != "" {
		b = append(b, `,"flight":`...)
		b = appendString(b, f)
	}
	b = appendKinematics(b, t)
	b = appendNav(b, t.AirData)
	if a := t.ADSB; a != nil && a.NavHeadingDeg != nil {
		b = append(b, `,"nav_heading":`...)
		b = strconv.AppendFloat(b, *a.NavHeadingDeg, 'f', 2, 64)
	}
	if t.Squawk != "" {
		b = append(b, `,"squawk":`...)
		b = appendString(b, t.Squawk)
	}
	if e, ok := emergencies[t.Emergency]; ok {
		b = append(b, `,"emergency":"`...)
		b = append(b, e...)
		b = append(b, '"')
	}
	if validCategory(t.Category) {
		b = append(b, `,"category":"`...)
		b = append(b, t.Category...)
		b = append(b, '"')
	} else if !adsb {
		b = append(b, `,"category":"B6"`...) // unmanned aerial vehicle
	}
	b = appendPosition(b, t, now)
	b = appendIntegrity(b, t.ADSB)
	if mlat {
		// readsb lists the fields multilateration gave.
		b = append(b, `,"mlat":["lat","lon"],"tisb":[],"messages":`...)
	} else {
		b = append(b, `,"mlat":[],"tisb":[],"messages":`...)
	}
	if c != nil {
		b = strconv.AppendUint(b, c.messages, 10)
		if c.hasRSSI {
			b = append(b, `,"rssi":`...)
			b = strconv.AppendFloat(b, c.rssi, 'f', 1, 64)
		}
	} else {
		b = strconv.AppendUint(b, t.Observations, 10)
	}
	return appendSeen(b, t, now)
}

// appendSeen appends "seen" and, for a simulated track listed with
// --demo-outputs, "simulated": true (not readsb's: the mark that it was
// made up, not received; issue 34), and closes the object.
func appendSeen(b []byte, t *events.Track, now time.Time) []byte {
	b = append(b, `,"seen":`...)
	b = appendSeconds(b, now.Sub(t.LastSeen))
	if t.Simulated {
		b = append(b, `,"simulated":true`...)
	}
	return append(b, '}')
}

// appendType appends readsb's "type": other for a drone, mlat for a
// multilaterated aircraft (issue 31), else the address type.
func appendType(b []byte, t *events.Track, adsb, mlat bool) []byte {
	switch {
	case !adsb:
		return append(b, `"other"`...)
	case mlat:
		return append(b, `"mlat"`...) // readsb's type of a multilaterated aircraft
	case t.ADSB != nil && validType(t.ADSB.AddressType):
		b = append(b, '"')
		b = append(b, t.ADSB.AddressType...)
		return append(b, '"')
	case strings.HasPrefix(t.TrackID, "adsb:~"):
		return append(b, `"adsb_other"`...)
	}
	return append(b, `"adsb_icao"`...)
}

// flight is the callsign padded to 8 characters as readsb writes it; for
// drones the Remote ID serial or session id, else the track key.
func flight(t *events.Track) string {
	f := t.Callsign
	if f == "" && !isADSB(t) {
		f = t.UASID
		if f == "" {
			if _, k, ok := strings.Cut(t.TrackID, ":"); ok {
				f = k
			}
		}
	}
	if f == "" {
		return ""
	}
	if len(f) < 8 {
		f += strings.Repeat(" ", 8-len(f))
	}
	return f
}

func appendKinematics(b []byte, t *events.Track) []byte {
	geom := t.AltKind != "baro" && t.AltKind != "" // geo, msl: geometric
	ground := t.ADSB != nil && t.ADSB.AirGround == "ground"
	if ground {
		// readsb: an aircraft on the ground has "ground" for its
		// barometric altitude (a geometric one is still written).
		b = append(b, `,"alt_baro":"ground"`...)
	}
	if t.AltM != nil && (geom || !ground) {
		if geom {
			b = append(b, `,"alt_geom":`...)
		} else {
			b = append(b, `,"alt_baro":`...)
		}
		b = strconv.AppendInt(b, int64(math.Round(*t.AltM*mToFt)), 10)
	}
	if t.SpeedMps != nil {
		b = append(b, `,"gs":`...)
		b = strconv.AppendFloat(b, math.Round(*t.SpeedMps*mpsToKt*10)/10, 'f', -1, 64)
	}
	if t.HeadingDeg != nil {
		b = append(b, `,"track":`...)
		b = strconv.AppendFloat(b, *t.HeadingDeg, 'f', -1, 64)
	}
	if t.VRateMps != nil {
		if geom {
			b = append(b, `,"geom_rate":`...)
		} else {
			b = append(b, `,"baro_rate":`...)
		}
		b = strconv.AppendInt(b, int64(math.Round(*t.VRateMps*mpsToFpm)), 10)
	}
	return b
}

// appendNav appends what the aircraft's Comm-B register 4,0 said of its
// autopilot: the MCP/FCU selected altitude (feet) and the barometric
// pressure setting (hPa), as readsb's nav_altitude_mcp and nav_qnh.
func appendNav(b []byte, a *events.AirData) []byte {
	if a == nil {
		return b
	}
	if a.SelectedAltM != nil {
		b = append(b, `,"nav_altitude_mcp":`...)
		b = strconv.AppendInt(b, int64(math.Round(*a.SelectedAltM*mToFt)), 10)
	}
	if a.BaroSettingHPa != nil {
		b = append(b, `,"nav_qnh":`...)
		b = strconv.AppendFloat(b, math.Round(*a.BaroSettingHPa*10)/10, 'f', -1, 64)
	}
	return b
}

func appendPosition(b []byte, t *events.Track, now time.Time) []byte {
	if t.Lat == nil || t.Lon == nil {
		return b
	}
	b = append(b, `,"lat":`...)
	b = strconv.AppendFloat(b, *t.Lat, 'f', 6, 64)
	b = append(b, `,"lon":`...)
	b = strconv.AppendFloat(b, *t.Lon, 'f', 6, 64)
	if a := t.ADSB; a != nil && a.NIC != nil && a.RcM != nil {
		b = append(b, `,"nic":`...)
		b = strconv.AppendInt(b, int64(*a.NIC), 10)
		b = append(b, `,"rc":`...)
		b = strconv.AppendInt(b, int64(*a.RcM), 10)
	}
	if t.HAccuracyM != nil && isADSB(t) {
		b = append(b, `,"nac_p":`...)
		b = strconv.AppendInt(b, int64(nacp(*t.HAccuracyM)), 10)
	}
	pt := t.LastSeen
	if t.PositionTime != nil {
		pt = *t.PositionTime
	}
	b = append(b, `,"seen_pos":`...)
	return appendSeconds(b, now.Sub(pt))
}

// appendSeconds appends d in seconds with one decimal, never negative (a
// receiver clock slightly ahead of ours is not a frame from the future).
func appendSeconds(b []byte, d time.Duration) []byte {
	return strconv.AppendFloat(b, math.Max(0, math.Round(d.Seconds()*10)/10), 'f', 1, 64)
}

// appendString appends s as a JSON string: quotes, backslashes and control
// characters escaped, invalid UTF-8 replaced (callsigns and serials are
// claims of unauthenticated broadcasts).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, "\\ufffd"...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
