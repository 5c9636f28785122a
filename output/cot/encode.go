package cot

import (
	"math"
	"strings"
	"time"

	"github.com/cuasd/cuasd/events"
)

// Timing of the events cuasd sends.
const (
	// TrackStale is how long after its time a track event goes stale: the
	// publisher announces a live track at least every events.KeepAlive
	// (15 s) and at most every events.MinInterval, so the next update is
	// due before this; a track that stops being announced disappears from
	// the map 20 s after its last update even if "track.lost" is missed.
	TrackStale = events.KeepAlive + events.MinInterval + 4*time.Second
	// ZoneStale is how long a zone drawing lives without being re-sent;
	// zones are announced every events.ZoneRepeat.
	ZoneStale = 3 * events.ZoneRepeat
)

// Caveat is the standing honesty statement every track event carries.
const Caveat = "UNAUTHENTICATED: identity, position and altitude are claims broadcast by the target itself (ADS-B, Remote ID, MAVLink carry no authentication); cuasd did not verify them. Decision support only: a human decides."

// shortCaveat is the caveat in a datagram that must stay small.
const shortCaveat = "UNAUTHENTICATED broadcast claims; a human decides."

// Encoder turns events into CoT 2.0 XML. Its methods append to a caller's
// buffer and do not allocate (BenchmarkAppendTrack), so one Encoder per
// sink and one reused buffer keep the hot path free of garbage. The zero
// value is usable.
type Encoder struct {
	// Compact shortens the remarks (decision, Λ, zone, caveat only): for
	// UDP, where one event must fit one small datagram.
	Compact bool
	// RotaryByReference says which drone-database records are rotary wing
	// (RotaryAirframes): the airframe of a drone whose broadcast does not
	// say but whose product claim matched a record. nil: not used.
	RotaryByReference map[string]bool
}

// UID is the CoT uid of a track: stable per track and unique per cuasd
// instance ("cuasd.default.adsb-4CA1FA"). Only the protocol separator is
// replaced, so two distinct track ids never share a uid.
func UID(instance, trackID string) string {
	return string(appendUID(nil, instance, trackID))
}

func appendUID(dst []byte, instance, trackID string) []byte {
	dst = append(dst, "cuasd."...)
	dst = append(dst, instance...)
	dst = append(dst, '.')
	if i := strings.IndexByte(trackID, ':'); i >= 0 {
		dst = append(dst, trackID[:i]...)
		dst = append(dst, '-')
		trackID = trackID[i+1:]
	}
	return append(dst, trackID...)
}

// operatorSuffix makes an operator point's uid from its track's.
const operatorSuffix = ".operator"

// AppendTrack appends the CoT event of a track event to dst. It reports
// false (and appends nothing) when the track has no position: CoT has no
// event without a point. A track.lost event is sent with stale = time,
// so clients remove the track at once.
func (e *Encoder) AppendTrack(dst []byte, ev *events.TrackEvent) ([]byte, bool) {
	t, a := &ev.Track, ev.Assessment
	if t.Lat == nil || t.Lon == nil {
		return dst, false
	}
	lost := ev.Type == events.TypeTrackLost
	dst = append(dst, xmlHeader...)
	dst = append(dst, `<event version="2.0" uid="`...)
	dst = appendEscapedUID(dst, ev.Instance, t.TrackID, "")
	dst = append(dst, `" type="`...)
	dst = e.appendType(dst, t, a)
	dst = append(dst, `" how="m-g"`...)
	dst = appendTimes(dst, ev.Time, lost, TrackStale)
	dst = append(dst, `><point`...)
	dst = appendNumAttr(dst, "lat", *t.Lat, 7)
	dst = appendNumAttr(dst, "lon", *t.Lon, 7)
	dst = appendAltitude(dst, t)
	dst = append(dst, `/><detail>`...)
	dst = e.appendTrackDetail(dst, ev, lost)
	return append(dst, `</detail></event>`...), true
}

// AppendOperator appends the ground point of the track's operator (the
// Remote ID operator location or the DJI pilot position), linked to the
// track. It reports false when the track states none.
func (e *Encoder) AppendOperator(dst []byte, ev *events.TrackEvent) ([]byte, bool) {
	t := &ev.Track
	if t.OperatorLat == nil || t.OperatorLon == nil {
		return dst, false
	}
	lost := ev.Type == events.TypeTrackLost
	dst = append(dst, xmlHeader...)
	dst = append(dst, `<event version="2.0" uid="`...)
	dst = appendEscapedUID(dst, ev.Instance, t.TrackID, operatorSuffix)
	dst = append(dst, `" type="a-`...)
	dst = append(dst, affiliation(ev.Assessment), '-', 'G')
	dst = append(dst, `" how="m-g"`...)
	dst = appendTimes(dst, ev.Time, lost, TrackStale)
	dst = append(dst, `><point`...)
	dst = appendNumAttr(dst, "lat", *t.OperatorLat, 7)
	dst = appendNumAttr(dst, "lon", *t.OperatorLon, 7)
	dst = append(dst, ` hae="9999999.0" ce="9999999.0" le="9999999.0"/><detail><contact callsign="`...)
	dst = append(dst, "operator of "...)
	dst = appendCallsign(dst, t)
	dst = append(dst, `"/><link uid="`...)
	dst = appendEscapedUID(dst, ev.Instance, t.TrackID, "")
	dst = append(dst, `" type="`...)
	dst = e.appendType(dst, t, ev.Assessment)
	dst = append(dst, `" relation="p-p"/><remarks>`...)
	dst = append(dst, "Operator / pilot location broadcast by the drone "...)
	dst = appendEscaped(dst, t.TrackID, false)
	dst = append(dst, ". "...)
	dst = append(dst, Caveat...)
	return append(dst, `</remarks></detail></event>`...), true
}

