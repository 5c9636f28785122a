package decode

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/cuasd/cuasd/decode/sensorclock"
)

// The observation wire format is a compact binary record, because the
// pipeline moves hundreds of thousands of observations a second and JSON
// would cost more than decoding the frames. Layout (little endian):
//
//	u8 version (1) | u32 flags | i64 time | i64 ingest |
//	f64 lat | f64 lon | f64 alt | f64 speed | f64 heading | f64 vrate |
//	f64 oplat | f64 oplon | f64 hacc | f64 vacc | u32 cprlat | u32 cprlon | u8 sysid | u8 compid |
//	strings (u16 length + bytes): protocol key sensor icao uasid operatorid
//	callsign category poskind altkind emergency squawk transmitter |
//	u16 nwarnings, each a string |
//	u64 Comm-B MB field, only when the flag flCommB is set (version 4) |
//	f64 signal level, only when the flag flSignal is set (version 4; field
//	sensors' RSSI, issue 25) |
//	u16 product type + string description, only when the flag flProduct is
//	set (version 4; the product claim, issue 25) |
//	the ADS-B block of issue 21, only when the flag flADSBInfo is set
//	(version 4): u16 bits (see adsbBit*), u8 address type, u8 air/ground,
//	u8 position type code, u8 version, u8 NACv, u8 SIL, u8 SIL type, f64
//	selected heading |
//	the sensor time of issue 30, only when the flag flSensorTime is set
//	(version 4): i64 SensorNs, u64 SensorTicks, u8 TimeSource (SensorClock
//	is local to the decoding process and not carried: a reader outside
//	it compares SensorNs of one sensor between clock resets)
//
// Flag bits 16-17 hold the CategoryKind. Bit 24 is the product claim's
// (issue 25) and bit 25 the ADS-B block's (issue 21), kept apart from the
// low bits that other optional tails take; the tails follow in that order.
//
// An optional tail is added within version 4 behind a new flag bit: a
// record without the bit reads as before, so records stored by an older
// cuasd still replay; an older cuasd refuses a record with a tail it does
// not know (trailing bytes) rather than misreading it.
//
// A batch is a sequence of records each preceded by a u32 length. Version 3
// records (before Comm-B) are still read, so that observations stored by
// an older cuasd replay after an upgrade.
const codecVersion = 4

// codecVersionNoCommB is the previous version, identical without Comm-B.
const codecVersionNoCommB = 3

const (
	flHasPos = 1 << iota
	flHasAlt
	flHasVel
	flHasOpPos
	flHasCPR
	flCPROdd
	flCPRSurface
	flModeS
	flCommB
	flSignal
)

// flProduct marks a record with a product claim (issue 25). It is a high
// bit, apart from the iota block, so that other fields can take the next
// low bits without renumbering it.
const flProduct = 1 << 24

// flADSBInfo flags the issue 21 ADS-B block (Observation.AddrType to
// NavHeadingDeg); its tail follows the product claim's.
const flADSBInfo = 1 << 25

// flSensorTime flags the issue 30 sensor time; its tail follows the
// ADS-B block's.
const flSensorTime = 1 << 26

// flSimulated marks an observation of a simulated frame (issue 34); no
// tail. Bit 26 is issue 30's sensor time.
const flSimulated = 1 << 27

// The bits of the issue 21 block's u16.
const (
	adsbBitNICB = 1 << iota
	adsbBitHasVersion
	adsbBitHasNICA
	adsbBitNICA
	adsbBitHasNICC
	adsbBitNICC
	adsbBitHasNACv
	adsbBitHasSIL
	adsbBitHasNavHeading
)

// The category kind travels in bits 16-17 of the flags (within version 4:
// a record without them has no kind).
const (
	flCatShift = 16
	flCatMask  = 3 << flCatShift
)

// ErrCodec reports a malformed observation record.
var ErrCodec = errors.New("decode: malformed observation record")

