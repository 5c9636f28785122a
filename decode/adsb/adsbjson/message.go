package adsbjson

import (
	"fmt"

	"github.com/cuasd/cuasd/decode/adsb"
)

// Message is the JSON object of one decoded frame. Field names and units
// follow pyModeS and readsb: feet, knots, degrees, feet per minute,
// hectopascals. Absent fields were not in the frame (or do not apply to
// its kind). Every value is a claim by the transmitter.
type Message struct {
	// Index is the frame's position in a batch request.
	Index *int `json:"index,omitempty"`
	// Input and Error describe a batch frame that could not be decoded.
	Input string `json:"input,omitempty"`
	Error string `json:"error,omitempty"`

	Hex            string `json:"hex,omitempty"`
	DF             *int   `json:"df,omitempty"`
	Kind           string `json:"kind,omitempty"`
	ICAO           string `json:"icao,omitempty"`
	Address        string `json:"address,omitempty"`
	AddressType    string `json:"address_type,omitempty"`
	CRCValid       *bool  `json:"crc_valid,omitempty"`
	CRCRemainder   *int   `json:"crc_remainder,omitempty"`
	AddressParity  bool   `json:"address_from_parity,omitempty"`
	BitErrorsFixed *int   `json:"bit_errors_fixed,omitempty"`
	Unsupported    bool   `json:"unsupported,omitempty"`

	CA       *int   `json:"ca,omitempty"`
	CF       *int   `json:"cf,omitempty"`
	IID      *int   `json:"iid,omitempty"`
	FS       *int   `json:"fs,omitempty"`
	DR       *int   `json:"dr,omitempty"`
	UM       *int   `json:"um,omitempty"`
	VS       *int   `json:"vs,omitempty"`
	CC       *int   `json:"cc,omitempty"`
	SL       *int   `json:"sl,omitempty"`
	RI       *int   `json:"ri,omitempty"`
	TypeCode *int   `json:"typecode,omitempty"`
	Subtype  *int   `json:"subtype,omitempty"`
	BDS      string `json:"bds,omitempty"`
	// BDSCandidates are the Comm-B registers a DF20/21 payload fits when
	// more than one does, the best (bds) first.
	BDSCandidates []string `json:"bds_candidates,omitempty"`
	// CommB is the register content of a DF20/21 reply.
	CommB *CommB `json:"comm_b,omitempty"`

	Callsign            string `json:"callsign,omitempty"`
	Category            string `json:"category,omitempty"`
	CategoryDescription string `json:"category_description,omitempty"`

	Altitude       *int   `json:"altitude,omitempty"`
	AltitudeSource string `json:"altitude_source,omitempty"`
	Squawk         string `json:"squawk,omitempty"`

	CPRFormat          *int     `json:"cpr_format,omitempty"`
	CPRLat             *int     `json:"cpr_lat,omitempty"`
	CPRLon             *int     `json:"cpr_lon,omitempty"`
	NUCp               *int     `json:"nuc_p,omitempty"`
	SurveillanceStatus *int     `json:"surveillance_status,omitempty"`
	NICSupplementB     *int     `json:"nic_b,omitempty"`
	Lat                *float64 `json:"lat,omitempty"`
	Lon                *float64 `json:"lon,omitempty"`

	MovementCode  *int     `json:"movement_code,omitempty"`
	Groundspeed   *float64 `json:"groundspeed,omitempty"`
	Track         *float64 `json:"track,omitempty"`
	Airspeed      *float64 `json:"airspeed,omitempty"`
	AirspeedType  string   `json:"airspeed_type,omitempty"`
	Heading       *float64 `json:"heading,omitempty"`
	VerticalRate  *int     `json:"vertical_rate,omitempty"`
	VRSource      *int     `json:"vr_source,omitempty"`
	GeoMinusBaro  *int     `json:"geo_minus_baro,omitempty"`
	Supersonic    *bool    `json:"supersonic,omitempty"`
	IntentChange  *bool    `json:"intent_change,omitempty"`
	IFRCapability *bool    `json:"ifr_capability,omitempty"`

	EmergencyState *int   `json:"emergency_state,omitempty"`
	Emergency      string `json:"emergency,omitempty"`

	SelectedAltitude       *int     `json:"selected_altitude,omitempty"`
	SelectedAltitudeSource string   `json:"selected_altitude_source,omitempty"`
	BaroPressureSetting    *float64 `json:"baro_pressure_setting,omitempty"`
	SelectedHeading        *float64 `json:"selected_heading,omitempty"`
	Autopilot              *bool    `json:"autopilot,omitempty"`
	VNAVMode               *bool    `json:"vnav_mode,omitempty"`
	AltitudeHoldMode       *bool    `json:"altitude_hold_mode,omitempty"`
	ApproachMode           *bool    `json:"approach_mode,omitempty"`
	LNAVMode               *bool    `json:"lnav_mode,omitempty"`
	TCASOperational        *bool    `json:"tcas_operational,omitempty"`

	Version         *int             `json:"version,omitempty"`
	NICa            *int             `json:"nic_a,omitempty"`
	NICc            *int             `json:"nic_c,omitempty"`
	NICbaro         *int             `json:"nic_baro,omitempty"`
	NACp            *int             `json:"nac_p,omitempty"`
	NACv            *int             `json:"nac_v,omitempty"`
	SIL             *int             `json:"sil,omitempty"`
	SILSupplement   *int             `json:"sil_supplement,omitempty"`
	SDA             *int             `json:"sda,omitempty"`
	GVA             *int             `json:"gva,omitempty"`
	HRD             *int             `json:"hrd,omitempty"`
	LengthWidth     *int             `json:"length_width,omitempty"`
	Capability      *Capability      `json:"capability,omitempty"`
	OperationalMode *OperationalMode `json:"operational_mode,omitempty"`
}

