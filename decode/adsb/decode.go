package adsb

import "math"

// Options adjust [DecodeWith].
type Options struct {
	// FixOneBit repairs a single bit error in a DF17 or DF18 frame whose
	// CRC fails, when the remainder is the syndrome of one bit outside the
	// DF field. The repair is reported in Message.BitErrorsFixed. It is
	// off by default: a repaired frame is a likelier truth, not a certain
	// one, and at most one bit is ever changed.
	FixOneBit bool
	// IgnoreCRC decodes the payload of a DF11, DF17 or DF18 frame even
	// when its CRC fails. DecodeWith still returns ErrCRC and Message.CRC
	// stays CRCBad. It exists for diagnosis and for synthetic test frames
	// whose parity was never computed; the pipeline and the endpoint never
	// set it.
	IgnoreCRC bool
}

// Decode decodes one Mode S frame (7 or 14 bytes) into m, overwriting all
// of m. It checks the CRC of DF11, DF17 and DF18 and recovers the address
// of address/parity formats. A frame that fails its CRC yields ErrCRC with
// only the header (DF, CA or CF, announced address, remainder) filled in.
// Reserved or unknown type codes are not errors: m.Unsupported is set.
// Decode does not allocate.
func Decode(frame []byte, m *Message) error { return DecodeWith(frame, m, Options{}) }

// DecodeWith is [Decode] with options.
func DecodeWith(frame []byte, m *Message, o Options) error {
	*m = Message{}
	n := len(frame)
	if n != 7 && n != 14 {
		return ErrLength
	}
	// The first DF bit fixes the length: DF 0-15 are short, 16-31 long.
	if (frame[0]&0x80 != 0) != (n == 14) {
		return ErrLength
	}
	copy(m.Frame[:], frame)
	m.Len = uint8(n)
	df := frame[0] >> 3
	if df >= 24 {
		df = 24 // Comm-D: only the first two bits are the DF
	}
	m.DF = df
	m.CRCRemainder = Syndrome(frame)
	err := m.checkParity(o)
	m.decodeAddress()
	if err != nil && !o.IgnoreCRC {
		return err
	}
	m.Kind = KindModeS
	m.decodeFields()
	return err
}

// checkParity classifies the frame's parity: checked (DF11, 17, 18, with
// an optional one-bit repair), an address overlaid on it (the surveillance
// and Comm-B replies), or unknown.
func (m *Message) checkParity(o Options) error {
	rem := m.CRCRemainder
	switch m.DF {
	case 11:
		// The parity of an all-call reply is overlaid with the
		// interrogator code (II or SI, at most 7 bits), not an address.
		if rem&^0x7F == 0 {
			m.CRC = CRCValid
			m.IID = uint8(rem)
			return nil
		}
		m.CRC = CRCBad
		return ErrCRC
	case 17, 18:
		switch {
		case rem == 0:
			m.CRC = CRCValid
		case o.FixOneBit && fixOneBit(&m.Frame, rem):
			m.CRC = CRCValid
			m.BitErrorsFixed = 1
		default:
			m.CRC = CRCBad
			return ErrCRC
		}
	case 0, 4, 5, 16, 20, 21, 24:
		m.CRC = CRCAddressParity
		m.Address = rem
		m.AddressType = AddrModeS
	default:
		m.CRC = CRCUnknown
	}
	return nil
}

// decodeAddress reads the announced address of DF11, 17 and 18.
func (m *Message) decodeAddress() {
	f := &m.Frame
	w := uint32(f[0])<<24 | uint32(f[1])<<16 | uint32(f[2])<<8 | uint32(f[3])
	switch m.DF {
	case 11, 17:
		m.CA = f[0] & 7
		m.Address = w & 0xFFFFFF
		m.AddressType = AddrModeS
		if m.DF == 17 {
			m.AddressType = AddrADSBICAO
		}
	case 18:
		m.CF = f[0] & 7
		m.Address = w & 0xFFFFFF
		m.AddressType = df18AddressType(m.CF)
	}
}

