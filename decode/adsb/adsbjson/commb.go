package adsbjson

import (
	"fmt"

	"github.com/cuasd/cuasd/decode/adsb"
)

// Known is what the caller already knows about the aircraft of the Comm-B
// replies (DF20/21) in a request, from its ADS-B: ground speed (knots),
// track (degrees true) and barometric altitude (feet). It rules out or
// ranks the registers a reply could hold. In a batch, the CRC-checked
// DF17 frames earlier in the batch add to it per address.
type Known struct {
	Groundspeed *float64 `json:"groundspeed,omitempty"`
	Track       *float64 `json:"track,omitempty"`
	Altitude    *int     `json:"altitude,omitempty"`
}

func (k *Known) check() *Problem {
	if k == nil {
		return nil
	}
	if g := k.Groundspeed; g != nil && !(*g >= 0 && *g <= 2000) {
		return badRequest("known.groundspeed", "known.groundspeed must be between 0 and 2000 knots")
	}
	if t := k.Track; t != nil && !(*t >= 0 && *t < 360) {
		return badRequest("known.track", "known.track must be at least 0 and below 360 degrees")
	}
	if a := k.Altitude; a != nil && (*a < -1500 || *a > 130000) {
		return badRequest("known.altitude", "known.altitude must be between -1500 and 130000 feet")
	}
	return nil
}

func (k *Known) state() adsb.KnownState {
	var s adsb.KnownState
	if k == nil {
		return s
	}
	if k.Groundspeed != nil {
		s.HasGroundspeed, s.Groundspeed = true, *k.Groundspeed
	}
	if k.Track != nil {
		s.HasTrack, s.Track = true, *k.Track
	}
	if k.Altitude != nil {
		s.HasAltitude, s.Altitude = true, int32(*k.Altitude)
	}
	return s
}

// batchState keeps, per address, what the CRC-checked squitters of a
// batch said, for the Comm-B replies that follow them.
type batchState map[uint32]*adsb.KnownState

func (b batchState) learn(m *adsb.Message) {
	if m.CRC != adsb.CRCValid || (m.DF != 17 && m.DF != 11) {
		return
	}
	s := b[m.Address]
	if s == nil {
		s = &adsb.KnownState{}
		b[m.Address] = s
	}
	if m.DF == 17 && m.HasAltitude && !m.AltitudeGNSS {
		s.HasAltitude, s.Altitude = true, m.Altitude
	}
	if m.Kind == adsb.KindAirborneVelocity && m.HasGroundspeed && m.HasTrack {
		s.HasGroundspeed, s.Groundspeed, s.HasTrack, s.Track = true, m.Groundspeed, true, m.Track
	}
}

// commBKnown merges the request's known state with what the batch said
// about the reply's address (the batch's is fresher).
func (b batchState) commBKnown(m *adsb.Message, req *Known) (adsb.KnownState, bool) {
	k := req.state()
	s, heard := b[m.Address]
	if !heard {
		return k, false
	}
	if s.HasAltitude {
		k.HasAltitude, k.Altitude = true, s.Altitude
	}
	if s.HasGroundspeed {
		k.HasGroundspeed, k.Groundspeed, k.HasTrack, k.Track = true, s.Groundspeed, true, s.Track
	}
	return k, true
}

// CommB is the JSON of a Comm-B reply's MB field. Each register object is
// present when the payload is a candidate for that register; names and
// units follow pyModeS (knots, feet, degrees, ft/min, hPa, °C).
type CommB struct {
	MB string `json:"mb"`
	// Ambiguous: more than one register fits and the known state did not
	// separate them; bds is then only the first guess.
	Ambiguous bool `json:"ambiguous"`
	// Rejected are registers whose format fits but whose values contradict
	// the known state.
	Rejected []string `json:"rejected,omitempty"`
	// AddressKnown (batches only) says whether the reply's address was
	// heard in a CRC-checked DF11/DF17 earlier in the batch.
	AddressKnown *bool `json:"address_known,omitempty"`

	BDS10 *BDS10 `json:"bds10,omitempty"`
	BDS17 *BDS17 `json:"bds17,omitempty"`
	BDS20 *BDS20 `json:"bds20,omitempty"`
	BDS30 *BDS30 `json:"bds30,omitempty"`
	BDS40 *BDS40 `json:"bds40,omitempty"`
	BDS44 *BDS44 `json:"bds44,omitempty"`
	BDS45 *BDS45 `json:"bds45,omitempty"`
	BDS50 *BDS50 `json:"bds50,omitempty"`
	BDS60 *BDS60 `json:"bds60,omitempty"`
}