// AppendBinary appends the wire form of o to b.
func (o *Observation) AppendBinary(b []byte) []byte {
	var fl uint32
	set := func(c bool, f uint32) {
		if c {
			fl |= f
		}
	}
	set(o.HasPosition, flHasPos)
	set(o.HasAltitude, flHasAlt)
	set(o.HasVelocity, flHasVel)
	set(o.HasOperatorPosition, flHasOpPos)
	set(o.HasCPR, flHasCPR)
	set(o.CPROdd, flCPROdd)
	set(o.CPRSurface, flCPRSurface)
	set(o.ModeSReply, flModeS)
	set(o.HasCommB, flCommB)
	set(o.Signal != 0, flSignal)
	set(o.Description != "" || o.ProductType != 0, flProduct) // issue 25
	set(o.HasADSBInfo(), flADSBInfo)                          // issue 21
	set(o.SensorNs != 0 || o.SensorTicks != 0 || o.TimeSource != 0, flSensorTime)
	set(o.Simulated, flSimulated) // issue 34
	fl |= uint32(o.CategoryKind&3) << flCatShift
	b = append(b, codecVersion)
	b = binary.LittleEndian.AppendUint32(b, fl)
	b = binary.LittleEndian.AppendUint64(b, uint64(o.TimeUnixNano))
	b = binary.LittleEndian.AppendUint64(b, uint64(o.IngestUnixNano))
	for _, f := range [...]float64{o.Lat, o.Lon, o.AltM, o.SpeedMps, o.HeadingDeg, o.VRateMps, o.OperatorLat, o.OperatorLon, o.HAccuracyM, o.VAccuracyM} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
	}
	b = binary.LittleEndian.AppendUint32(b, o.CPRLat)
	b = binary.LittleEndian.AppendUint32(b, o.CPRLon)
	b = append(b, o.SystemID, o.ComponentID)
	for _, s := range [...]string{string(o.Protocol), o.Key, o.Sensor, o.ICAO, o.UASID, o.OperatorID,
		o.Callsign, o.Category, o.PositionMethod, o.AltKind, o.Emergency, o.Squawk, o.Transmitter} {
		b = appendStr(b, s)
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(min(len(o.Warnings), math.MaxUint16)))
	for i, w := range o.Warnings {
		if i == math.MaxUint16 {
			break
		}
		b = appendStr(b, w)
	}
	return o.appendTails(b, fl)
}

// appendTails appends the optional tails flagged in fl, in their order.
func (o *Observation) appendTails(b []byte, fl uint32) []byte {
	if o.HasCommB {
		b = binary.LittleEndian.AppendUint64(b, o.CommB)
	}
	if o.Signal != 0 {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(o.Signal))
	}
	// Issue 25: the product claim, after every older field so that records
	// without it read as before.
	if fl&flProduct != 0 {
		b = binary.LittleEndian.AppendUint16(b, o.ProductType)
		b = appendStr(b, o.Description)
	}
	if fl&flADSBInfo != 0 { // issue 21, after the product claim
		b = o.appendADSBInfo(b)
	}
	if fl&flSensorTime != 0 { // issue 30, after the ADS-B block
		b = binary.LittleEndian.AppendUint64(b, uint64(o.SensorNs))
		b = binary.LittleEndian.AppendUint64(b, o.SensorTicks)
		b = append(b, uint8(o.TimeSource))
	}
	return b
}

// appendADSBInfo appends the issue 21 block.
func (o *Observation) appendADSBInfo(b []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, o.adsbBits())
	b = append(b, o.AddrType, uint8(o.AirGround), o.PosTypeCode, o.Version, o.NACv, o.SIL, uint8(o.SILType))
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(o.NavHeadingDeg))
}

// readADSBInfo reads the issue 21 block.
func (o *Observation) readADSBInfo(r *reader) {
	bits := r.u16()
	o.NICB = bits&adsbBitNICB != 0
	o.HasVersion = bits&adsbBitHasVersion != 0
	o.HasNICA, o.NICA = bits&adsbBitHasNICA != 0, bits&adsbBitNICA != 0
	o.HasNICC, o.NICC = bits&adsbBitHasNICC != 0, bits&adsbBitNICC != 0
	o.HasNACv = bits&adsbBitHasNACv != 0
	o.HasSIL = bits&adsbBitHasSIL != 0
	o.HasNavHeading = bits&adsbBitHasNavHeading != 0
	o.AddrType, o.AirGround, o.PosTypeCode, o.Version = r.u8(), AirGround(r.u8()), r.u8(), r.u8()
	o.NACv, o.SIL, o.SILType = r.u8(), r.u8(), SILType(r.u8())
	o.NavHeadingDeg = math.Float64frombits(r.u64())
}