// decodeFields decodes the fields of the frame's format.
func (m *Message) decodeFields() {
	f := &m.Frame
	w := uint32(f[0])<<24 | uint32(f[1])<<16 | uint32(f[2])<<8 | uint32(f[3])
	switch df := m.DF; df {
	case 0, 16:
		m.VS = uint8(w>>26) & 1
		m.SL = uint8(w>>21) & 7
		m.RI = uint8(w>>15) & 0xF
		if df == 0 {
			m.CC = uint8(w>>25) & 1
		}
		m.Altitude, m.HasAltitude = decodeAC13(w & 0x1FFF)
	case 4, 5, 20, 21:
		m.FS = f[0] & 7
		m.DR = uint8(w>>19) & 0x1F
		m.UM = uint8(w>>13) & 0x3F
		if df == 4 || df == 20 {
			m.Altitude, m.HasAltitude = decodeAC13(w & 0x1FFF)
		} else if id := w & 0x1FFF; id != 0 {
			m.Squawk, m.HasSquawk = decodeID13(id), true
		}
		if df >= 20 {
			m.decodeCommBIdentification(meOf(f))
		}
	case 17:
		m.decodeES(meOf(f), false)
	case 18:
		m.decodeDF18(meOf(f))
	}
}

// df18AddressType is the address type a DF18 control field announces
// before any IMF bit is read.
func df18AddressType(cf uint8) AddressType {
	switch cf {
	case 0:
		return AddrADSBICAONT
	case 1:
		return AddrADSBOther
	case 2, 3:
		return AddrTISBICAO
	case 5:
		return AddrTISBOther
	case 6:
		return AddrADSRICAO
	}
	return AddrUnknown
}

func (m *Message) decodeDF18(me uint64) {
	// The first five ME bits are reported as the type code whatever the
	// CF, as readsb does; for CF 3, 4 and 7 they are not one, and Kind
	// and Unsupported say so.
	m.TypeCode = uint8(me >> 51)
	switch m.CF {
	case 0, 1, 5:
		m.decodeES(me, false)
	case 2, 6:
		// Fine TIS-B and ADS-R carry an IMF bit whose position depends
		// on the type code.
		m.decodeES(me, true)
	case 3:
		// Coarse TIS-B airborne position: a format of its own.
		m.Kind = KindCoarseTISB
		m.Unsupported = true
		if bit(me, 1) {
			m.setIMF()
		}
	case 4:
		m.Kind = KindTISBManagement
		m.Unsupported = true
	default:
		m.Kind = KindReserved
		m.Unsupported = true
	}
}

// meOf returns the 56-bit ME (or MB/MV) field: bytes 5 to 11 of a long frame.
func meOf(f *[14]byte) uint64 {
	return uint64(f[4])<<48 | uint64(f[5])<<40 | uint64(f[6])<<32 |
		uint64(f[7])<<24 | uint64(f[8])<<16 | uint64(f[9])<<8 | uint64(f[10])
}

// bits returns ME bits a..b (1-based, inclusive, as numbered in DO-260B).
func bits(me uint64, a, b uint) uint32 {
	return uint32(me>>(56-b)) & (1<<(b-a+1) - 1)
}

// bit reports whether ME bit a (1-based) is set.
func bit(me uint64, a uint) bool { return me>>(56-a)&1 != 0 }

func (m *Message) decodeES(me uint64, checkIMF bool) {
	tc := uint8(me >> 51)
	m.TypeCode = tc
	switch {
	case tc == 0:
		// No position information; the altitude may still be there.
		m.Kind = KindNoPosition
		m.Altitude, m.HasAltitude = decodeAC12(bits(me, 9, 20))
	case tc <= 4:
		m.decodeIdentification(me)
	case tc <= 8:
		m.decodeSurfacePosition(me, checkIMF)
	case tc <= 18, tc >= 20 && tc <= 22:
		m.decodeAirbornePosition(me, checkIMF)
	case tc == 19:
		m.decodeVelocity(me, checkIMF)
	case tc == 23:
		m.Kind = KindTestMessage
		m.Subtype = uint8(bits(me, 6, 8))
		// Subtype 7 carries the Mode A code (1090-WP-15-20).
		if id := bits(me, 9, 21); m.Subtype == 7 && id != 0 {
			m.Squawk, m.HasSquawk = decodeID13(id), true
		} else {
			m.Unsupported = true
		}
	case tc == 24:
		m.Kind = KindSurfaceSystemStatus
		m.Unsupported = true
	case tc <= 27:
		m.Kind = KindReserved
		m.Unsupported = true
	case tc == 28:
		m.decodeAircraftStatus(me, checkIMF)
	case tc == 29:
		m.decodeTargetState(me, checkIMF)
	case tc == 30:
		m.Kind = KindOperationalCoordination
		m.Unsupported = true
	default: // 31
		m.decodeOperationalStatus(me, checkIMF)
	}
}

