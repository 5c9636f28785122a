package worker

import (
	"errors"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/adsb"
)

// Unit conversions of the ADS-B claims into the observation's SI units.
const (
	ftToM   = 0.3048
	ktToMps = 0.514444
	fpmToMs = 0.00508
)

// ADSB decodes Mode S / 1090ES frames. It keeps one reusable Message, so a
// worker decodes without allocating; it is not safe for concurrent use.
type ADSB struct {
	m adsb.Message
	// decoded: m is a Mode S message the last Decode produced (lastModeS).
	decoded bool
	// Fix enables single-bit error correction of DF17/18 frames.
	Fix bool
}

// Protocol implements FrameDecoder.
func (*ADSB) Protocol() decode.Protocol { return decode.ADSB }

// decodeError carries a reason label.
type decodeError struct {
	reason string
	err    error
}

func (e *decodeError) Error() string  { return e.err.Error() }
func (e *decodeError) Unwrap() error  { return e.err }
func (e *decodeError) Reason() string { return e.reason }

// Reasons implements ReasonLister.
func (*ADSB) Reasons() []string { return []string{"crc", "length", "invalid"} }

func adsbReason(err error) string {
	switch {
	case errors.Is(err, adsb.ErrCRC):
		return "crc"
	case errors.Is(err, adsb.ErrLength):
		return "length"
	}
	return "invalid"
}

// Decode implements FrameDecoder. A frame that fails its CRC is an error
// (a dead letter), never a guessed observation.
func (d *ADSB) Decode(frame []byte, meta Meta, out []decode.Observation) ([]decode.Observation, error) {
	d.decoded = false
	if isSBS(frame) {
		return decodeSBS(frame, out) // --sbs-connect (issue 21)
	}
	m := &d.m
	if err := adsb.DecodeWith(frame, m, adsb.Options{FixOneBit: d.Fix}); err != nil {
		return out, &decodeError{adsbReason(err), err}
	}
	switch m.CRC {
	case adsb.CRCBad:
		return out, &decodeError{"crc", adsb.ErrCRC}
	case adsb.CRCUnknown:
		return out, nil // nothing we can trust
	}
	d.decoded = true
	if m.DF == 11 {
		return out, nil // all-call reply: an address, no state
	}
	out = append(out, decode.Observation{})
	o := &out[len(out)-1]
	observeIdentity(o, m)
	observeKinematics(o, m)
	observeStatus(o, m)
	adsbInfo(m, o)
	return out, nil
}

// lastModeS implements decodedModeS.
func (d *ADSB) lastModeS() *adsb.Message {
	if !d.decoded {
		return nil
	}
	return &d.m
}

// observeIdentity copies who the aircraft is: the key (with readsb's '~'
// for non-ICAO addresses), squawk, callsign, Comm-B register and emitter
// category.
func observeIdentity(o *decode.Observation, m *adsb.Message) {
	key := adsb.AddressString(m.Address)
	if !m.AddressType.IsICAO() {
		key = "~" + key // readsb's convention for non-ICAO addresses
	} else {
		o.ICAO = key
	}
	o.Key = key
	o.ModeSReply = m.CRC == adsb.CRCAddressParity
	if m.HasSquawk {
		o.Squawk = m.Squawk.String()
	}
	if m.HasCallsign && m.Callsign.Valid() {
		// Also Comm-B (DF20/21) identification replies.
		o.Callsign = m.Callsign.String()
	}
	if (m.DF == 20 || m.DF == 21) && m.ME() != 0 {
		// The register a Comm-B reply holds is inferred against the
		// aircraft's known state, which fusion holds; an all-zero MB field
		// (an empty register) says nothing.
		o.HasCommB, o.CommB = true, m.ME()
	}
	if m.Kind == adsb.KindIdentification {
		o.Category, o.CategoryKind = m.EmitterCategory(), decode.CategoryEmitter
	}
}

// observeKinematics copies where the aircraft is and how it moves: the
// altitude in metres, the CPR position (resolved by fusion), the velocity
// and the vertical rate in SI units.
func observeKinematics(o *decode.Observation, m *adsb.Message) {
	if m.HasAltitude {
		o.HasAltitude, o.AltM = true, float64(m.Altitude)*ftToM
		o.AltKind = "baro"
		if m.AltitudeGNSS {
			o.AltKind = "geo"
		}
	}
	if m.HasCPR {
		o.HasCPR, o.CPROdd, o.CPRLat, o.CPRLon = true, m.CPR.Odd, m.CPR.Lat, m.CPR.Lon
		o.CPRSurface = m.Kind == adsb.KindSurfacePosition
	}
	switch {
	case m.HasGroundspeed && m.HasTrack:
		o.HasVelocity, o.SpeedMps, o.HeadingDeg = true, m.Groundspeed*ktToMps, m.Track
	case m.HasAirspeed && m.HasHeading:
		o.HasVelocity, o.SpeedMps, o.HeadingDeg = true, m.Airspeed*ktToMps, m.Heading
	}
	if m.HasVerticalRate && o.HasVelocity {
		o.VRateMps = float64(m.VerticalRate) * fpmToMs
	}
}

