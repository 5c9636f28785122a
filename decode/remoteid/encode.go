package remoteid

import (
	"encoding/binary"
	"math"
)

// The encoder turns values in units (the "normative form") into wire bytes,
// with the quantisation and range checks of opendroneid-core-c, so that the
// bytes it makes are the bytes the reference library makes. It is used by
// tests and by the traffic simulator.

// Sentinels for "unknown" in the normative form.
const (
	DirectionUnknown       = 361.0
	SpeedHorizontalUnknown = 255.0
	SpeedVerticalUnknown   = 63.0
	AltitudeUnknown        = -1000.0
	TimestampUnknown       = 6553.5 // 0xFFFF tenths
)

// BasicIDData is a Basic ID message in normative form. UASID holds up to 20
// bytes (text, or binary for a specific session ID).
type BasicIDData struct {
	IDType uint8
	UAType uint8
	UASID  []byte
}

// LocationData is a Location/Vector message in normative form; use the
// *Unknown sentinels (and 0,0 for the position) for missing values.
type LocationData struct {
	Status          uint8
	Direction       float64 // degrees, 0..360 or DirectionUnknown
	SpeedHorizontal float64 // m/s, 0..254.25 or SpeedHorizontalUnknown
	SpeedVertical   float64 // m/s, -62..62 or SpeedVerticalUnknown
	Latitude        float64
	Longitude       float64
	AltitudeBaro    float64 // m, -1000..31767.5
	AltitudeGeo     float64
	HeightType      uint8
	Height          float64
	HorizAccuracy   uint8
	VertAccuracy    uint8
	BaroAccuracy    uint8
	SpeedAccuracy   uint8
	TSAccuracy      uint8
	Timestamp       float64 // seconds after the hour, 0..3600 or TimestampUnknown
}

// AuthData is one Authentication page in normative form. LastPageIndex,
// Length and Timestamp are used on page 0 only; Data holds at most 17 bytes
// on page 0 and 23 on other pages.
type AuthData struct {
	Page          uint8
	AuthType      uint8
	LastPageIndex uint8
	Length        uint8
	Timestamp     uint32
	Data          []byte
}

// SelfIDData is a Self ID message in normative form.
type SelfIDData struct {
	DescType uint8
	Desc     string
}

// SystemData is a System message in normative form. Timestamp is written for
// protocol version 2 only.
type SystemData struct {
	OperatorLocationType uint8
	ClassificationType   uint8
	OperatorLatitude     float64
	OperatorLongitude    float64
	AreaCount            uint16
	AreaRadius           float64 // m, 0..2550, stored in 10 m steps
	AreaCeiling          float64
	AreaFloor            float64
	CategoryEU           uint8
	ClassEU              uint8
	OperatorAltitudeGeo  float64
	Timestamp            uint32 // seconds since 2019-01-01
}

// OperatorIDData is an Operator ID message in normative form.
type OperatorIDData struct {
	OperatorIDType uint8
	OperatorID     string
}

func header(dst *[MessageSize]byte, t MessageType, version uint8) error {
	if version > MaxVersion {
		return errAt(0, "protocol version %d is not defined", version)
	}
	*dst = [MessageSize]byte{}
	dst[0] = byte(t)<<4 | version
	return nil
}

func nibble(off int, name string, v uint8) error {
	if v > 15 {
		return errAt(off, "%s %d does not fit in 4 bits", name, v)
	}
	return nil
}

// EncodeBasicID writes a Basic ID message.
func EncodeBasicID(dst *[MessageSize]byte, version uint8, d *BasicIDData) error {
	if err := header(dst, TypeBasicID, version); err != nil {
		return err
	}
	if err := nibble(1, "id_type", d.IDType); err != nil {
		return err
	}
	if err := nibble(1, "ua_type", d.UAType); err != nil {
		return err
	}
	if len(d.UASID) > 20 {
		return errAt(2, "UAS ID of %d bytes exceeds 20", len(d.UASID))
	}
	dst[1] = d.IDType<<4 | d.UAType
	copy(dst[2:22], d.UASID)
	return nil
}

// encodeAltitude is the library's (int)((m + 1000) / 0.5), truncating.
func encodeAltitude(off int, m float64) (uint16, error) {
	if m < -1000 || m > 31767.5 || math.IsNaN(m) {
		return 0, errAt(off, "altitude %g m outside -1000..31767.5", m)
	}
	return uint16((m + 1000) / 0.5), nil
}

