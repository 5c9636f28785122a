package cot

import (
	"strconv"

	"github.com/cuasd/cuasd/events"
)

// altitudeKinds say in words what a track's alt_m is.
var altitudeKinds = map[string]string{
	"geo":  "GNSS height above the WGS-84 ellipsoid",
	"baro": "barometric pressure altitude (standard atmosphere), sent as hae uncorrected",
	"msl":  "height above mean sea level, sent as hae without geoid correction",
}

// appendRemarks appends the human-readable remarks of a track: the
// decision with Λ and its top axes, the zone, the receipt, the sources,
// the altitude's kind and the standing caveat. Compact keeps the first
// line and a short caveat.
func (e *Encoder) appendRemarks(dst []byte, ev *events.TrackEvent, lost bool) []byte {
	if lost {
		dst = append(dst, "Track lost. "...)
	}
	// What the track is comes first (issue 33): "Aircraft: ALERT ..." is
	// not read as a drone alert.
	if a := ev.Assessment; a != nil && a.Class != "" {
		dst = appendUpperFirst(dst, a.Class)
		dst = append(dst, ": "...)
	}
	dst = appendDecision(dst, ev.Assessment, !e.Compact)
	if e.Compact {
		dst = append(dst, ' ')
		return append(dst, shortCaveat...)
	}
	t := &ev.Track
	dst = append(dst, "\nTrack "...)
	dst = appendEscaped(dst, t.TrackID, false)
	dst = appendList(dst, "; protocols ", t.Protocols)
	dst = appendList(dst, "; sensors ", t.Sensors)
	dst = appendIdentity(dst, t)
	if t.AltM != nil {
		dst = append(dst, "\nAltitude "...)
		dst = appendNum(dst, round1(*t.AltM), 1)
		dst = append(dst, " m: "...)
		kind, ok := altitudeKinds[t.AltKind]
		if !ok {
			kind = "of unstated reference"
		}
		dst = append(dst, kind...)
	}
	dst = appendMLAT(dst, t)
	dst = append(dst, '\n')
	return append(dst, Caveat...)
}

// appendMLAT says where a multilaterated position comes from and what
// multilateration made of an ADS-B position claim (issue 31).
func appendMLAT(dst []byte, t *events.Track) []byte {
	if m := t.MLAT; m != nil && t.PositionSource == "mlat" {
		dst = append(dst, "\nPosition by multilateration: "...)
		dst = strconv.AppendInt(dst, int64(m.Sensors), 10)
		dst = append(dst, " sensors, error ±"...)
		dst = appendNum(dst, round1(m.ErrorM), 1)
		dst = append(dst, " m"...)
	}
	v := t.Verification
	if v == nil {
		return dst
	}
	switch v.Status {
	case "contradicted":
		dst = append(dst, "\nADS-B POSITION CONTRADICTED by multilateration: the signal came from "...)
		dst = appendNum(dst, round1(v.DistanceM), 1)
		dst = append(dst, " m away (residual "...)
		dst = appendNum(dst, round1(v.ResidualM), 1)
		dst = append(dst, " m, "...)
		dst = strconv.AppendInt(dst, int64(v.Sensors), 10)
		dst = append(dst, " sensors)"...)
	case "verified":
		dst = append(dst, "\nADS-B position verified by multilateration ("...)
		dst = strconv.AppendInt(dst, int64(v.Sensors), 10)
		dst = append(dst, " sensors)"...)
	}
	return dst
}

// appendDecision appends "ALERT Λ 0.62 (top: ...); zone ...; receipt #n".
func appendDecision(dst []byte, a *events.Assessment, full bool) []byte {
	if a == nil {
		return append(dst, "Not evaluated yet (no position or no zone run)."...)
	}
	dst = appendUpper(dst, a.Decision)
	dst = append(dst, " Λ "...)
	dst = strconv.AppendFloat(dst, a.Lambda, 'f', 2, 64)
	if full && len(a.TopAxes) > 0 {
		dst = append(dst, " (top:"...)
		for i, ax := range a.TopAxes {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, ' ')
			dst = appendEscaped(dst, ax.Name, false)
			dst = append(dst, ' ')
			dst = strconv.AppendFloat(dst, ax.Value, 'f', 2, 64)
		}
		dst = append(dst, ')')
	}
	dst = appendZone(dst, a)
	if a.ReceiptIndex != nil {
		dst = append(dst, "; receipt #"...)
		dst = strconv.AppendInt(dst, *a.ReceiptIndex, 10)
	}
	if full {
		dst = appendAssessmentFlags(dst, a)
	}
	return append(dst, '.')
}

// appendUpper appends s escaped, with ASCII letters upper-cased (no
// allocation, unlike strings.ToUpper).
func appendUpper(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return appendEscaped(dst, s[i:], false)
		}
		c := s[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		dst = appendASCII(dst, c, false)
	}
	return dst
}

// appendZone appends the zone part of the decision line.
func appendZone(dst []byte, a *events.Assessment) []byte {
	if a.Geofence == "" {
		return append(dst, "; no zone"...)
	}
	dst = append(dst, "; zone "...)
	name := a.GeofenceName
	if name == "" {
		name = a.Geofence
	}
	dst = appendEscaped(dst, name, false)
	switch {
	case a.Breach:
		dst = append(dst, " BREACH"...)
	case a.DistanceM != nil:
		dst = append(dst, ", "...)
		dst = strconv.AppendFloat(dst, *a.DistanceM, 'f', 0, 64)
		dst = append(dst, " m"...)
	}
	return dst
}

// appendAssessmentFlags appends the swarm, allow-list, side and caps.
func appendAssessmentFlags(dst []byte, a *events.Assessment) []byte {
	if a.SwarmID != "" {
		dst = append(dst, "; swarm "...)
		dst = appendEscaped(dst, a.SwarmID, false)
	}
	if a.AllowListed {
		dst = append(dst, "; allow-listed"...)
	}
	if a.Side != "" {
		dst = append(dst, "; side "...)
		dst = appendEscaped(dst, a.Side, false)
	}
	dst = appendList(dst, "; caps ", a.Caps)
	if a.HumanDecision {
		dst = append(dst, "; human decision required"...)
	}
	return dst
}

// appendIdentity appends the identity claims a track carries.
func appendIdentity(dst []byte, t *events.Track) []byte {
	for _, f := range [...]struct{ label, v string }{
		{"ICAO ", t.ICAO}, {"UAS ID ", t.UASID}, {"operator ID ", t.OperatorID},
		{"category ", t.Category}, {"squawk ", t.Squawk}, {"EMERGENCY ", t.Emergency},
	} {
		if f.v != "" {
			dst = append(dst, "; "...)
			dst = append(dst, f.label...)
			dst = appendEscaped(dst, f.v, false)
		}
	}
	return dst
}

// appendList appends label and the items, comma separated, when any.
func appendList(dst []byte, label string, items []string) []byte {
	if len(items) == 0 {
		return dst
	}
	dst = append(dst, label...)
	for i, s := range items {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = appendEscaped(dst, s, false)
	}
	return dst
}

// appendUpperFirst appends an ASCII word (a track class) with its first
// letter capitalised.
func appendUpperFirst(dst []byte, s string) []byte {
	if s == "" {
		return dst
	}
	c := s[0]
	if c >= 'a' && c <= 'z' {
		c -= 'a' - 'A'
	}
	dst = append(dst, c)
	return appendEscaped(dst, s[1:], false)
}
