package adsb

// Comm-B (DF20/DF21) replies carry a 56-bit MB field holding one of the
// transponder's registers (BDS), chosen by the interrogation. A passive
// receiver hears the reply but not the interrogation, so which register an
// MB field holds has to be inferred from its content, the way pyModeS does
// (pyModeS 3.x, decoder/bds/_infer.py): registers 1,0, 2,0 and 3,0 start
// with their own number; 1,7 is a capability map with a fixed shape; 4,0,
// 4,4, 4,5, 5,0 and 6,0 have no identifier and are recognised by their
// status bits (a field whose status bit is clear must be all zeros),
// reserved bits and value ranges. Several may fit one payload; then all are
// reported as candidates and the aircraft's known state (ground speed,
// track, altitude) is used to rule out or rank them.
//
// Bit numbers below are the 1-based MB bit numbers of ICAO Doc 9871
// (bit 1 is the first bit of the MB field), read with bits and bit from
// decode.go. Every value is a claim by the transponder; none is
// authenticated.

// BDS is a Comm-B register number, written as two hexadecimal digits:
// 0x50 is register 5,0 ("track and turn report").
type BDS uint8

// The registers this package decodes.
const (
	BDS10 BDS = 0x10 // data link capability report
	BDS17 BDS = 0x17 // common usage GICB capability report
	BDS20 BDS = 0x20 // aircraft identification
	BDS30 BDS = 0x30 // ACAS active resolution advisory
	BDS40 BDS = 0x40 // selected vertical intention
	BDS44 BDS = 0x44 // meteorological routine air report
	BDS45 BDS = 0x45 // meteorological hazard report
	BDS50 BDS = 0x50 // track and turn report
	BDS60 BDS = 0x60 // heading and speed report
)

// commBRegisters is the inference order: the registers that carry their
// own number first (they exclude each other), then the heuristic ones in
// pyModeS's order. BDSSet bit i is commBRegisters[i].
var commBRegisters = [...]BDS{BDS10, BDS17, BDS20, BDS30, BDS40, BDS50, BDS60, BDS44, BDS45}

// String returns the register as written in the standards, "5,0"; "" for 0.
func (b BDS) String() string {
	if b == 0 {
		return ""
	}
	const digits = "0123456789ABCDEF"
	return string([]byte{digits[b>>4], ',', digits[b&0xF]})
}

// BDSSet is a set of registers.
type BDSSet uint16

// bdsIndex is the position of b in commBRegisters, -1 if absent (a switch:
// it runs several times per reply).
func bdsIndex(b BDS) int {
	switch b {
	case BDS10:
		return 0
	case BDS17:
		return 1
	case BDS20:
		return 2
	case BDS30:
		return 3
	case BDS40:
		return 4
	case BDS50:
		return 5
	case BDS60:
		return 6
	case BDS44:
		return 7
	case BDS45:
		return 8
	}
	return -1
}

// Has reports whether b is in the set.
func (s BDSSet) Has(b BDS) bool {
	i := bdsIndex(b)
	return i >= 0 && s&(1<<i) != 0
}

func (s *BDSSet) add(b BDS) {
	if i := bdsIndex(b); i >= 0 {
		*s |= 1 << i
	}
}

func (s *BDSSet) remove(b BDS) {
	if i := bdsIndex(b); i >= 0 {
		*s &^= 1 << i
	}
}

// Len returns the number of registers in the set.
func (s BDSSet) Len() int {
	n := 0
	for v := s; v != 0; v &= v - 1 {
		n++
	}
	return n
}

// Append appends the registers of the set to dst in inference order.
func (s BDSSet) Append(dst []BDS) []BDS {
	for i, r := range commBRegisters {
		if s&(1<<i) != 0 {
			dst = append(dst, r)
		}
	}
	return dst
}