// BDS10 is the data link capability report.
type BDS10 struct {
	Continuation     bool `json:"continuation"`
	OverlayCommand   bool `json:"overlay_command_capability"`
	ACASOperational  bool `json:"acas_operational"`
	SubnetVersion    int  `json:"mode_s_subnetwork_version"`
	Level5           bool `json:"transponder_level5"`
	SpecificServices bool `json:"mode_s_specific_services"`
	UplinkELM        int  `json:"uplink_elm_throughput"`
	DownlinkELM      int  `json:"downlink_elm_throughput"`
	Identification   bool `json:"aircraft_identification_capability"`
	Squitter         bool `json:"squitter_capability"`
	SurveillanceID   bool `json:"surveillance_identifier_code"`
	CommonUsageGICB  bool `json:"common_usage_gicb_capability"`
	ACASHybrid       bool `json:"acas_hybrid_surveillance"`
	ACASRA           bool `json:"acas_resolution_advisory"`
	ACASVersion      int  `json:"acas_rtca_version"`
	DTE              int  `json:"dte_status"`
}

// BDS17 is the common usage GICB capability report.
type BDS17 struct {
	SupportedBDS []string `json:"supported_bds"`
}

// BDS20 is the aircraft identification.
type BDS20 struct {
	Callsign string `json:"callsign"`
}

// BDS30 is the ACAS active resolution advisory.
type BDS30 struct {
	IssuedRA         bool     `json:"issued_ra"`
	Corrective       bool     `json:"corrective"`
	DownwardSense    bool     `json:"downward_sense"`
	IncreasedRate    bool     `json:"increased_rate"`
	SenseReversal    bool     `json:"sense_reversal"`
	AltitudeCrossing bool     `json:"altitude_crossing"`
	Positive         bool     `json:"positive"`
	NoBelow          bool     `json:"no_below"`
	NoAbove          bool     `json:"no_above"`
	NoLeft           bool     `json:"no_left"`
	NoRight          bool     `json:"no_right"`
	Terminated       bool     `json:"ra_terminated"`
	MultipleThreat   bool     `json:"multiple_threat"`
	ThreatType       int      `json:"threat_type_indicator"`
	ThreatICAO       string   `json:"threat_icao,omitempty"`
	ThreatAltitude   *int     `json:"threat_altitude,omitempty"`
	ThreatRange      *float64 `json:"threat_range,omitempty"`
	ThreatBearing    *float64 `json:"threat_bearing,omitempty"`
}

// BDS40 is the selected vertical intention.
type BDS40 struct {
	MCPAltitude  *int     `json:"selected_altitude_mcp,omitempty"`
	FMSAltitude  *int     `json:"selected_altitude_fms,omitempty"`
	BaroSetting  *float64 `json:"baro_pressure_setting,omitempty"`
	VNAV         *bool    `json:"vnav_mode,omitempty"`
	AltitudeHold *bool    `json:"altitude_hold_mode,omitempty"`
	Approach     *bool    `json:"approach_mode,omitempty"`
	TargetSource string   `json:"target_altitude_source,omitempty"`
}

// BDS44 is the meteorological routine air report.
type BDS44 struct {
	FigureOfMerit int      `json:"figure_of_merit"`
	WindSpeed     *float64 `json:"wind_speed,omitempty"`
	WindDirection *float64 `json:"wind_direction,omitempty"`
	Temperature   float64  `json:"static_air_temperature"`
	Pressure      *float64 `json:"static_pressure,omitempty"`
	Turbulence    *int     `json:"turbulence,omitempty"`
	Humidity      *float64 `json:"humidity,omitempty"`
}