// Capability is the capability class of an operational status message.
type Capability struct {
	ACAS  bool `json:"acas"`
	CDTI  bool `json:"cdti_or_1090es_in"`
	ARV   bool `json:"arv"`
	TS    bool `json:"ts"`
	TC    int  `json:"tc"`
	UATIn bool `json:"uat_in"`
	POA   bool `json:"poa"`
	B2Low bool `json:"b2_low"`
}

// OperationalMode is the operational mode of an operational status message.
type OperationalMode struct {
	ACASRA bool `json:"acas_ra"`
	Ident  bool `json:"ident"`
	ATC    bool `json:"atc"`
	SAF    bool `json:"saf"`
}

func ip(v int) *int         { return &v }
func fp(v float64) *float64 { return &v }
func bp(v bool) *bool       { return &v }
func u8(v uint8) *int       { return ip(int(v)) }
func i32(v int32) *int      { return ip(int(v)) }

// Describe turns a decoded message into its JSON object. fixRequested
// adds bit_errors_fixed for DF17/DF18 frames. A Comm-B reply is read with
// nothing known about its aircraft and without the meteorological
// registers.
func Describe(m *adsb.Message, fixRequested bool) Message {
	j := describeHeader(m, fixRequested)
	describePayload(m, &j)
	if m.DF == 20 || m.DF == 21 {
		var c adsb.CommB
		m.CommB(nil, adsb.CommBOptions{}, &c)
		describeCommB(&c, &j)
	}
	return j
}