// CommB is the decoded MB field of one Comm-B reply. It is a plain value
// owned by the caller; [DecodeCommB] overwrites all of it and allocates
// nothing. Only the sub-structures of the registers in Candidates are
// filled; the Has* flags say which optional values the register carried
// (their status bit was set).
type CommB struct {
	// MB is the 56-bit MB field.
	MB uint64
	// BDS is the most likely register: the only candidate, the one carrying
	// its own number, or the one that best matches the known state; 0 when
	// no register fits.
	BDS BDS
	// Candidates are the registers the payload is plausible as, after the
	// checks against the known state.
	Candidates BDSSet
	// Rejected are registers whose format fits but whose values contradict
	// the known state of the aircraft (e.g. a 5,0 ground speed 150 kt away
	// from the ADS-B one).
	Rejected BDSSet
	// Ambiguous is set when more than one candidate remains and the known
	// state did not separate them: BDS is then only pyModeS's first guess.
	Ambiguous bool

	DataLink     DataLinkCapability // 1,0
	GICB         GICBCapability     // 1,7
	Callsign     Callsign           // 2,0
	RA           ResolutionAdvisory // 3,0
	Intent       VerticalIntention  // 4,0
	Meteo        MeteoRoutine       // 4,4
	Hazard       MeteoHazard        // 4,5
	TrackTurn    TrackTurn          // 5,0
	HeadingSpeed HeadingSpeed       // 6,0
}

// DataLinkCapability is register 1,0.
type DataLinkCapability struct {
	Continuation     bool  // bit 9
	OverlayCommand   bool  // bit 15: overlay command capability
	ACASOperational  bool  // bit 16
	SubnetVersion    uint8 // bits 17-23: Mode S subnetwork version
	Level5           bool  // bit 24: transponder level 5
	SpecificServices bool  // bit 25: Mode S specific services capability
	UplinkELM        uint8 // bits 26-28: uplink ELM average throughput
	DownlinkELM      uint8 // bits 29-32: downlink ELM throughput
	Identification   bool  // bit 33: aircraft identification capability
	Squitter         bool  // bit 34: squitter capability subfield
	SurveillanceID   bool  // bit 35: surveillance identifier code
	CommonUsageGICB  bool  // bit 36: common usage GICB capability report
	ACASHybrid       bool  // bit 37: ACAS hybrid surveillance capability
	ACASRA           bool  // bit 38: ACAS generating TAs and RAs
	ACASVersion      uint8 // bits 39-40: RTCA DO-185 version
	DTE              uint16
}

// GICBCapability is register 1,7: one bit per common-usage register the
// transponder can deliver, bit 1 (0,5) first. Bits are kept as received.
type GICBCapability uint32

// gicbRegisters maps the 24 capability bits of register 1,7 to registers
// (ICAO Doc 9871 table A-2-23); 0x0A, 0x5F are written as such.
var gicbRegisters = [24]BDS{0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x20, 0x21, 0x40, 0x41, 0x42, 0x43,
	0x44, 0x45, 0x48, 0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x5F, 0x60}

// AppendSupported appends the registers the capability map announces.
func (g GICBCapability) AppendSupported(dst []BDS) []BDS {
	for i, r := range gicbRegisters {
		if g&(1<<(23-i)) != 0 {
			dst = append(dst, r)
		}
	}
	return dst
}

// ResolutionAdvisory is register 3,0, the ACAS II active resolution
// advisory (also broadcast in ES type 28 subtype 2).
type ResolutionAdvisory struct {
	// ARA bits 9-15: an RA is active, corrective, downward sense,
	// increased rate, sense reversal, altitude crossing, positive.
	Active, Corrective, Downward, IncreasedRate, SenseReversal, AltitudeCrossing, Positive bool
	// RAC bits 23-26: do not pass below / above / turn left / turn right.
	NoBelow, NoAbove, NoLeft, NoRight bool
	// Terminated (bit 27) and MultipleThreat (bit 28).
	Terminated, MultipleThreat bool
	// ThreatType (bits 29-30): 0 no identity, 1 Mode S address, 2
	// altitude, range and bearing.
	ThreatType    uint8
	ThreatAddress uint32
	// The threat's altitude (feet), range (NM) and bearing (degrees,
	// relative), when ThreatType is 2 and the field is not "unknown".
	HasThreatAltitude bool
	ThreatAltitude    int32
	HasThreatRange    bool
	ThreatRange       float64
	HasThreatBearing  bool
	ThreatBearing     float64
}