func encodeLatLon(off int, v, limit float64) (int32, error) {
	if v < -limit || v > limit || math.IsNaN(v) {
		return 0, errAt(off, "coordinate %g outside ±%g", v, limit)
	}
	return int32(math.Round(v * 1e7)), nil
}

// EncodeLocation writes a Location/Vector message.
func EncodeLocation(dst *[MessageSize]byte, version uint8, d *LocationData) error {
	if err := header(dst, TypeLocation, version); err != nil {
		return err
	}
	if err := checkLocationCodes(d); err != nil {
		return err
	}
	dir, ew, err := encodeDirection(d.Direction)
	if err != nil {
		return err
	}
	sh, mult, err := encodeSpeedHorizontal(d.SpeedHorizontal)
	if err != nil {
		return err
	}
	sv, err := encodeSpeedVertical(d.SpeedVertical)
	if err != nil {
		return err
	}
	var pos encodedPosition
	if err := pos.encode(d); err != nil {
		return err
	}
	ts, err := encodeTimestamp(d.Timestamp)
	if err != nil {
		return err
	}
	dst[1] = d.Status<<4 | d.HeightType<<2 | ew<<1 | mult
	dst[2] = dir
	dst[3] = sh
	dst[4] = sv
	binary.LittleEndian.PutUint32(dst[5:], uint32(pos.lat))
	binary.LittleEndian.PutUint32(dst[9:], uint32(pos.lon))
	binary.LittleEndian.PutUint16(dst[13:], pos.baro)
	binary.LittleEndian.PutUint16(dst[15:], pos.geo)
	binary.LittleEndian.PutUint16(dst[17:], pos.height)
	dst[19] = d.VertAccuracy<<4 | d.HorizAccuracy
	dst[20] = d.BaroAccuracy<<4 | d.SpeedAccuracy
	binary.LittleEndian.PutUint16(dst[21:], ts)
	dst[23] = d.TSAccuracy
	return nil
}

// checkLocationCodes checks the 4-bit status and accuracy codes and the
// 1-bit height type of a Location message.
func checkLocationCodes(d *LocationData) error {
	for _, f := range []struct {
		off  int
		name string
		v    uint8
	}{{1, "status", d.Status}, {19, "horiz_accuracy", d.HorizAccuracy}, {19, "vert_accuracy", d.VertAccuracy},
		{20, "baro_accuracy", d.BaroAccuracy}, {20, "speed_accuracy", d.SpeedAccuracy}, {23, "ts_accuracy", d.TSAccuracy}} {
		if err := nibble(f.off, f.name, f.v); err != nil {
			return err
		}
	}
	if d.HeightType > 1 {
		return errAt(1, "height_type %d is not 0 or 1", d.HeightType)
	}
	return nil
}

// encodeDirection is the track direction rounded to whole degrees (360
// wraps to 0, 361 is unknown) as the byte and the east/west bit.
func encodeDirection(deg float64) (dir, ew uint8, err error) {
	if !(deg >= 0 && deg <= 360 || deg == DirectionUnknown) {
		return 0, 0, errAt(2, "direction %g outside 0..360 (or 361 unknown)", deg)
	}
	d := int(math.Round(deg))
	if d == 360 {
		d = 0
	}
	if d >= 180 {
		ew, d = 1, d-180
	}
	return uint8(d), ew, nil
}

// encodeSpeedHorizontal is the ground speed in 0.25 m/s steps up to
// 63.75, then (multiplier bit set) in 0.75 m/s steps.
func encodeSpeedHorizontal(sh float64) (raw, mult uint8, err error) {
	if !(sh >= 0 && sh <= 254.25 || sh == SpeedHorizontalUnknown) {
		return 0, 0, errAt(3, "horizontal speed %g outside 0..254.25 (or 255 unknown)", sh)
	}
	if sh <= 255*0.25 {
		return uint8(int(math.Round(sh / 0.25))), 0, nil
	}
	return uint8(min(int(math.Round((sh-255*0.25)/0.75)), 255)), 1, nil
}

// encodeSpeedVertical is the vertical speed truncated to 0.5 m/s steps;
// 63 is unknown.
func encodeSpeedVertical(sv float64) (uint8, error) {
	if !(sv >= -62 && sv <= 62 || sv == SpeedVerticalUnknown) {
		return 0, errAt(4, "vertical speed %g outside -62..62 (or 63 unknown)", sv)
	}
	return uint8(int8(sv / 0.5)), nil
}