func describeHeader(m *adsb.Message, fixRequested bool) Message {
	j := Message{
		Hex:          fmt.Sprintf("%X", m.Bytes()),
		DF:           u8(m.DF),
		Kind:         m.Kind.String(),
		CRCRemainder: ip(int(m.CRCRemainder)),
		Unsupported:  m.Unsupported,
	}
	switch m.CRC {
	case adsb.CRCValid:
		j.CRCValid = bp(true)
	case adsb.CRCBad:
		j.CRCValid = bp(false)
	case adsb.CRCAddressParity:
		j.AddressParity = true
	}
	if fixRequested && (m.DF == 17 || m.DF == 18) {
		j.BitErrorsFixed = u8(m.BitErrorsFixed)
	}
	if m.AddressType != adsb.AddrUnknown || m.DF == 18 {
		j.Address = m.ICAO()
		j.AddressType = m.AddressType.String()
		if m.AddressType.IsICAO() {
			j.ICAO = m.ICAO()
		}
	}
	describeDFFields(m, &j)
	return j
}

// describeDFFields adds the header fields of the frame's downlink format.
func describeDFFields(m *adsb.Message, j *Message) {
	switch m.DF {
	case 0, 16:
		j.VS, j.SL, j.RI = u8(m.VS), u8(m.SL), u8(m.RI)
		if m.DF == 0 {
			j.CC = u8(m.CC)
		}
	case 4, 5, 20, 21:
		j.FS, j.DR, j.UM = u8(m.FS), u8(m.DR), u8(m.UM)
	case 11:
		j.CA, j.IID = u8(m.CA), u8(m.IID)
	case 17:
		j.CA = u8(m.CA)
	case 18:
		j.CF = u8(m.CF)
	}
	if m.DF == 17 || m.DF == 18 {
		j.TypeCode = u8(m.TypeCode)
		switch m.Kind {
		case adsb.KindAirborneVelocity, adsb.KindAircraftStatus, adsb.KindTargetState,
			adsb.KindOperationalStatus, adsb.KindTestMessage:
			j.Subtype = u8(m.Subtype)
		}
		j.BDS = m.Kind.BDS()
	}
}

// describePayload adds what the frame says about the aircraft.
func describePayload(m *adsb.Message, j *Message) {
	if m.HasCallsign {
		j.Callsign = m.Callsign.String()
		if m.DF == 20 || m.DF == 21 {
			j.BDS = "2,0"
		}
	}
	if m.Kind == adsb.KindIdentification {
		j.Category = m.EmitterCategory()
		j.CategoryDescription = m.EmitterCategoryDescription()
	}
	if m.HasAltitude {
		j.Altitude = i32(m.Altitude)
		j.AltitudeSource = "barometric"
		if m.AltitudeGNSS {
			j.AltitudeSource = "gnss"
		}
	}
	if m.HasSquawk {
		j.Squawk = m.Squawk.String()
	}
	if m.HasCPR {
		j.CPRFormat = ip(0)
		if m.CPR.Odd {
			j.CPRFormat = ip(1)
		}
		j.CPRLat, j.CPRLon = ip(int(m.CPR.Lat)), ip(int(m.CPR.Lon))
	}
	describeKind(m, j)
	describeMeasurements(m, j)
}

// describeKind adds the fields only one kind of extended squitter carries.
func describeKind(m *adsb.Message, j *Message) {
	switch m.Kind {
	case adsb.KindAirbornePosition:
		if n := m.NUCp(); n >= 0 {
			j.NUCp = ip(n)
		}
		j.SurveillanceStatus = u8(m.SurveillanceStatus)
		if !m.AddressType.IsTISB() && !m.AddressType.IsADSR() {
			j.NICSupplementB = u8(m.NICSupplementB)
		}
	case adsb.KindSurfacePosition:
		j.MovementCode = u8(m.Movement)
	case adsb.KindAirborneVelocity:
		if !m.Unsupported {
			j.Supersonic = bp(m.Supersonic)
			j.IntentChange = bp(m.IntentChange)
			j.IFRCapability = bp(m.IFR)
			j.VRSource = u8(m.VRSource)
		}
	case adsb.KindAircraftStatus:
		if m.HasEmergency {
			j.EmergencyState = u8(m.EmergencyState)
			j.Emergency = adsb.EmergencyName(m.EmergencyState)
		}
	case adsb.KindTargetState:
		if !m.Unsupported {
			describeTargetState(m, j)
		}
	case adsb.KindOperationalStatus:
		if !m.Unsupported {
			describeOperationalStatus(m, j)
		}
	}
}

