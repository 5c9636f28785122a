package adsb

import "strconv"

// Message is one decoded Mode S frame. It is a plain value meant to be
// owned by the caller and reused: [Decode] overwrites every field, so a
// pipeline keeps one Message per worker and decodes millions of frames
// without allocating.
//
// Which fields mean something depends on DF and Kind; the Has* flags say
// whether an optional value was present in the frame, so that a zero is
// never mistaken for a measurement. Every field is a claim made by an
// unauthenticated transmitter.
type Message struct {
	// Frame is the frame as decoded (after any bit correction); only the
	// first Len bytes (7 or 14) are meaningful.
	Frame [14]byte
	// Len is the frame length in bytes: 7 (56 bits) or 14 (112 bits).
	Len uint8
	// DF is the downlink format. Formats 24-31 (Comm-D, whose DF field is
	// only two bits wide) are all reported as 24.
	DF uint8

	// CRCRemainder is the CRC-24 remainder (syndrome) of the frame as
	// received, before any correction: 0 for an intact DF17/DF18, the
	// interrogator code for DF11, the address for address/parity formats.
	CRCRemainder uint32
	// CRC says what the remainder means for this DF.
	CRC CRCStatus
	// BitErrorsFixed is 1 when single-bit correction repaired the frame.
	BitErrorsFixed uint8

	// Address is the 24-bit address: announced in the AA field (DF11, 17,
	// 18) or recovered from the parity (DF0, 4, 5, 16, 20, 21, 24).
	Address uint32
	// AddressType says what kind of address Address is.
	AddressType AddressType

	// CA is the capability field (DF11, DF17).
	CA uint8
	// CF is the control field (DF18).
	CF uint8
	// IID is the interrogator identifier a DF11 reply carries in its
	// parity (0 for an acquisition squitter).
	IID uint8
	// FS (flight status), DR (downlink request) and UM (utility message)
	// of DF4, 5, 20 and 21.
	FS, DR, UM uint8
	// VS (vertical status), CC (cross-link capability), SL (sensitivity
	// level) and RI (reply information) of DF0 and DF16.
	VS, CC, SL, RI uint8

	// Altitude in feet, barometric unless AltitudeGNSS (type codes 20-22,
	// GNSS height). From the AC field (DF0, 4, 16, 20) or the ES altitude.
	HasAltitude  bool
	AltitudeGNSS bool
	Altitude     int32
	// Squawk is the Mode A code (DF5, 21 and ES type 28).
	HasSquawk bool
	Squawk    Squawk

	// Kind says which extended-squitter message this is; KindModeS for the
	// other downlink formats.
	Kind Kind
	// Unsupported is set when the header decoded but the payload is a
	// reserved or not-yet-decoded type code, subtype, version or CF. It is
	// not an error.
	Unsupported bool
	// TypeCode is the ES type code (ME bits 1-5), Subtype its subtype.
	TypeCode uint8
	Subtype  uint8

	// Identification: ES type codes 1-4, or the Comm-B register 2,0 of a
	// DF20/21 reply (HasCallsign).
	HasCallsign bool
	Callsign    Callsign
	// Category is the 3-bit emitter category; the set (A-D) follows from
	// the type code. See [Message.EmitterCategory].
	Category uint8

	// Position (type codes 5-8 surface, 9-18 and 20-22 airborne).
	HasCPR bool
	CPR    CPR
	// SurveillanceStatus (airborne): 0 none, 1 permanent alert, 2
	// temporary alert, 3 SPI.
	SurveillanceStatus uint8
	// NICSupplementB is ME bit 8 of airborne positions (the single-antenna
	// flag before version 2); not set for TIS-B/ADS-R, where that bit is
	// the IMF.
	NICSupplementB uint8
	// TimeSync is the T flag: the report is synchronised to UTC.
	TimeSync bool

	// Movement is the surface movement code (0 no information, 1 stopped,
	// 2-124 quantised speed, 125-127 reserved).
	Movement uint8
	// Groundspeed in knots (velocity subtypes 1-2, or from Movement).
	HasGroundspeed bool
	Groundspeed    float64
	// Track over the ground in degrees clockwise from true north.
	HasTrack bool
	Track    float64

	// Airborne velocity (type code 19).
	IntentChange bool
	IFR          bool
	Supersonic   bool
	// Airspeed in knots (subtypes 3-4), of type AirspeedType.
	HasAirspeed  bool
	Airspeed     float64
	AirspeedType AirspeedType
	// Heading in degrees (subtypes 3-4): magnetic or true, see HRD of the
	// operational status.
	HasHeading bool
	Heading    float64
	// VerticalRate in feet per minute, positive up, from VRSource
	// (1 barometric, 0 GNSS).
	HasVerticalRate bool
	VerticalRate    int32
	VRSource        uint8
	// GeoMinusBaro is GNSS height minus barometric altitude, feet.
	HasGeoMinusBaro bool
	GeoMinusBaro    int32

	// Aircraft status (type code 28, subtype 1).
	HasEmergency   bool
	EmergencyState uint8

	// Target state and status (type code 29, subtype 1).
	HasSelectedAltitude bool
	SelectedAltitude    int32
	// SelectedAltitudeFMS: the selected altitude comes from the FMS, not
	// the MCP/FCU.
	SelectedAltitudeFMS bool
	HasBaroSetting      bool
	BaroSetting         float64 // hPa (mb)
	HasSelectedHeading  bool
	SelectedHeading     float64
	// HasNavModes says the autopilot mode bits are valid.
	HasNavModes bool
	NavModes    NavModes
	// ACASOperational is ME bit 53 of the target state message.
	ACASOperational bool

	// Accuracy and integrity (type codes 29 and 31; NACv also 19).
	HasAccuracy bool
	NACp        uint8
	// NACv is present in velocity messages and version 2 surface
	// operational status (HasNACv).
	HasNACv bool
	NACv    uint8
	NICbaro uint8
	SIL     uint8

	// Operational status (type code 31).
	Version         uint8
	NICa            uint8
	NICc            uint8
	SDA             uint8
	GVA             uint8
	SILSupplement   uint8
	HRD             uint8 // 0 true north, 1 magnetic north
	Capability      Capability
	OperationalMode OperationalMode
	HasLengthWidth  bool
	LengthWidth     uint8
}

