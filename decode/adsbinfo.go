package decode

import "math"

// Issue 21: the types of the ADS-B version, integrity and intent block of
// Observation (readsb's aircraft.json "type", "nic", "rc", "version",
// "nac_v", "sil", "sil_type", "nav_heading" and "alt_baro": "ground").

// AirGround is the air/ground state a Mode S message states, with readsb's
// meanings: the capability field of DF11/DF17 (4 ground, 5 airborne, 0, 6
// and 7 either), the flight status of DF4/5/20/21 (1 and 3 ground, 0, 2,
// 4 and 5 either), the vertical status of DF0/16 (1 ground), and a surface
// position (ground).
type AirGround uint8

// The air/ground states.
const (
	// AirGroundNone: the message says nothing about it.
	AirGroundNone AirGround = iota
	// AirGroundUncertain: airborne or on the ground.
	AirGroundUncertain
	// AirGroundGround: on the ground.
	AirGroundGround
	// AirGroundAirborne: airborne.
	AirGroundAirborne
)

var airGroundNames = [...]string{"", "uncertain", "ground", "airborne"}

// String is the state's JSON name ("" for none).
func (a AirGround) String() string {
	if int(a) < len(airGroundNames) {
		return airGroundNames[a]
	}
	return "invalid"
}

// SILType says what probability a SIL value is stated per, readsb's
// sil_type: the SIL supplement of a version 2 operational status message.
type SILType uint8

// The SIL types.
const (
	// SILUnknown: not stated (version 1 operational status, target state
	// messages as readsb reads them, version 0 derived SIL).
	SILUnknown SILType = iota
	// SILPerHour: the probability is per flight hour.
	SILPerHour
	// SILPerSample: the probability is per sample.
	SILPerSample
)

var silTypeNames = [...]string{"unknown", "perhour", "persample"}

// String is readsb's name: "unknown", "perhour" or "persample".
func (s SILType) String() string {
	if int(s) < len(silTypeNames) {
		return silTypeNames[s]
	}
	return "unknown"
}

// HasADSBInfo reports whether any value of the issue 21 block is set, so
// that observations of other protocols do not pay for its codec tail (nor
// fusion for its state).
func (o *Observation) HasADSBInfo() bool {
	small := o.AddrType | uint8(o.AirGround) | o.PosTypeCode | o.Version | o.NACv | o.SIL | uint8(o.SILType)
	return small != 0 || math.Float64bits(o.NavHeadingDeg) != 0 || o.anyADSBFlag()
}

// anyADSBFlag reports whether any boolean of the block is set (the
// encoder's hot path: no table built, unlike adsbBits).
func (o *Observation) anyADSBFlag() bool {
	return o.NICB || o.HasVersion || o.HasNICA || o.NICA || o.HasNICC || o.NICC || o.HasNACv || o.HasSIL || o.HasNavHeading
}

// adsbBits packs the block's booleans into the u16 of its codec tail.
func (o *Observation) adsbBits() uint16 {
	var bits uint16
	for _, f := range [...]struct {
		c   bool
		bit uint16
	}{{o.NICB, adsbBitNICB}, {o.HasVersion, adsbBitHasVersion}, {o.HasNICA, adsbBitHasNICA}, {o.NICA, adsbBitNICA},
		{o.HasNICC, adsbBitHasNICC}, {o.NICC, adsbBitNICC}, {o.HasNACv, adsbBitHasNACv}, {o.HasSIL, adsbBitHasSIL},
		{o.HasNavHeading, adsbBitHasNavHeading}} {
		if f.c {
			bits |= f.bit
		}
	}
	return bits
}
