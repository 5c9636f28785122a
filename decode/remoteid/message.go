package remoteid

import "encoding/binary"

// MessageSize is the size of every Remote ID message on the air.
const MessageSize = 25

// MessageType is the high nibble of byte 0 of a message.
type MessageType uint8

// The message types of ASTM F3411. 6 to 0xE are undefined.
const (
	TypeBasicID    MessageType = 0x0
	TypeLocation   MessageType = 0x1
	TypeAuth       MessageType = 0x2
	TypeSelfID     MessageType = 0x3
	TypeSystem     MessageType = 0x4
	TypeOperatorID MessageType = 0x5
	TypePack       MessageType = 0xF
)

var typeNames = [...]string{"basic_id", "location", "auth", "self_id", "system", "operator_id"}

// String returns the JSON name of the type: basic_id, location, auth,
// self_id, system, operator_id or message_pack.
func (t MessageType) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	if t == TypePack {
		return "message_pack"
	}
	return "invalid"
}

// Protocol versions (low nibble of byte 0).
const (
	Version0 = 0 // ASTM F3411-19
	Version1 = 1 // ASTM F3411-20 / prEN 4709-002 P1
	Version2 = 2 // ASTM F3411-22a
	// MaxVersion is the newest version this decoder knows. Higher versions
	// are refused rather than guessed at (see docs/design/remoteid.md).
	MaxVersion = Version2
)

// Message is one decoded 25-byte message. Only the member named by Type is
// meaningful; the others keep whatever a previous decode left in them, so
// that a reused Message costs nothing to reset. Values are the raw wire
// integers; the accessor methods apply units and the "unknown" sentinels.
type Message struct {
	Type    MessageType
	Version uint8
	// Warnings are this message's plausibility findings.
	Warnings Warnings
	// Bytes is a copy of the 25 message bytes as received.
	Bytes [MessageSize]byte

	BasicID    BasicID
	Location   Location
	Auth       Auth
	SelfID     SelfID
	System     System
	OperatorID OperatorID
}

// BasicID is the Basic ID message (type 0).
type BasicID struct {
	IDType uint8 // 0 none, 1 serial (CTA-2063-A), 2 CAA registration, 3 UTM UUID, 4 specific session
	UAType uint8 // 0..15
	ID     [20]byte
}

// Location is the Location/Vector message (type 1), as raw wire fields.
type Location struct {
	Status       uint8 // 0 undeclared, 1 ground, 2 airborne, 3 emergency, 4 RID system failure (v2)
	HeightType   uint8 // 0 above takeoff, 1 above ground
	EWFlag       uint8 // direction segment: 0 east (0..179), 1 west (180..359)
	SpeedMult    uint8 // 0: 0.25 m/s steps, 1: 0.75 m/s steps above 63.75
	DirectionRaw uint8
	SpeedHRaw    uint8
	SpeedVRaw    int8
	LatRaw       int32 // degrees * 1e7
	LonRaw       int32
	AltBaroRaw   uint16 // (m + 1000) * 2
	AltGeoRaw    uint16
	HeightRaw    uint16
	HorizAcc     uint8
	VertAcc      uint8
	BaroAcc      uint8
	SpeedAcc     uint8
	TSAcc        uint8
	TimestampRaw uint16 // tenths of a second after the UTC hour
}

// Auth is one Authentication message page (type 2).
type Auth struct {
	AuthType uint8
	Page     uint8
	// LastPageIndex, Length and Timestamp exist on page 0 only.
	LastPageIndex uint8
	Length        uint8
	Timestamp     uint32 // seconds since 2019-01-01T00:00:00Z
	// Data is the page's authentication data: 17 bytes on page 0, 23 on others.
	Data    [23]byte
	DataLen uint8
}

// SelfID is the Self ID message (type 3).
type SelfID struct {
	DescType uint8
	Desc     [23]byte
}

// System is the System message (type 4), as raw wire fields.
type System struct {
	OperatorLocationType uint8
	ClassificationType   uint8
	OpLatRaw             int32
	OpLonRaw             int32
	AreaCount            uint16
	AreaRadiusRaw        uint8 // metres / 10
	AreaCeilingRaw       uint16
	AreaFloorRaw         uint16
	CategoryEU           uint8
	ClassEU              uint8
	OpAltGeoRaw          uint16
	// HasTimestamp is false for protocol versions before 2, which lack the field.
	HasTimestamp bool
	Timestamp    uint32 // seconds since 2019-01-01T00:00:00Z
}

// OperatorID is the Operator ID message (type 5).
type OperatorID struct {
	OperatorIDType uint8
	ID             [20]byte
}

// Epoch2019 is the Unix time of 2019-01-01T00:00:00Z, the epoch of the
// Authentication and System timestamps.
const Epoch2019 = 1546300800