// CPR is one compact position report as transmitted: 17-bit latitude and
// longitude and the format flag F (odd when set).
type CPR struct {
	Lat, Lon uint32
	Odd      bool
}

// CRCStatus says how a frame's CRC remainder was interpreted.
type CRCStatus uint8

const (
	// CRCBad: the remainder is non-zero where it must be zero (DF17/18)
	// or is not an interrogator code (DF11).
	CRCBad CRCStatus = iota
	// CRCValid: the remainder is zero (DF17/18) or an interrogator code
	// (DF11); the frame was received intact.
	CRCValid
	// CRCAddressParity: the parity is overlaid with the address, so the
	// remainder is the claimed address and integrity cannot be checked
	// without knowing the address in advance.
	CRCAddressParity
	// CRCUnknown: a downlink format whose parity scheme is not decoded.
	CRCUnknown
)

// Kind is what an extended squitter carries.
type Kind uint8

// The message kinds.
const (
	KindNone Kind = iota
	// KindModeS is any non-ES downlink format (DF0, 4, 5, 11, 16, 20, 21, 24...).
	KindModeS
	KindNoPosition
	KindIdentification
	KindSurfacePosition
	KindAirbornePosition
	KindAirborneVelocity
	KindTestMessage
	KindSurfaceSystemStatus
	KindReserved
	KindAircraftStatus
	KindTargetState
	KindOperationalCoordination
	KindOperationalStatus
	// KindCoarseTISB is a DF18 CF=3 coarse TIS-B position, not type coded.
	KindCoarseTISB
	// KindTISBManagement is a DF18 CF=4 TIS-B/ADS-R management message.
	KindTISBManagement
)

var kindNames = [...]string{
	KindNone:                    "none",
	KindModeS:                   "mode_s",
	KindNoPosition:              "no_position",
	KindIdentification:          "identification",
	KindSurfacePosition:         "surface_position",
	KindAirbornePosition:        "airborne_position",
	KindAirborneVelocity:        "airborne_velocity",
	KindTestMessage:             "test_message",
	KindSurfaceSystemStatus:     "surface_system_status",
	KindReserved:                "reserved",
	KindAircraftStatus:          "aircraft_status",
	KindTargetState:             "target_state_and_status",
	KindOperationalCoordination: "operational_coordination",
	KindOperationalStatus:       "operational_status",
	KindCoarseTISB:              "coarse_tisb_position",
	KindTISBManagement:          "tisb_management",
}