// appendEscapedUID appends the escaped uid of a track plus suffix (the
// same text as UID, escaped piecewise so nothing is allocated).
func appendEscapedUID(dst []byte, instance, trackID, suffix string) []byte {
	dst = append(dst, "cuasd."...)
	dst = appendEscaped(dst, instance, true)
	dst = append(dst, '.')
	if i := strings.IndexByte(trackID, ':'); i >= 0 {
		dst = appendEscaped(dst, trackID[:i], true)
		dst = append(dst, '-')
		trackID = trackID[i+1:]
	}
	dst = appendEscaped(dst, trackID, true)
	return append(dst, suffix...)
}

// appendTimes appends the time, start and stale attributes.
func appendTimes(dst []byte, now time.Time, gone bool, life time.Duration) []byte {
	dst = append(dst, ` time="`...)
	dst = appendTime(dst, now)
	dst = append(dst, `" start="`...)
	dst = appendTime(dst, now)
	dst = append(dst, `" stale="`...)
	if !gone {
		now = now.Add(life)
	}
	dst = appendTime(dst, now)
	return append(dst, '"')
}

// sigma95 converts the sources' stated 95 % bounds to the 1-sigma errors
// CoT's ce and le are: a circular 2-D normal error holds 95 % within
// 2.4477 σ (√(−2 ln 0.05)), a 1-D one within 1.96 σ.
const (
	sigma95Circular = 2.4477
	sigma95Linear   = 1.96
)

// appendAltitude appends hae, ce and le. Only a GNSS height above the
// WGS-84 ellipsoid is a hae; a barometric (pressure) altitude or a height
// above mean sea level is sent as it is, with le unknown, because the
// offset to the ellipsoid (QNH, geoid) is not known here. The remarks say
// which it was.
func appendAltitude(dst []byte, t *events.Track) []byte {
	hae, le := Unknown, Unknown
	if t.AltM != nil {
		hae = *t.AltM
		if t.AltKind == "geo" && t.VAccuracyM != nil {
			le = *t.VAccuracyM / sigma95Linear
		}
	}
	ce := Unknown
	if t.HAccuracyM != nil {
		ce = *t.HAccuracyM / sigma95Circular
	}
	dst = appendNumAttr(dst, "hae", hae, 1)
	dst = appendNumAttr(dst, "ce", ce, 1)
	return appendNumAttr(dst, "le", le, 1)
}

// appendTrackDetail appends contact, track, link and remarks.
func (e *Encoder) appendTrackDetail(dst []byte, ev *events.TrackEvent, lost bool) []byte {
	t := &ev.Track
	dst = append(dst, `<contact callsign="`...)
	dst = appendCallsign(dst, t)
	dst = append(dst, `"/>`...)
	if t.HeadingDeg != nil || t.SpeedMps != nil {
		dst = append(dst, `<track`...)
		if t.HeadingDeg != nil {
			dst = appendNumAttr(dst, "course", *t.HeadingDeg, 1)
		}
		if t.SpeedMps != nil {
			dst = appendNumAttr(dst, "speed", *t.SpeedMps, 2)
		}
		dst = append(dst, `/>`...)
	}
	if t.OperatorLat != nil && t.OperatorLon != nil {
		dst = append(dst, `<link uid="`...)
		dst = appendEscapedUID(dst, ev.Instance, t.TrackID, operatorSuffix)
		dst = append(dst, `" type="a-`...)
		dst = append(dst, affiliation(ev.Assessment), '-', 'G')
		dst = append(dst, `" relation="p-c"/>`...)
	}
	dst = append(dst, `<remarks>`...)
	dst = e.appendRemarks(dst, ev, lost)
	return append(dst, `</remarks>`...)
}

// appendCallsign appends what a TAK user reads next to the icon: the
// flight number, else the Remote ID serial or session id, else the MAVLink
// system, else the track id.
func appendCallsign(dst []byte, t *events.Track) []byte {
	switch {
	case t.Callsign != "":
		return appendEscaped(dst, t.Callsign, true)
	case t.UASID != "":
		return appendEscaped(dst, t.UASID, true)
	case strings.HasPrefix(t.TrackID, "mav:"):
		dst = append(dst, "MAV "...)
		return appendEscaped(dst, t.TrackID[4:], true)
	case t.ICAO != "":
		return appendEscaped(dst, t.ICAO, true)
	}
	return appendEscaped(dst, t.TrackID, true)
}

// round1 rounds to one decimal, for remarks.
func round1(v float64) float64 { return math.Round(v*10) / 10 }