// encodedPosition is a Location message's latitude, longitude and
// altitudes in their wire units.
type encodedPosition struct {
	lat, lon          int32
	baro, geo, height uint16
}

func (p *encodedPosition) encode(d *LocationData) (err error) {
	if p.lat, err = encodeLatLon(5, d.Latitude, 90); err != nil {
		return err
	}
	if p.lon, err = encodeLatLon(9, d.Longitude, 180); err != nil {
		return err
	}
	if p.baro, err = encodeAltitude(13, d.AltitudeBaro); err != nil {
		return err
	}
	if p.geo, err = encodeAltitude(15, d.AltitudeGeo); err != nil {
		return err
	}
	p.height, err = encodeAltitude(17, d.Height)
	return err
}

// encodeTimestamp is the tenths of seconds since the hour, 0xFFFF when
// unknown.
func encodeTimestamp(s float64) (uint16, error) {
	if s == TimestampUnknown {
		return 0xFFFF, nil
	}
	if !(s >= 0 && s <= 3600) {
		return 0, errAt(21, "timestamp %g s outside 0..3600 (or 6553.5 unknown)", s)
	}
	return uint16(math.Round(s * 10)), nil
}

// EncodeAuth writes one Authentication page. It refuses a page-0 length
// that the announced pages cannot hold, as the reference library does.
func EncodeAuth(dst *[MessageSize]byte, version uint8, d *AuthData) error {
	if err := header(dst, TypeAuth, version); err != nil {
		return err
	}
	if err := nibble(1, "auth_type", d.AuthType); err != nil {
		return err
	}
	if err := nibble(1, "page", d.Page); err != nil {
		return err
	}
	dst[1] = d.AuthType<<4 | d.Page
	if d.Page == 0 {
		if d.LastPageIndex > 15 {
			return errAt(2, "last page index %d exceeds 15", d.LastPageIndex)
		}
		if int(d.Length) > authCapacity(d.LastPageIndex) {
			return errAt(3, "length %d exceeds the %d bytes of pages 0..%d", d.Length, authCapacity(d.LastPageIndex), d.LastPageIndex)
		}
		if len(d.Data) > 17 {
			return errAt(8, "page 0 data of %d bytes exceeds 17", len(d.Data))
		}
		dst[2] = d.LastPageIndex
		dst[3] = d.Length
		binary.LittleEndian.PutUint32(dst[4:], d.Timestamp)
		copy(dst[8:], d.Data)
		return nil
	}
	if len(d.Data) > 23 {
		return errAt(2, "page data of %d bytes exceeds 23", len(d.Data))
	}
	copy(dst[2:], d.Data)
	return nil
}

// EncodeSelfID writes a Self ID message.
func EncodeSelfID(dst *[MessageSize]byte, version uint8, d *SelfIDData) error {
	if err := header(dst, TypeSelfID, version); err != nil {
		return err
	}
	if len(d.Desc) > 23 {
		return errAt(2, "description of %d bytes exceeds 23", len(d.Desc))
	}
	dst[1] = d.DescType
	copy(dst[2:], d.Desc)
	return nil
}

// EncodeSystem writes a System message.
func EncodeSystem(dst *[MessageSize]byte, version uint8, d *SystemData) error {
	if err := header(dst, TypeSystem, version); err != nil {
		return err
	}
	if d.OperatorLocationType > 3 {
		return errAt(1, "operator_location_type %d does not fit in 2 bits", d.OperatorLocationType)
	}
	if d.ClassificationType > 7 {
		return errAt(1, "classification_type %d does not fit in 3 bits", d.ClassificationType)
	}
	if err := nibble(17, "category_eu", d.CategoryEU); err != nil {
		return err
	}
	if err := nibble(17, "class_eu", d.ClassEU); err != nil {
		return err
	}
	lat, err := encodeLatLon(2, d.OperatorLatitude, 90)
	if err != nil {
		return err
	}
	lon, err := encodeLatLon(6, d.OperatorLongitude, 180)
	if err != nil {
		return err
	}
	if !(d.AreaRadius >= 0 && d.AreaRadius <= 2550) {
		return errAt(12, "area radius %g m outside 0..2550", d.AreaRadius)
	}
	ceil, err := encodeAltitude(13, d.AreaCeiling)
	if err != nil {
		return err
	}
	floor, err := encodeAltitude(15, d.AreaFloor)
	if err != nil {
		return err
	}
	opAlt, err := encodeAltitude(18, d.OperatorAltitudeGeo)
	if err != nil {
		return err
	}
	dst[1] = d.ClassificationType<<2 | d.OperatorLocationType
	binary.LittleEndian.PutUint32(dst[2:], uint32(lat))
	binary.LittleEndian.PutUint32(dst[6:], uint32(lon))
	binary.LittleEndian.PutUint16(dst[10:], d.AreaCount)
	dst[12] = uint8(int(d.AreaRadius) / 10) // integer division, as the library does
	binary.LittleEndian.PutUint16(dst[13:], ceil)
	binary.LittleEndian.PutUint16(dst[15:], floor)
	dst[17] = d.CategoryEU<<4 | d.ClassEU
	binary.LittleEndian.PutUint16(dst[18:], opAlt)
	if version >= Version2 {
		binary.LittleEndian.PutUint32(dst[20:], d.Timestamp)
	}
	return nil
}