// String returns the snake_case name used in JSON.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// BDS returns the Comm-B data selector register an extended squitter kind
// corresponds to ("0,5" for airborne position), or "" when none does.
func (k Kind) BDS() string {
	switch k {
	case KindAirbornePosition:
		return "0,5"
	case KindSurfacePosition:
		return "0,6"
	case KindIdentification:
		return "0,8"
	case KindAirborneVelocity:
		return "0,9"
	case KindAircraftStatus:
		return "6,1"
	case KindTargetState:
		return "6,2"
	case KindOperationalStatus:
		return "6,5"
	}
	return ""
}

// AddressType says what the 24-bit address of a message is. The names are
// readsb's.
type AddressType uint8

// The address types.
const (
	AddrUnknown AddressType = iota
	// AddrModeS: a Mode S reply's address (announced or from parity).
	AddrModeS
	// AddrADSBICAO: DF17 ADS-B from a transponder, ICAO address.
	AddrADSBICAO
	// AddrADSBICAONT: DF18 CF=0, non-transponder ADS-B, ICAO address.
	AddrADSBICAONT
	// AddrADSBOther: DF18 CF=1, anonymous, ground-vehicle or obstacle address.
	AddrADSBOther
	// AddrTISBICAO: TIS-B (ground radar rebroadcast) about an ICAO address.
	AddrTISBICAO
	// AddrTISBOther: TIS-B with a non-ICAO address (CF=5).
	AddrTISBOther
	// AddrTISBTrackfile: TIS-B with a Mode A code and track-file number.
	AddrTISBTrackfile
	// AddrADSRICAO: ADS-R (rebroadcast from UAT) about an ICAO address.
	AddrADSRICAO
	// AddrADSROther: ADS-R with a non-ICAO address.
	AddrADSROther
)

var addrNames = [...]string{
	AddrUnknown:       "unknown",
	AddrModeS:         "mode_s",
	AddrADSBICAO:      "adsb_icao",
	AddrADSBICAONT:    "adsb_icao_nt",
	AddrADSBOther:     "adsb_other",
	AddrTISBICAO:      "tisb_icao",
	AddrTISBOther:     "tisb_other",
	AddrTISBTrackfile: "tisb_trackfile",
	AddrADSRICAO:      "adsr_icao",
	AddrADSROther:     "adsr_other",
}

// String returns readsb's name for the address type.
func (a AddressType) String() string {
	if int(a) < len(addrNames) {
		return addrNames[a]
	}
	return "unknown"
}

// IsICAO reports whether the address is (claimed to be) an ICAO 24-bit
// aircraft address.
func (a AddressType) IsICAO() bool {
	switch a {
	case AddrModeS, AddrADSBICAO, AddrADSBICAONT, AddrTISBICAO, AddrADSRICAO:
		return true
	}
	return false
}

// IsTISB reports whether the message is a TIS-B rebroadcast.
func (a AddressType) IsTISB() bool {
	return a == AddrTISBICAO || a == AddrTISBOther || a == AddrTISBTrackfile
}

// IsADSR reports whether the message is an ADS-R rebroadcast.
func (a AddressType) IsADSR() bool { return a == AddrADSRICAO || a == AddrADSROther }

// setIMF applies the IMF bit of TIS-B and ADS-R messages: the address is
// not an ICAO address.
func (m *Message) setIMF() {
	switch m.AddressType {
	case AddrTISBICAO:
		m.AddressType = AddrTISBTrackfile
	case AddrADSRICAO:
		m.AddressType = AddrADSROther
	case AddrADSBICAO, AddrADSBICAONT:
		m.AddressType = AddrADSBOther
	}
}

// AirspeedType is indicated (IAS) or true (TAS) airspeed.
type AirspeedType uint8

// The airspeed types.
const (
	IAS AirspeedType = iota
	TAS
)

func (a AirspeedType) String() string {
	if a == TAS {
		return "TAS"
	}
	return "IAS"
}

// NavModes are the autopilot modes of a target state and status message.
type NavModes uint8

// The navigation modes.
const (
	NavAutopilot NavModes = 1 << iota
	NavVNAV
	NavAltitudeHold
	NavApproach
	NavTCAS // ACAS/TCAS operational
	NavLNAV
)

// Capability holds the capability-class bits of an operational status
// message (version 1 and 2 layouts).
type Capability uint16

// The capability bits.
const (
	CapACAS  Capability = 1 << iota // airborne: ACAS operational (v2) / installed (v1)
	CapCDTI                         // 1090ES IN (v2) or CDTI (v1)
	CapARV                          // air-referenced velocity reports
	CapTS                           // target state reports
	CapTC1                          // trajectory change reports, low bit
	CapTC2                          // trajectory change reports, high bit
	CapUATIn                        // UAT IN
	CapPOA                          // surface: position offset applied
	CapB2Low                        // surface: class B2 transmit power < 70 W
)