func describeTargetState(m *adsb.Message, j *Message) {
	if m.HasSelectedAltitude {
		j.SelectedAltitude = i32(m.SelectedAltitude)
		j.SelectedAltitudeSource = "mcp_fcu"
		if m.SelectedAltitudeFMS {
			j.SelectedAltitudeSource = "fms"
		}
	}
	if m.HasBaroSetting {
		j.BaroPressureSetting = fp(m.BaroSetting)
	}
	if m.HasSelectedHeading {
		j.SelectedHeading = fp(m.SelectedHeading)
	}
	if m.HasNavModes {
		j.Autopilot = bp(m.NavModes&adsb.NavAutopilot != 0)
		j.VNAVMode = bp(m.NavModes&adsb.NavVNAV != 0)
		j.AltitudeHoldMode = bp(m.NavModes&adsb.NavAltitudeHold != 0)
		j.ApproachMode = bp(m.NavModes&adsb.NavApproach != 0)
		j.LNAVMode = bp(m.NavModes&adsb.NavLNAV != 0)
	}
	j.TCASOperational = bp(m.ACASOperational)
	j.SILSupplement = u8(m.SILSupplement)
}

func describeOperationalStatus(m *adsb.Message, j *Message) {
	j.Version = u8(m.Version)
	if m.Version >= 1 {
		j.NICa = u8(m.NICa)
		j.HRD = u8(m.HRD)
		c := m.Capability
		j.Capability = &Capability{
			ACAS: c&adsb.CapACAS != 0, CDTI: c&adsb.CapCDTI != 0, ARV: c&adsb.CapARV != 0,
			TS: c&adsb.CapTS != 0, UATIn: c&adsb.CapUATIn != 0, POA: c&adsb.CapPOA != 0,
			B2Low: c&adsb.CapB2Low != 0,
		}
		if c&adsb.CapTC2 != 0 {
			j.Capability.TC |= 2
		}
		if c&adsb.CapTC1 != 0 {
			j.Capability.TC |= 1
		}
		o := m.OperationalMode
		j.OperationalMode = &OperationalMode{ACASRA: o&adsb.OpACASRA != 0, Ident: o&adsb.OpIdent != 0, ATC: o&adsb.OpATC != 0, SAF: o&adsb.OpSAF != 0}
		if m.HasLengthWidth {
			j.LengthWidth = u8(m.LengthWidth)
		}
	}
	if m.Version == 2 {
		j.SDA = u8(m.SDA)
		j.SILSupplement = u8(m.SILSupplement)
		if m.Subtype == 1 {
			j.NICc = u8(m.NICc)
		} else {
			j.GVA = u8(m.GVA)
		}
	}
}

// describeMeasurements adds the optional values of any kind.
func describeMeasurements(m *adsb.Message, j *Message) {
	if m.HasGroundspeed {
		j.Groundspeed = fp(m.Groundspeed)
	}
	if m.HasTrack {
		j.Track = fp(m.Track)
	}
	if m.HasAirspeed {
		j.Airspeed = fp(m.Airspeed)
		j.AirspeedType = m.AirspeedType.String()
	}
	if m.HasHeading {
		j.Heading = fp(m.Heading)
	}
	if m.HasVerticalRate {
		j.VerticalRate = i32(m.VerticalRate)
	}
	if m.HasGeoMinusBaro {
		j.GeoMinusBaro = i32(m.GeoMinusBaro)
	}
	if m.HasNACv {
		j.NACv = u8(m.NACv)
	}
	if m.HasAccuracy {
		j.NACp, j.SIL = u8(m.NACp), u8(m.SIL)
		if !(m.Kind == adsb.KindOperationalStatus && m.Subtype == 1) {
			j.NICbaro = u8(m.NICbaro)
		}
	}
}
