package fusion

import (
	"math"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/adsb"
)

// Unit conversions of the Comm-B claims (knots, feet) into SI.
const (
	ftToM   = 0.3048
	ktToMps = 0.514444
)

// AirData is what an aircraft's Comm-B replies (Mode S enhanced
// surveillance, DF20/21) said: selected altitude, airspeeds, heading,
// roll, wind and temperature, in SI units. Each value is the latest one
// received; Has* says it was ever received. Every value is a claim of an
// unauthenticated transponder.
type AirData struct {
	HasSelectedAltitude bool
	SelectedAltM        float64 // MCP/FCU selected altitude (else FMS), metres
	HasBaroSetting      bool
	BaroSettingHPa      float64
	HasIAS              bool
	IASMps              float64
	HasTAS              bool
	TASMps              float64
	HasMach             bool
	Mach                float64
	HasMagneticHeading  bool
	MagneticHeadingDeg  float64
	HasRoll             bool
	RollDeg             float64
	HasWind             bool
	WindSpeedMps        float64
	WindFromDeg         float64
	HasTemperature      bool
	TemperatureC        float64
	// Updated is the receive time (Unix ns) of the last reply that changed
	// any of the above.
	Updated int64
}

// applyCommB resolves the MB field of a Comm-B reply against the track's
// own state. The reply reached this track only because the track was
// already known from a CRC-checked squitter: a Comm-B reply's parity is
// overlaid with the address, so the address is whatever the CRC remainder
// is, and a corrupted reply yields some other, usually unknown, address
// (Store.applyLocked drops replies for unknown aircraft). The track's ADS-B
// ground speed, track and barometric altitude then rule out registers the
// payload cannot be for this aircraft; only a register that is left
// without rival is taken.
func applyCommB(t *track, o *decode.Observation, recv int64) {
	var k adsb.KnownState
	if t.hasAlt && t.altKind == "baro" {
		k.HasAltitude, k.Altitude = true, int32(math.Round(t.alt/ftToM))
	}
	if t.hasVel {
		// The heading of an ADS-B velocity is the track over the ground
		// except for the rare airspeed subtypes; the limits allow for it.
		k.HasGroundspeed, k.Groundspeed = true, t.speed/ktToMps
		k.HasTrack, k.Track = true, t.heading
	}
	var c adsb.CommB
	adsb.DecodeCommB(o.CommB, &k, adsb.CommBOptions{Meteo: true}, &c)
	if c.BDS == 0 || c.Ambiguous {
		return
	}
	if t.air == nil {
		t.air = &AirData{}
	}
	if t.air.apply(&c) {
		t.air.Updated = recv
	}
}

// apply takes the values of the decided register; it reports whether it
// took any.
func (a *AirData) apply(c *adsb.CommB) bool {
	switch c.BDS {
	case adsb.BDS40:
		return a.applyIntent(&c.Intent)
	case adsb.BDS50:
		v := &c.TrackTurn
		if v.HasRoll {
			a.HasRoll, a.RollDeg = true, v.Roll
		}
		if v.HasTAS {
			a.HasTAS, a.TASMps = true, v.TAS*ktToMps
		}
		return v.HasRoll || v.HasTAS
	case adsb.BDS60:
		return a.applyHeadingSpeed(&c.HeadingSpeed)
	case adsb.BDS44:
		v := &c.Meteo
		if v.HasWind {
			a.HasWind, a.WindSpeedMps, a.WindFromDeg = true, v.WindSpeed*ktToMps, v.WindDirection
		}
		a.HasTemperature, a.TemperatureC = true, v.Temperature
		return true
	case adsb.BDS45:
		if c.Hazard.HasTemperature {
			a.HasTemperature, a.TemperatureC = true, c.Hazard.Temperature
			return true
		}
	}
	return false
}

func (a *AirData) applyHeadingSpeed(v *adsb.HeadingSpeed) bool {
	if v.HasHeading {
		a.HasMagneticHeading, a.MagneticHeadingDeg = true, v.Heading
	}
	if v.HasIAS {
		a.HasIAS, a.IASMps = true, v.IAS*ktToMps
	}
	if v.HasMach {
		a.HasMach, a.Mach = true, v.Mach
	}
	return v.HasHeading || v.HasIAS || v.HasMach
}

func (a *AirData) applyIntent(v *adsb.VerticalIntention) bool {
	switch {
	case v.HasMCPAltitude:
		a.HasSelectedAltitude, a.SelectedAltM = true, float64(v.MCPAltitude)*ftToM
	case v.HasFMSAltitude:
		a.HasSelectedAltitude, a.SelectedAltM = true, float64(v.FMSAltitude)*ftToM
	}
	if v.HasBaroSetting {
		a.HasBaroSetting, a.BaroSettingHPa = true, v.BaroSetting
	}
	return v.HasMCPAltitude || v.HasFMSAltitude || v.HasBaroSetting
}