// BDS45 is the meteorological hazard report.
type BDS45 struct {
	Turbulence  *int     `json:"turbulence,omitempty"`
	WindShear   *int     `json:"wind_shear,omitempty"`
	Microburst  *int     `json:"microburst,omitempty"`
	Icing       *int     `json:"icing,omitempty"`
	WakeVortex  *int     `json:"wake_vortex,omitempty"`
	Temperature *float64 `json:"static_air_temperature,omitempty"`
	Pressure    *float64 `json:"static_pressure,omitempty"`
	RadioHeight *int     `json:"radio_height,omitempty"`
}

// BDS50 is the track and turn report.
type BDS50 struct {
	Roll        *float64 `json:"roll,omitempty"`
	TrueTrack   *float64 `json:"true_track,omitempty"`
	Groundspeed *float64 `json:"groundspeed,omitempty"`
	TrackRate   *float64 `json:"track_rate,omitempty"`
	TAS         *float64 `json:"true_airspeed,omitempty"`
}

// BDS60 is the heading and speed report.
type BDS60 struct {
	Heading      *float64 `json:"magnetic_heading,omitempty"`
	IAS          *float64 `json:"indicated_airspeed,omitempty"`
	Mach         *float64 `json:"mach,omitempty"`
	BaroRate     *int     `json:"baro_vertical_rate,omitempty"`
	InertialRate *int     `json:"inertial_vertical_rate,omitempty"`
}

func optF(ok bool, v float64) *float64 {
	if !ok {
		return nil
	}
	return fp(v)
}

func optI[T int32 | uint8](ok bool, v T) *int {
	if !ok {
		return nil
	}
	return ip(int(v))
}

func optB(ok, v bool) *bool {
	if !ok {
		return nil
	}
	return bp(v)
}

func bdsStrings(s adsb.BDSSet) []string {
	var out []string
	for _, b := range s.Append(nil) {
		out = append(out, b.String())
	}
	return out
}

// describeCommB adds the Comm-B reading of a DF20/21 message to j: bds
// (the best register), bds_candidates when several fit, and comm_b.
func describeCommB(c *adsb.CommB, j *Message) {
	j.BDS = c.BDS.String()
	if c.Candidates.Len() > 1 {
		j.BDSCandidates = []string{c.BDS.String()}
		for _, s := range bdsStrings(c.Candidates) {
			if s != j.BDS {
				j.BDSCandidates = append(j.BDSCandidates, s)
			}
		}
	}
	cb := &CommB{MB: fmt.Sprintf("%014X", c.MB), Ambiguous: c.Ambiguous, Rejected: bdsStrings(c.Rejected)}
	describeIdentified(c, cb)
	describeHeuristic(c, cb)
	j.CommB = cb
}

func describeIdentified(c *adsb.CommB, cb *CommB) {
	if c.Candidates.Has(adsb.BDS10) {
		d := c.DataLink
		cb.BDS10 = &BDS10{d.Continuation, d.OverlayCommand, d.ACASOperational, int(d.SubnetVersion), d.Level5,
			d.SpecificServices, int(d.UplinkELM), int(d.DownlinkELM), d.Identification, d.Squitter, d.SurveillanceID,
			d.CommonUsageGICB, d.ACASHybrid, d.ACASRA, int(d.ACASVersion), int(d.DTE)}
	}
	if c.Candidates.Has(adsb.BDS17) {
		cb.BDS17 = &BDS17{SupportedBDS: []string{}}
		for _, b := range c.GICB.AppendSupported(nil) {
			cb.BDS17.SupportedBDS = append(cb.BDS17.SupportedBDS, b.String())
		}
	}
	if c.Candidates.Has(adsb.BDS20) {
		cb.BDS20 = &BDS20{Callsign: c.Callsign.String()}
	}
	if c.Candidates.Has(adsb.BDS30) {
		r := c.RA
		cb.BDS30 = &BDS30{IssuedRA: r.Active, Corrective: r.Corrective, DownwardSense: r.Downward,
			IncreasedRate: r.IncreasedRate, SenseReversal: r.SenseReversal, AltitudeCrossing: r.AltitudeCrossing,
			Positive: r.Positive, NoBelow: r.NoBelow, NoAbove: r.NoAbove, NoLeft: r.NoLeft, NoRight: r.NoRight,
			Terminated: r.Terminated, MultipleThreat: r.MultipleThreat, ThreatType: int(r.ThreatType),
			ThreatAltitude: optI(r.HasThreatAltitude, r.ThreatAltitude), ThreatRange: optF(r.HasThreatRange, r.ThreatRange),
			ThreatBearing: optF(r.HasThreatBearing, r.ThreatBearing)}
		if r.ThreatType == 1 {
			cb.BDS30.ThreatICAO = fmt.Sprintf("%06X", r.ThreatAddress)
		}
	}
}