// Decode decodes one 25-byte message into m. It allocates nothing when the
// message decodes; the returned error is an *Error naming the byte offset.
// A message pack (type 0xF) is refused here: use DecodePack.
func Decode(b []byte, m *Message) error {
	if len(b) != MessageSize {
		return errAt(len(b), "message length %d, want %d", len(b), MessageSize)
	}
	t := MessageType(b[0] >> 4)
	v := b[0] & 0x0F
	if t == TypePack {
		return errAt(0, "message type 0xF is a message pack, not a single message")
	}
	if t > TypeOperatorID {
		return errAt(0, "message type 0x%X is not defined (0 to 5 and 0xF are)", uint8(t))
	}
	if v > MaxVersion {
		return errAt(0, "protocol version %d is not defined (0, 1 and 2 are)", v)
	}
	m.Type = t
	m.Version = v
	m.Warnings = 0
	copy(m.Bytes[:], b)
	if v < Version2 {
		m.Warnings.add(WarnLegacyVersion)
	}
	switch t {
	case TypeBasicID:
		decodeBasicID(b, m)
	case TypeLocation:
		decodeLocation(b, m)
	case TypeAuth:
		return decodeAuth(b, m)
	case TypeSelfID:
		decodeSelfID(b, m)
	case TypeSystem:
		decodeSystem(b, m)
	case TypeOperatorID:
		decodeOperatorID(b, m)
	}
	return nil
}

func decodeBasicID(b []byte, m *Message) {
	d := &m.BasicID
	d.IDType = b[1] >> 4
	d.UAType = b[1] & 0x0F
	copy(d.ID[:], b[2:22])
	// Bytes 22..24 are reserved. Real transmitters fill them with 0xA5 or
	// leftovers, so they are ignored rather than flagged.
	if d.IDType > 4 {
		m.Warnings.add(WarnIDTypeReserved)
	}
	if d.ID[0] == 0 {
		m.Warnings.add(WarnUASIDEmpty)
	} else if d.IDType != 4 && !printable(d.ID[:]) {
		// A session ID (type 4) is binary by design; the other types are text.
		m.Warnings.add(WarnUASIDNotPrintable)
	}
}

func decodeLocation(b []byte, m *Message) {
	d := &m.Location
	d.Status = b[1] >> 4
	if b[1]&0x08 != 0 {
		m.Warnings.add(WarnReservedBitsSet)
	}
	d.HeightType = (b[1] >> 2) & 1
	d.EWFlag = (b[1] >> 1) & 1
	d.SpeedMult = b[1] & 1
	d.DirectionRaw = b[2]
	d.SpeedHRaw = b[3]
	d.SpeedVRaw = int8(b[4])
	d.LatRaw = int32(binary.LittleEndian.Uint32(b[5:]))
	d.LonRaw = int32(binary.LittleEndian.Uint32(b[9:]))
	d.AltBaroRaw = binary.LittleEndian.Uint16(b[13:])
	d.AltGeoRaw = binary.LittleEndian.Uint16(b[15:])
	d.HeightRaw = binary.LittleEndian.Uint16(b[17:])
	d.HorizAcc = b[19] & 0x0F
	d.VertAcc = b[19] >> 4
	d.SpeedAcc = b[20] & 0x0F
	d.BaroAcc = b[20] >> 4
	d.TimestampRaw = binary.LittleEndian.Uint16(b[21:])
	d.TSAcc = b[23] & 0x0F
	// Byte 23's high nibble and byte 24 are reserved filler: ignored.

	// Warnings for values outside the ranges F3411 defines; the raw
	// values are kept as sent.
	if d.Status > 4 || (d.Status == 4 && m.Version < Version2) {
		m.Warnings.add(WarnStatusReserved)
	}
	if dir := d.directionInt(); dir > 360 && dir != 361 {
		m.Warnings.add(WarnDirectionOutOfRange)
	}
	if d.verticalSpeedOutOfRange() {
		m.Warnings.add(WarnVerticalSpeedOutOfRange)
	}
	if !rawLatInRange(d.LatRaw) {
		m.Warnings.add(WarnLatitudeOutOfRange)
	}
	if !rawLonInRange(d.LonRaw) {
		m.Warnings.add(WarnLongitudeOutOfRange)
	}
	if d.TimestampRaw > 36000 && d.TimestampRaw != 0xFFFF {
		m.Warnings.add(WarnTimestampOutOfRange)
	}
	if d.accuracyReserved() {
		m.Warnings.add(WarnAccuracyReserved)
	}
}

// verticalSpeedOutOfRange reports a vertical speed beyond ±62 m/s that is
// not the "unknown" code 126.
func (d *Location) verticalSpeedOutOfRange() bool {
	return (d.SpeedVRaw > 124 || d.SpeedVRaw < -124) && d.SpeedVRaw != 126
}

// accuracyReserved reports an accuracy code that F3411 reserves.
func (d *Location) accuracyReserved() bool {
	return d.HorizAcc > 12 || d.VertAcc > 6 || d.BaroAcc > 6 || d.SpeedAcc > 4
}

