package mavlink

//go:generate go run ./internal/gen -o zz_dialect.go

// FieldType is the wire type of a message field, as declared in the MAVLink
// XML definitions.
type FieldType uint8

// The MAVLink wire types. Char arrays are strings; every other type is a
// little-endian number.
const (
	TypeUint8 FieldType = iota + 1
	TypeInt8
	TypeUint16
	TypeInt16
	TypeUint32
	TypeInt32
	TypeUint64
	TypeInt64
	TypeFloat
	TypeDouble
	TypeChar
)

var fieldTypeNames = [...]string{
	TypeUint8: "uint8_t", TypeInt8: "int8_t", TypeUint16: "uint16_t", TypeInt16: "int16_t",
	TypeUint32: "uint32_t", TypeInt32: "int32_t", TypeUint64: "uint64_t", TypeInt64: "int64_t",
	TypeFloat: "float", TypeDouble: "double", TypeChar: "char",
}

var fieldTypeSizes = [...]uint8{
	TypeUint8: 1, TypeInt8: 1, TypeUint16: 2, TypeInt16: 2, TypeUint32: 4, TypeInt32: 4,
	TypeUint64: 8, TypeInt64: 8, TypeFloat: 4, TypeDouble: 8, TypeChar: 1,
}

// String returns the XML type name ("uint16_t", "float", "char", ...).
func (t FieldType) String() string {
	if int(t) < len(fieldTypeNames) && fieldTypeNames[t] != "" {
		return fieldTypeNames[t]
	}
	return "invalid"
}

// Size is the size in bytes of one element of the type.
func (t FieldType) Size() int {
	if int(t) < len(fieldTypeSizes) {
		return int(fieldTypeSizes[t])
	}
	return 0
}

// FieldDef describes one field of a message.
type FieldDef struct {
	// Name is the field name of the XML definition ("time_boot_ms").
	Name string
	// Type is the wire type of one element.
	Type FieldType
	// ArrayLen is the element count of an array field, 0 for a scalar.
	// A char field is always a string of ArrayLen bytes (1 for a single char).
	ArrayLen uint8
	// Offset is where the field starts in the payload, after MAVLink's
	// field reordering (largest types first, extensions last).
	Offset uint8
	// Extension reports a MAVLink 2 extension field: absent from CRC_EXTRA,
	// and zero when the sender's payload does not reach it.
	Extension bool
	// Enum names the enum the values belong to, or "" when none does.
	// Enum values are reported as numbers.
	Enum string
}

// Len returns the number of payload bytes the field occupies.
func (f *FieldDef) Len() int {
	n := f.Type.Size()
	if f.ArrayLen > 0 {
		n *= int(f.ArrayLen)
	}
	return n
}

// IsString reports a char field, decoded as a string up to the first NUL.
func (f *FieldDef) IsString() bool { return f.Type == TypeChar }

// IsArray reports an array of numbers (char arrays are strings, not arrays).
func (f *FieldDef) IsArray() bool { return f.ArrayLen > 0 && f.Type != TypeChar }

// MessageDef describes one message of the built-in dialect.
type MessageDef struct {
	ID   uint32
	Name string
	// Dialect is the XML file that defines the message: "minimal",
	// "standard", "common", "ardupilotmega", "uavionix", "icarous", ...
	Dialect string
	// CRCExtra is the seed byte mixed into the frame checksum; it changes
	// whenever the message's base fields change, so a sender with another
	// definition fails the CRC check.
	CRCExtra uint8
	// BaseLen is the payload length without extension fields (a MAVLink 1
	// sender's length); Len is the full length with extensions.
	BaseLen uint8
	Len     uint8
	// Fields are in the XML declaration order, which is also the order of
	// the decoded JSON object.
	Fields []FieldDef
}

// Field returns the definition of the named field, or nil.
func (d *MessageDef) Field(name string) *FieldDef {
	for i := range d.Fields {
		if d.Fields[i].Name == name {
			return &d.Fields[i]
		}
	}
	return nil
}

// Lookup returns the definition of message id in the built-in dialect
// (ardupilotmega, which includes common, standard and minimal), or nil when
// the dialect lacks it.
func Lookup(id uint32) *MessageDef {
	if id < uint32(len(lowIndex)) {
		if i := lowIndex[id]; i >= 0 {
			return &messageDefs[i]
		}
		return nil
	}
	lo, hi := 0, len(messageDefs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if messageDefs[m].ID < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(messageDefs) && messageDefs[lo].ID == id {
		return &messageDefs[lo]
	}
	return nil
}

// lowIndex maps the ids below 256, the MAVLink 1 id space and most of
// every stream's traffic, straight to their index in messageDefs (-1: not
// in the dialect); higher ids are found by binary search.
var lowIndex = func() (t [256]int16) {
	for i := range t {
		t[i] = -1
	}
	for i := range messageDefs {
		if id := messageDefs[i].ID; id < uint32(len(t)) {
			t[id] = int16(i)
		}
	}
	return t
}()

// LookupName returns the definition of the named message, or nil.
func LookupName(name string) *MessageDef {
	for i := range messageDefs {
		if messageDefs[i].Name == name {
			return &messageDefs[i]
		}
	}
	return nil
}

// Messages returns the definitions of every message of the built-in dialect,
// sorted by id. The slice is shared; do not modify it.
func Messages() []MessageDef { return messageDefs[:] }

// EnumName returns the name of value v of the named enum, when cuasd carries
// that enum's names (MAV_TYPE, MAV_AUTOPILOT, MAV_STATE, the ArduPilot
// flight modes, GPS_FIX_TYPE and the Remote ID enums), and "" otherwise.
func EnumName(enum string, v uint32) string { return enumNames[enum][v] }