var targetSources = [4]string{"unknown", "aircraft_altitude", "mcp_fcu", "fms"}

func describeHeuristic(c *adsb.CommB, cb *CommB) {
	if c.Candidates.Has(adsb.BDS40) {
		v := c.Intent
		cb.BDS40 = &BDS40{MCPAltitude: optI(v.HasMCPAltitude, v.MCPAltitude), FMSAltitude: optI(v.HasFMSAltitude, v.FMSAltitude),
			BaroSetting: optF(v.HasBaroSetting, v.BaroSetting), VNAV: optB(v.HasModes, v.VNAV),
			AltitudeHold: optB(v.HasModes, v.AltitudeHold), Approach: optB(v.HasModes, v.Approach)}
		if v.HasTargetSource {
			cb.BDS40.TargetSource = targetSources[v.TargetSource&3]
		}
	}
	if c.Candidates.Has(adsb.BDS44) {
		v := c.Meteo
		cb.BDS44 = &BDS44{FigureOfMerit: int(v.FigureOfMerit), WindSpeed: optF(v.HasWind, v.WindSpeed),
			WindDirection: optF(v.HasWind, v.WindDirection), Temperature: v.Temperature,
			Pressure: optF(v.HasPressure, v.Pressure), Turbulence: optI(v.HasTurbulence, v.Turbulence),
			Humidity: optF(v.HasHumidity, v.Humidity)}
	}
	if c.Candidates.Has(adsb.BDS45) {
		v := c.Hazard
		cb.BDS45 = &BDS45{Turbulence: optI(v.HasTurbulence, v.Turbulence), WindShear: optI(v.HasWindShear, v.WindShear),
			Microburst: optI(v.HasMicroburst, v.Microburst), Icing: optI(v.HasIcing, v.Icing),
			WakeVortex: optI(v.HasWakeVortex, v.WakeVortex), Temperature: optF(v.HasTemperature, v.Temperature),
			Pressure: optF(v.HasPressure, v.Pressure), RadioHeight: optI(v.HasRadioHeight, v.RadioHeight)}
	}
	if c.Candidates.Has(adsb.BDS50) {
		v := c.TrackTurn
		cb.BDS50 = &BDS50{Roll: optF(v.HasRoll, v.Roll), TrueTrack: optF(v.HasTrack, v.Track),
			Groundspeed: optF(v.HasGroundspeed, v.Groundspeed), TrackRate: optF(v.HasTrackRate, v.TrackRate),
			TAS: optF(v.HasTAS, v.TAS)}
	}
	if c.Candidates.Has(adsb.BDS60) {
		v := c.HeadingSpeed
		cb.BDS60 = &BDS60{Heading: optF(v.HasHeading, v.Heading), IAS: optF(v.HasIAS, v.IAS),
			Mach: optF(v.HasMach, v.Mach), BaroRate: optI(v.HasBaroRate, v.BaroRate),
			InertialRate: optI(v.HasInertialRate, v.InertialRate)}
	}
}