func decodeAuth(b []byte, m *Message) error {
	d := &m.Auth
	d.AuthType = b[1] >> 4
	d.Page = b[1] & 0x0F
	if d.Page == 0 {
		if b[2] > 15 {
			// Only 16 pages (index 0..15) are addressable by the 4-bit page field.
			return errAt(2, "authentication last page index %d exceeds 15", b[2])
		}
		d.LastPageIndex = b[2]
		d.Length = b[3]
		d.Timestamp = binary.LittleEndian.Uint32(b[4:])
		d.DataLen = 17
		copy(d.Data[:], b[8:25])
		// F3411-22a lets extra pages carry FEC, never fewer pages than
		// the length needs.
		if int(d.Length) > authCapacity(d.LastPageIndex) {
			m.Warnings.add(WarnAuthLengthExceedsPages)
		}
	} else {
		d.LastPageIndex, d.Length, d.Timestamp = 0, 0, 0
		d.DataLen = 23
		copy(d.Data[:], b[2:25])
	}
	if d.AuthType >= 6 && d.AuthType <= 9 {
		m.Warnings.add(WarnAuthTypeReserved)
	}
	return nil
}

// authCapacity is how many bytes of authentication data pages
// 0..lastPage hold: 17 on page 0 and 23 on each further page.
func authCapacity(lastPage uint8) int { return 17 + 23*int(lastPage) }

func decodeSelfID(b []byte, m *Message) {
	d := &m.SelfID
	d.DescType = b[1]
	copy(d.Desc[:], b[2:25])
	// 0 text; 1 emergency and 2 extended status came with F3411-22a;
	// 201..255 private use; the rest reserved.
	if (d.DescType > 2 && d.DescType < 201) || (d.DescType > 0 && d.DescType <= 2 && m.Version < Version2) {
		m.Warnings.add(WarnDescTypeReserved)
	}
	if !printable(d.Desc[:]) {
		m.Warnings.add(WarnDescNotPrintable)
	}
}

func decodeSystem(b []byte, m *Message) {
	d := &m.System
	d.OperatorLocationType = b[1] & 0x03
	d.ClassificationType = (b[1] >> 2) & 0x07
	if b[1]&0xE0 != 0 {
		m.Warnings.add(WarnReservedBitsSet)
	}
	d.OpLatRaw = int32(binary.LittleEndian.Uint32(b[2:]))
	d.OpLonRaw = int32(binary.LittleEndian.Uint32(b[6:]))
	d.AreaCount = binary.LittleEndian.Uint16(b[10:])
	d.AreaRadiusRaw = b[12]
	d.AreaCeilingRaw = binary.LittleEndian.Uint16(b[13:])
	d.AreaFloorRaw = binary.LittleEndian.Uint16(b[15:])
	d.CategoryEU = b[17] >> 4
	d.ClassEU = b[17] & 0x0F
	d.OpAltGeoRaw = binary.LittleEndian.Uint16(b[18:])
	// The timestamp (bytes 20..23) arrived with F3411-22a; earlier versions
	// send reserved zeros there, which must not read as 2019-01-01.
	d.HasTimestamp = m.Version >= Version2
	if d.HasTimestamp {
		d.Timestamp = binary.LittleEndian.Uint32(b[20:])
	} else {
		d.Timestamp = 0
	}

	if d.OperatorLocationType == 3 {
		m.Warnings.add(WarnOperatorLocationTypeReserved)
	}
	if d.ClassificationType > 1 {
		m.Warnings.add(WarnClassificationTypeReserved)
	}
	if d.CategoryEU > 3 {
		m.Warnings.add(WarnCategoryEUReserved)
	}
	if d.ClassEU > 7 {
		m.Warnings.add(WarnClassEUReserved)
	}
	if !rawLatInRange(d.OpLatRaw) {
		m.Warnings.add(WarnOperatorLatitudeOutOfRange)
	}
	if !rawLonInRange(d.OpLonRaw) {
		m.Warnings.add(WarnOperatorLongitudeOutOfRange)
	}
	if d.AreaCeilingRaw != 0 && d.AreaFloorRaw != 0 && d.AreaFloorRaw > d.AreaCeilingRaw {
		m.Warnings.add(WarnAreaFloorAboveCeiling)
	}
}

func decodeOperatorID(b []byte, m *Message) {
	d := &m.OperatorID
	d.OperatorIDType = b[1]
	copy(d.ID[:], b[2:22])
	if d.OperatorIDType > 0 && d.OperatorIDType < 201 {
		m.Warnings.add(WarnOperatorIDTypeReserved)
	}
	if !printable(d.ID[:]) {
		m.Warnings.add(WarnOperatorIDNotPrintable)
	}
}

// printable reports whether the NUL-terminated prefix of b is printable ASCII.
func printable(b []byte) bool {
	for _, c := range b {
		if c == 0 {
			return true
		}
		if c < 0x20 || c > 0x7E {
			return false
		}
	}
	return true
}

// cstring returns the NUL-terminated prefix of b.
func cstring(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}