func (m *Message) decodeIdentification(me uint64) {
	m.Kind = KindIdentification
	m.HasCallsign = true
	m.Category = uint8(bits(me, 6, 8))
	for i := range 8 {
		m.Callsign[i] = callsignChars[(me>>(42-6*i))&0x3F]
	}
}

// decodeCommBIdentification reads a Comm-B reply whose MB field looks like
// register 2,0 (aircraft identification): first byte 0x20 and eight
// characters that are all letters, digits or spaces. Which register a
// Comm-B reply holds is set by the interrogation, which a passive receiver
// does not hear, so this is an inference (dump1090 makes the same one).
func (m *Message) decodeCommBIdentification(mb uint64) {
	if mb>>48 != 0x20 {
		return
	}
	var c Callsign
	for i := range 8 {
		c[i] = callsignChars[(mb>>(42-6*i))&0x3F]
	}
	if c.Valid() && c != (Callsign{' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '}) {
		m.Callsign, m.HasCallsign = c, true
	}
}

func (m *Message) decodeAirbornePosition(me uint64, checkIMF bool) {
	m.Kind = KindAirbornePosition
	m.SurveillanceStatus = uint8(bits(me, 6, 7))
	if checkIMF {
		if bit(me, 8) {
			m.setIMF()
		}
	} else if bit(me, 8) {
		m.NICSupplementB = 1
	}
	m.Altitude, m.HasAltitude = decodeAC12(bits(me, 9, 20))
	m.AltitudeGNSS = m.HasAltitude && m.TypeCode >= 20
	m.TimeSync = bit(me, 21)
	m.HasCPR = true
	m.CPR = CPR{Lat: bits(me, 23, 39), Lon: bits(me, 40, 56), Odd: bit(me, 22)}
}

func (m *Message) decodeSurfacePosition(me uint64, checkIMF bool) {
	m.Kind = KindSurfacePosition
	m.Movement = uint8(bits(me, 6, 12))
	m.Groundspeed, m.HasGroundspeed = MovementSpeed(m.Movement)
	if bit(me, 13) {
		m.HasTrack = true
		m.Track = float64(bits(me, 14, 20)) * 360 / 128
	}
	if checkIMF {
		if bit(me, 21) {
			m.setIMF()
		}
	} else {
		m.TimeSync = bit(me, 21)
	}
	m.HasCPR = true
	m.CPR = CPR{Lat: bits(me, 23, 39), Lon: bits(me, 40, 56), Odd: bit(me, 22)}
}

// MovementSpeed returns the ground speed in knots that a surface movement
// code stands for: the lower bound of its quantisation bin, as pyModeS
// and rs1090 report it (readsb reports the bin's midpoint). Code 1 is
// "stopped" (0 kt) and 124 is "175 kt or more". ok is false for 0 (no
// information) and the reserved codes 125-127.
func MovementSpeed(code uint8) (knots float64, ok bool) {
	c := float64(code)
	switch {
	case code == 0 || code > 124:
		return 0, false
	case code == 1:
		return 0, true
	case code <= 8:
		return 0.125 + (c-2)*0.125, true
	case code <= 12:
		return 1 + (c-9)*0.25, true
	case code <= 38:
		return 2 + (c-13)*0.5, true
	case code <= 93:
		return 15 + (c - 39), true
	case code <= 108:
		return 70 + (c-94)*2, true
	case code <= 123:
		return 100 + (c-109)*5, true
	}
	return 175, true
}

func (m *Message) decodeVelocity(me uint64, checkIMF bool) {
	m.Kind = KindAirborneVelocity
	st := uint8(bits(me, 6, 8))
	m.Subtype = st
	if st < 1 || st > 4 {
		m.Unsupported = true
		return
	}
	if checkIMF {
		if bit(me, 9) {
			m.setIMF()
		}
	} else {
		m.IntentChange = bit(me, 9)
	}
	m.IFR = bit(me, 10)
	m.HasNACv, m.NACv = true, uint8(bits(me, 11, 13))
	m.Supersonic = st == 2 || st == 4
	scale := 1.0
	if m.Supersonic {
		scale = 4
	}
	if st <= 2 {
		m.decodeGroundVelocity(me, scale)
	} else {
		m.decodeAirVelocity(me, scale)
	}
	m.decodeVerticalRates(me)
}