// EncodeOperatorID writes an Operator ID message.
func EncodeOperatorID(dst *[MessageSize]byte, version uint8, d *OperatorIDData) error {
	if err := header(dst, TypeOperatorID, version); err != nil {
		return err
	}
	if len(d.OperatorID) > 20 {
		return errAt(2, "operator ID of %d bytes exceeds 20", len(d.OperatorID))
	}
	dst[1] = d.OperatorIDType
	copy(dst[2:22], d.OperatorID)
	return nil
}

// AppendPack appends a message pack holding msgs to dst. It refuses what
// DecodePack refuses (no messages, more than 9, a nested pack, an undefined
// type) and, like the reference library, a pack that breaks F3411's content
// limits (two Location messages, say).
func AppendPack(dst []byte, version uint8, msgs ...[MessageSize]byte) ([]byte, error) {
	if version > MaxVersion {
		return dst, errAt(0, "protocol version %d is not defined", version)
	}
	if len(msgs) == 0 || len(msgs) > MaxPackMessages {
		return dst, errAt(2, "message pack count %d, want 1 to 9", len(msgs))
	}
	var p Pack
	for i := range msgs {
		if err := Decode(msgs[i][:], &p.Messages[i]); err != nil {
			return dst, rebase(err, 3+i*MessageSize)
		}
	}
	p.Count = len(msgs)
	p.checkContent()
	if p.Warnings.Has(WarnDuplicateMessage) {
		return dst, errAt(2, "message pack breaks F3411's content limits (a message kind repeated)")
	}
	dst = append(dst, byte(TypePack)<<4|version, MessageSize, byte(len(msgs)))
	for i := range msgs {
		dst = append(dst, msgs[i][:]...)
	}
	return dst, nil
}

// Data returns the Location in normative form (the inverse of EncodeLocation
// up to the format's resolution).
func (l *Location) Data() LocationData {
	d := LocationData{
		Status: l.Status, HeightType: l.HeightType,
		HorizAccuracy: l.HorizAcc, VertAccuracy: l.VertAcc, BaroAccuracy: l.BaroAcc,
		SpeedAccuracy: l.SpeedAcc, TSAccuracy: l.TSAcc,
	}
	d.Direction, _ = l.Direction()
	d.SpeedHorizontal, _ = l.SpeedHorizontal()
	d.SpeedVertical, _ = l.SpeedVertical()
	d.Latitude, d.Longitude, _ = l.Position()
	d.AltitudeBaro, _ = l.AltitudeBaro()
	d.AltitudeGeo, _ = l.AltitudeGeo()
	d.Height, _ = l.Height()
	d.Timestamp, _ = l.Timestamp()
	return d
}

// Data returns the System message in normative form.
func (s *System) Data() SystemData {
	d := SystemData{
		OperatorLocationType: s.OperatorLocationType, ClassificationType: s.ClassificationType,
		AreaCount: s.AreaCount, AreaRadius: s.AreaRadius(), CategoryEU: s.CategoryEU, ClassEU: s.ClassEU,
		Timestamp: s.Timestamp,
	}
	d.OperatorLatitude, d.OperatorLongitude, _ = s.OperatorPosition()
	d.AreaCeiling, _ = s.AreaCeiling()
	d.AreaFloor, _ = s.AreaFloor()
	d.OperatorAltitudeGeo, _ = s.OperatorAltitudeGeo()
	return d
}