// OperationalMode holds the operational-mode bits of an operational status
// message.
type OperationalMode uint8

// The operational mode bits.
const (
	OpACASRA OperationalMode = 1 << iota // TCAS/ACAS resolution advisory active
	OpIdent                              // IDENT switch active
	OpATC                                // receiving ATC services
	OpSAF                                // single antenna
)

// Squawk is a Mode A code held as four octal digits in the four nibbles
// (squawk 7500 is 0x7500), the way it is written.
type Squawk uint16

// String returns the four digits, e.g. "7500".
func (s Squawk) String() string {
	var b [4]byte
	return string(s.Append(b[:0]))
}

// Append appends the code's four digits to b, as String writes them.
func (s Squawk) Append(b []byte) []byte {
	return append(b, '0'+byte(s>>12&7), '0'+byte(s>>8&7), '0'+byte(s>>4&7), '0'+byte(s&7))
}

// ICAO returns the address as six upper-case hex digits.
func (m *Message) ICAO() string { return AddressString(m.Address) }

// ME returns the 56-bit ME field of an extended squitter (bytes 5-11).
func (m *Message) ME() uint64 { return meOf(&m.Frame) }

// Parity returns the 24-bit parity field (the last three bytes).
func (m *Message) Parity() uint32 {
	n := int(m.Len)
	if n < 7 {
		return 0
	}
	return uint32(m.Frame[n-3])<<16 | uint32(m.Frame[n-2])<<8 | uint32(m.Frame[n-1])
}

// Bytes returns the frame bytes.
func (m *Message) Bytes() []byte { return m.Frame[:m.Len] }

// IsSurface reports whether the message is a surface position report.
func (m *Message) IsSurface() bool { return m.Kind == KindSurfacePosition }

// EmitterCategory returns the emitter category as readsb writes it, "A0"
// to "D7": the set letter follows from the type code (4 A, 3 B, 2 C, 1 D).
// It is "" for other messages.
func (m *Message) EmitterCategory() string {
	if m.Kind != KindIdentification || m.TypeCode < 1 || m.TypeCode > 4 {
		return ""
	}
	return string([]byte{'A' + 4 - m.TypeCode, '0' + m.Category})
}

// EmitterCategoryDescription names the emitter category as DO-260B does
// (set A-D, categories 0-7); UAVs are B6.
func (m *Message) EmitterCategoryDescription() string {
	if m.Kind != KindIdentification || m.TypeCode < 1 || m.TypeCode > 4 {
		return ""
	}
	if m.Category == 0 {
		return "No category information"
	}
	return categoryNames[4-m.TypeCode][m.Category]
}

var categoryNames = [4][8]string{
	{"", "Light (< 15500 lbs)", "Medium 1 (15500 to 75000 lbs)", "Medium 2 (75000 to 300000 lbs)",
		"High vortex aircraft", "Heavy (> 300000 lbs)", "High performance (> 5 g and > 400 kt)", "Rotorcraft"},
	{"", "Glider / sailplane", "Lighter-than-air", "Parachutist / skydiver",
		"Ultralight / hang-glider / paraglider", "Reserved", "Unmanned aerial vehicle", "Space / trans-atmospheric vehicle"},
	{"", "Surface vehicle - emergency", "Surface vehicle - service", "Point obstacle",
		"Cluster obstacle", "Line obstacle", "Reserved", "Reserved"},
	{"", "Reserved", "Reserved", "Reserved", "Reserved", "Reserved", "Reserved", "Reserved"},
}

// NUCp returns the navigation uncertainty category of a version 0 position
// report, derived from its type code (9 → 9 … 18 → 0; 20 → 9, 21 → 8),
// or -1 when the message is not a position report.
func (m *Message) NUCp() int {
	switch {
	case m.TypeCode >= 9 && m.TypeCode <= 18:
		return 18 - int(m.TypeCode)
	case m.TypeCode == 20:
		return 9
	case m.TypeCode == 21:
		return 8
	case m.TypeCode == 22:
		return 0
	}
	return -1
}

// EmergencyName returns the DO-260B name of the emergency state.
func EmergencyName(state uint8) string {
	switch state {
	case 0:
		return "no emergency"
	case 1:
		return "general emergency"
	case 2:
		return "lifeguard/medical emergency"
	case 3:
		return "minimum fuel"
	case 4:
		return "no communications"
	case 5:
		return "unlawful interference"
	case 6:
		return "downed aircraft"
	}
	return "reserved"
}
