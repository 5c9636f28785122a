package worker

import (
	"bytes"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/adsb"
)

// isSBS reports whether an ADS-B "frame" is an SBS BaseStation MSG line
// (published by the --sbs-connect adapter, issue 21) rather than Mode S
// bytes: a Mode S frame is 7 or 14 bytes, an SBS line at least 25.
func isSBS(frame []byte) bool { return len(frame) > 14 && bytes.HasPrefix(frame, []byte("MSG,")) }

// decodeSBS turns one SBS line into an observation. Its values were
// derived by another decoder (positions included), so they are taken as
// that decoder's claims: position method "sbs".
func decodeSBS(line []byte, out []decode.Observation) ([]decode.Observation, error) {
	var m adsb.SBSMessage
	if err := adsb.ParseSBS(line, &m); err != nil {
		return out, &decodeError{"sbs", err}
	}
	out = append(out, decode.Observation{})
	o := &out[len(out)-1]
	o.Key = adsb.AddressString(m.Address)
	o.ICAO = o.Key
	if m.HasCallsign && m.Callsign.Valid() && m.Callsign.String() != "" {
		o.Callsign = m.Callsign.String()
	}
	if m.HasAltitude {
		o.HasAltitude, o.AltM, o.AltKind = true, float64(m.Altitude)*ftToM, "baro"
	}
	if m.HasGroundspeed && m.HasTrack {
		o.HasVelocity, o.SpeedMps, o.HeadingDeg = true, m.Groundspeed*ktToMps, m.Track
		if m.HasVerticalRate {
			o.VRateMps = float64(m.VerticalRate) * fpmToMs
		}
	}
	if m.HasPosition {
		o.HasPosition, o.Lat, o.Lon, o.PositionMethod = true, m.Lat, m.Lon, "sbs"
	}
	if m.HasSquawk {
		o.Squawk = m.Squawk.String()
	}
	return out, nil
}