func appendStr(b []byte, s string) []byte {
	if len(s) > math.MaxUint16 {
		s = s[:math.MaxUint16]
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// UnmarshalBinary decodes one record produced by AppendBinary into o,
// replacing its contents.
func (o *Observation) UnmarshalBinary(b []byte) error {
	r := reader{b: b}
	v := r.u8()
	if v != codecVersion && v != codecVersionNoCommB {
		return ErrCodec
	}
	fl := r.u32()
	if v == codecVersionNoCommB {
		fl &^= flCommB
	}
	*o = Observation{
		TimeUnixNano:   int64(r.u64()),
		IngestUnixNano: int64(r.u64()),
	}
	o.HasPosition = fl&flHasPos != 0
	o.HasAltitude = fl&flHasAlt != 0
	o.HasVelocity = fl&flHasVel != 0
	o.HasOperatorPosition = fl&flHasOpPos != 0
	o.HasCPR = fl&flHasCPR != 0
	o.CPROdd = fl&flCPROdd != 0
	o.CPRSurface = fl&flCPRSurface != 0
	o.ModeSReply = fl&flModeS != 0
	o.Simulated = fl&flSimulated != 0
	o.CategoryKind = CategoryKind((fl & flCatMask) >> flCatShift)
	for _, f := range [...]*float64{&o.Lat, &o.Lon, &o.AltM, &o.SpeedMps, &o.HeadingDeg, &o.VRateMps, &o.OperatorLat, &o.OperatorLon, &o.HAccuracyM, &o.VAccuracyM} {
		*f = math.Float64frombits(r.u64())
	}
	o.CPRLat, o.CPRLon = r.u32(), r.u32()
	o.SystemID, o.ComponentID = r.u8(), r.u8()
	o.Protocol = Protocol(r.str())
	for _, s := range [...]*string{&o.Key, &o.Sensor, &o.ICAO, &o.UASID, &o.OperatorID,
		&o.Callsign, &o.Category, &o.PositionMethod, &o.AltKind, &o.Emergency, &o.Squawk, &o.Transmitter} {
		*s = r.str()
	}
	if n := int(r.u16()); n > 0 && !r.bad {
		o.Warnings = make([]string, 0, min(n, 64))
		for i := 0; i < n && !r.bad; i++ {
			o.Warnings = append(o.Warnings, r.str())
		}
	}
	o.readTails(&r, fl)
	if r.bad || len(r.b) != 0 {
		return ErrCodec
	}
	return nil
}

// readTails reads the optional tails that follow the fixed part, each
// present when its flag is set, in the order AppendBinary writes them.
func (o *Observation) readTails(r *reader, fl uint32) {
	if fl&flCommB != 0 {
		o.HasCommB, o.CommB = true, r.u64()
	}
	if fl&flSignal != 0 {
		o.Signal = math.Float64frombits(r.u64())
	}
	if fl&flProduct != 0 { // issue 25
		o.ProductType = r.u16()
		o.Description = r.str()
	}
	if fl&flADSBInfo != 0 { // issue 21, after the product claim
		o.readADSBInfo(r)
	}
	if fl&flSensorTime != 0 { // issue 30
		o.SensorNs, o.SensorTicks = int64(r.u64()), r.u64()
		o.TimeSource = sensorclock.Source(r.u8())
	}
}

// AppendBatch appends o to a batch (a u32 length prefix, then the record).
func (o *Observation) AppendBatch(b []byte) []byte {
	at := len(b)
	b = append(b, 0, 0, 0, 0)
	b = o.AppendBinary(b)
	binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	return b
}

// EachInBatch calls fn for every record of a batch, decoding into a reused
// Observation; fn must copy what it keeps.
func EachInBatch(b []byte, fn func(*Observation) error) error {
	var o Observation
	for len(b) > 0 {
		if len(b) < 4 {
			return ErrCodec
		}
		n := int(binary.LittleEndian.Uint32(b))
		if n > len(b)-4 {
			return ErrCodec
		}
		if err := o.UnmarshalBinary(b[4 : 4+n]); err != nil {
			return err
		}
		if err := fn(&o); err != nil {
			return err
		}
		b = b[4+n:]
	}
	return nil
}

type reader struct {
	b   []byte
	bad bool
}

func (r *reader) take(n int) []byte {
	if r.bad || len(r.b) < n {
		r.bad = true
		return make([]byte, n)
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}
func (r *reader) u8() uint8   { return r.take(1)[0] }
func (r *reader) u16() uint16 { return binary.LittleEndian.Uint16(r.take(2)) }
func (r *reader) u32() uint32 { return binary.LittleEndian.Uint32(r.take(4)) }
func (r *reader) u64() uint64 { return binary.LittleEndian.Uint64(r.take(8)) }
func (r *reader) str() string {
	n := int(r.u16())
	if r.bad {
		return ""
	}
	return string(r.take(n))
}