// VerticalIntention is register 4,0.
type VerticalIntention struct {
	// MCP/FCU and FMS selected altitudes in feet (16 ft steps).
	HasMCPAltitude bool
	MCPAltitude    int32
	HasFMSAltitude bool
	FMSAltitude    int32
	// BaroSetting is the barometric pressure setting (QNH or standard) in
	// hectopascals.
	HasBaroSetting bool
	BaroSetting    float64
	// Autopilot modes (bits 49-51) when HasModes.
	HasModes                     bool
	VNAV, AltitudeHold, Approach bool
	HasTargetSource              bool
	TargetSource                 uint8 // 0 unknown, 1 aircraft altitude, 2 MCP/FCU, 3 FMS
}

// MeteoRoutine is register 4,4, the meteorological routine air report.
type MeteoRoutine struct {
	FigureOfMerit uint8 // bits 1-4: source of the report
	// Wind speed (knots) and the direction it blows from (degrees true).
	HasWind       bool
	WindSpeed     float64
	WindDirection float64
	// Temperature is the static air temperature in °C (not gated by a
	// status bit in this register).
	Temperature float64
	HasPressure bool
	Pressure    float64 // static pressure, hPa
	// Turbulence 0 nil, 1 light, 2 moderate, 3 severe.
	HasTurbulence bool
	Turbulence    uint8
	HasHumidity   bool
	Humidity      float64 // percent
}

// MeteoHazard is register 4,5, the meteorological hazard report. Hazard
// levels are 0 nil, 1 light, 2 moderate, 3 severe.
type MeteoHazard struct {
	HasTurbulence, HasWindShear, HasMicroburst, HasIcing, HasWakeVortex bool
	Turbulence, WindShear, Microburst, Icing, WakeVortex                uint8
	HasTemperature                                                      bool
	Temperature                                                         float64 // °C
	HasPressure                                                         bool
	Pressure                                                            float64 // hPa
	HasRadioHeight                                                      bool
	RadioHeight                                                         int32 // feet
}

// TrackTurn is register 5,0, the track and turn report.
type TrackTurn struct {
	HasRoll        bool
	Roll           float64 // degrees, positive right wing down
	HasTrack       bool
	Track          float64 // true track, degrees [0, 360)
	HasGroundspeed bool
	Groundspeed    float64 // knots
	HasTrackRate   bool
	TrackRate      float64 // degrees per second, positive clockwise
	HasTAS         bool
	TAS            float64 // true airspeed, knots
}

// HeadingSpeed is register 6,0, the heading and speed report.
type HeadingSpeed struct {
	HasHeading      bool
	Heading         float64 // magnetic heading, degrees [0, 360)
	HasIAS          bool
	IAS             float64 // indicated airspeed, knots
	HasMach         bool
	Mach            float64
	HasBaroRate     bool
	BaroRate        int32 // barometric altitude rate, ft/min
	HasInertialRate bool
	InertialRate    int32 // inertial vertical velocity, ft/min
}

// KnownState is what is already known about the aircraft from its
// CRC-checked ADS-B squitters (and, for DF20, the reply's own altitude):
// the yardstick the candidates are measured against. Zero value: nothing
// known.
type KnownState struct {
	HasGroundspeed bool
	Groundspeed    float64 // knots
	HasTrack       bool
	Track          float64 // degrees true
	HasAltitude    bool
	Altitude       int32 // feet, barometric
}

// CommBOptions adjust [DecodeCommB].
type CommBOptions struct {
	// Meteo also tries the meteorological registers 4,4 and 4,5. pyModeS
	// leaves them out by default because their loose format matches much
	// other traffic; with it set they are candidates like the others.
	Meteo bool
}