// observeStatus copies the emergency state, the position accuracy and a
// warning when a bit error was corrected.
func observeStatus(o *decode.Observation, m *adsb.Message) {
	if m.HasEmergency && m.EmergencyState != 0 {
		o.Emergency = adsb.EmergencyName(m.EmergencyState)
	}
	if m.HasAccuracy {
		o.HAccuracyM = nacpEPU(m.NACp)
		if m.Kind == adsb.KindOperationalStatus {
			o.VAccuracyM = gvaBound(m.GVA)
		}
	}
	if m.BitErrorsFixed > 0 {
		o.Warnings = append(o.Warnings, "1 bit error corrected")
	}
}

// adsbInfo fills the issue 21 block of the observation: the address type,
// the air/ground state, the inputs of NIC and Rc, the version, NACv, SIL
// and the selected heading, as readsb reads them from one message.
func adsbInfo(m *adsb.Message, o *decode.Observation) {
	o.AddrType = uint8(m.AddressType)
	o.AirGround = AirGround(m)
	if m.HasCPR && (m.Kind == adsb.KindSurfacePosition || m.Kind == adsb.KindAirbornePosition) {
		o.PosTypeCode, o.NICB = m.TypeCode, m.NICSupplementB == 1
	}
	if m.HasNACv {
		o.HasNACv, o.NACv = true, m.NACv
	}
	if m.HasSelectedHeading {
		o.HasNavHeading, o.NavHeadingDeg = true, m.SelectedHeading
	}
	switch {
	case m.Kind == adsb.KindOperationalStatus && m.Subtype <= 1:
		// Every version is announced (readsb keeps 3-7 too); the
		// integrity fields exist from version 1 on.
		o.HasVersion, o.Version = true, m.Version
		if m.Version == 1 || m.Version == 2 {
			o.HasNICA, o.NICA = true, m.NICa == 1
			o.HasSIL, o.SIL, o.SILType = true, m.SIL, decode.SILUnknown
		}
		if m.Version == 2 {
			o.SILType = decode.SILPerHour
			if m.SILSupplement == 1 {
				o.SILType = decode.SILPerSample
			}
			if m.Subtype == 1 {
				o.HasNICC, o.NICC = true, m.NICc == 1
			}
		}
	case m.Kind == adsb.KindTargetState && m.HasAccuracy:
		// readsb reads the SIL of a target state message without its
		// supplement (bit 8) as the type: "unknown", which does not
		// replace a type an operational status stated.
		o.HasSIL, o.SIL, o.SILType = true, m.SIL, decode.SILUnknown
	}
}

// AirGround is the air/ground state a message states, readsb's reading of
// the CA field (DF11/17), the flight status (DF4/5/20/21), the vertical
// status (DF0/16) and of surface positions.
func AirGround(m *adsb.Message) decode.AirGround {
	if m.Kind == adsb.KindSurfacePosition {
		return decode.AirGroundGround
	}
	switch m.DF {
	case 11, 17:
		switch m.CA {
		case 4:
			return decode.AirGroundGround
		case 5:
			return decode.AirGroundAirborne
		case 0, 6, 7:
			return decode.AirGroundUncertain
		}
	case 4, 5, 20, 21:
		switch m.FS {
		case 1, 3:
			return decode.AirGroundGround
		case 0, 2, 4, 5:
			return decode.AirGroundUncertain
		}
	case 0, 16:
		if m.VS == 1 {
			return decode.AirGroundGround
		}
		return decode.AirGroundUncertain
	}
	return decode.AirGroundNone
}

// epuByNACp is the 95% horizontal position error bound of each NACp value
// in metres (DO-260B table 2-70: 10 NM down to 3 m); NACp 0 is unknown and
// 12-15 are reserved.
var epuByNACp = [12]float64{0, 18520, 7408, 3704, 1852, 926, 555.6, 185.2, 92.6, 30, 10, 3}

func nacpEPU(nacp uint8) float64 {
	if int(nacp) < len(epuByNACp) {
		return epuByNACp[nacp]
	}
	return 0
}

// gvaBound is the geometric vertical accuracy bound of a GVA value in
// metres (DO-260B 2.2.3.2.7.2.8: 1 ≤ 150 m, 2 ≤ 45 m); 0 and 3 say nothing.
func gvaBound(gva uint8) float64 {
	switch gva {
	case 1:
		return 150
	case 2:
		return 45
	}
	return 0
}