// decodeGroundVelocity reads subtypes 1 and 2: east-west and north-south
// velocities, giving ground speed and track.
func (m *Message) decodeGroundVelocity(me uint64, scale float64) {
	ew, ns := bits(me, 15, 24), bits(me, 26, 35)
	if ew == 0 || ns == 0 {
		return
	}
	vx := float64(ew-1) * scale
	if bit(me, 14) {
		vx = -vx // west
	}
	vy := float64(ns-1) * scale
	if bit(me, 25) {
		vy = -vy // south
	}
	m.HasGroundspeed = true
	m.Groundspeed = math.Sqrt(vx*vx + vy*vy)
	if m.Groundspeed > 0 {
		t := math.Atan2(vx, vy) * 180 / math.Pi
		if t < 0 {
			t += 360
		}
		m.HasTrack, m.Track = true, t
	}
}

// decodeAirVelocity reads subtypes 3 and 4: magnetic heading and airspeed.
func (m *Message) decodeAirVelocity(me uint64, scale float64) {
	if bit(me, 14) {
		m.HasHeading = true
		m.Heading = float64(bits(me, 15, 24)) * 360 / 1024
	}
	if as := bits(me, 26, 35); as != 0 {
		m.HasAirspeed = true
		m.Airspeed = float64(as-1) * scale
		if bit(me, 25) {
			m.AirspeedType = TAS
		}
	}
}

// decodeVerticalRates reads the vertical rate and the geometric minus
// barometric altitude difference.
func (m *Message) decodeVerticalRates(me uint64) {
	if bit(me, 36) {
		m.VRSource = 1 // barometric; 0 is GNSS (DO-260B 2.2.3.2.6.1.12)
	}
	if vr := bits(me, 38, 46); vr != 0 {
		m.HasVerticalRate = true
		m.VerticalRate = int32(vr-1) * 64
		if bit(me, 37) {
			m.VerticalRate = -m.VerticalRate
		}
	}
	if d := bits(me, 50, 56); d != 0 {
		m.HasGeoMinusBaro = true
		m.GeoMinusBaro = int32(d-1) * 25
		if bit(me, 49) {
			m.GeoMinusBaro = -m.GeoMinusBaro
		}
	}
}

func (m *Message) decodeAircraftStatus(me uint64, checkIMF bool) {
	m.Kind = KindAircraftStatus
	m.Subtype = uint8(bits(me, 6, 8))
	if m.Subtype != 1 {
		// Subtype 2 is the ACAS resolution advisory broadcast.
		m.Unsupported = true
		return
	}
	m.HasEmergency = true
	m.EmergencyState = uint8(bits(me, 9, 11))
	if id := bits(me, 12, 24); id != 0 {
		m.Squawk, m.HasSquawk = decodeID13(id), true
	}
	if checkIMF && bit(me, 56) {
		m.setIMF()
	}
}

func (m *Message) decodeTargetState(me uint64, checkIMF bool) {
	m.Kind = KindTargetState
	m.Subtype = uint8(bits(me, 6, 7)) // only two subtype bits here
	if checkIMF && bit(me, 51) {
		m.setIMF()
	}
	if m.Subtype != 1 {
		// Subtype 0 is the DO-260A (version 1) layout.
		m.Unsupported = true
		return
	}
	m.SILSupplement = uint8(bits(me, 8, 8))
	m.SelectedAltitudeFMS = bit(me, 9)
	if a := bits(me, 10, 20); a != 0 {
		m.HasSelectedAltitude = true
		m.SelectedAltitude = int32(a-1) * 32
	}
	if p := bits(me, 21, 29); p != 0 {
		m.HasBaroSetting = true
		m.BaroSetting = 800 + float64(p-1)*0.8
	}
	if bit(me, 30) {
		// Nine bits of 180/256°: a signed ±180 that reads the same as
		// an unsigned 0-360.
		m.HasSelectedHeading = true
		m.SelectedHeading = float64(bits(me, 31, 39)) * 180 / 256
	}
	m.HasAccuracy = true
	m.NACp = uint8(bits(me, 40, 43))
	m.NICbaro = uint8(bits(me, 44, 44))
	m.SIL = uint8(bits(me, 45, 46))
	m.ACASOperational = bit(me, 53)
	if bit(me, 47) {
		m.HasNavModes = true
		var nm NavModes
		if bit(me, 48) {
			nm |= NavAutopilot
		}
		if bit(me, 49) {
			nm |= NavVNAV
		}
		if bit(me, 50) {
			nm |= NavAltitudeHold
		}
		if bit(me, 52) {
			nm |= NavApproach
		}
		if bit(me, 53) {
			nm |= NavTCAS
		}
		if bit(me, 54) {
			nm |= NavLNAV
		}
		m.NavModes = nm
	}
}

func (m *Message) decodeOperationalStatus(me uint64, checkIMF bool) {
	m.Kind = KindOperationalStatus
	st := uint8(bits(me, 6, 8))
	m.Subtype = st
	if checkIMF && bit(me, 56) {
		m.setIMF()
	}
	if st > 1 {
		m.Unsupported = true
		return
	}
	m.Version = uint8(bits(me, 41, 43))
	surface := st == 1
	switch m.Version {
	case 0:
		// DO-260 (version 0) defined no further content here.
		return
	case 1, 2:
	default:
		m.Unsupported = true
		return
	}
	v2 := m.Version == 2
	if bits(me, 25, 26) == 0 {
		m.decodeOperationalMode(me, v2)
	}
	if bits(me, 9, 10) == 0 && (v2 || bits(me, 13, 14) == 0) {
		if surface {
			m.decodeSurfaceCapability(me, v2)
		} else {
			m.decodeAirborneCapability(me, v2)
		}
	}
	m.HasAccuracy = true
	m.NICa = uint8(bits(me, 44, 44))
	m.NACp = uint8(bits(me, 45, 48))
	m.SIL = uint8(bits(me, 51, 52))
	m.HRD = uint8(bits(me, 54, 54))
	if v2 {
		m.SILSupplement = uint8(bits(me, 55, 55))
	}
	if !surface {
		m.NICbaro = uint8(bits(me, 53, 53))
		if v2 {
			m.GVA = uint8(bits(me, 49, 50))
		}
	}
}

// decodeOperationalMode reads the operational mode code (format 00).
func (m *Message) decodeOperationalMode(me uint64, v2 bool) {
	var om OperationalMode
	flag := func(b uint, f OperationalMode) {
		if bit(me, b) {
			om |= f
		}
	}
	flag(27, OpACASRA)
	flag(28, OpIdent)
	flag(29, OpATC)
	if v2 {
		flag(30, OpSAF)
		m.SDA = uint8(bits(me, 31, 32))
	}
	m.OperationalMode = om
}

// decodeAirborneCapability reads an airborne capability class code.
func (m *Message) decodeAirborneCapability(me uint64, v2 bool) {
	var c Capability
	set := func(b uint, f Capability) {
		if bit(me, b) {
			c |= f
		}
	}
	if v2 {
		set(11, CapACAS)
	} else if !bit(me, 11) {
		c |= CapACAS // version 1: bit 11 means "ACAS not installed"
	}
	set(12, CapCDTI)
	set(15, CapARV)
	set(16, CapTS)
	set(17, CapTC2)
	set(18, CapTC1)
	if v2 {
		set(19, CapUATIn)
	}
	m.Capability = c
}

// decodeSurfaceCapability reads a surface capability class code, with the
// length/width code and, in version 2, NACv and NICc.
func (m *Message) decodeSurfaceCapability(me uint64, v2 bool) {
	var c Capability
	set := func(b uint, f Capability) {
		if bit(me, b) {
			c |= f
		}
	}
	set(11, CapPOA)
	set(12, CapCDTI)
	set(15, CapB2Low)
	m.HasLengthWidth = true
	m.LengthWidth = uint8(bits(me, 21, 24))
	if v2 {
		set(16, CapUATIn)
		m.HasNACv, m.NACv = true, uint8(bits(me, 17, 19))
		m.NICc = uint8(bits(me, 20, 20))
	}
	m.Capability = c
}
