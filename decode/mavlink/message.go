package mavlink

import (
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf8"
)

// Message is a decoded message: its definition and its payload,
// zero-extended (or cut) to the definition's full length the way MAVLink's
// C library does it, so that truncated MAVLink 2 payloads, short MAVLink 1
// payloads and absent extension fields all read as zero. A Message is a
// plain value (no pointers into the input) and can be reused.
type Message struct {
	Def *MessageDef
	buf [255]byte
}

// Decode fills m from frame f. It returns false, leaving m unchanged, when
// the frame's id is not in the dialect. It allocates nothing.
func (m *Message) Decode(f *Frame) bool {
	if f.Def == nil {
		return false
	}
	m.set(f.Def, f.Payload)
	return true
}

// DecodePayload fills m from a payload of message def.
func (m *Message) DecodePayload(def *MessageDef, payload []byte) {
	m.set(def, payload)
}

func (m *Message) set(def *MessageDef, payload []byte) {
	m.Def = def
	n := copy(m.buf[:def.Len], payload)
	clear(m.buf[n:def.Len])
}

// Value is one number read from a message field.
type Value struct {
	Type FieldType
	bits uint64 // raw little-endian bits, sign-extended for signed types
}

// Int returns the value as an int64 (floats are truncated).
func (v Value) Int() int64 {
	switch v.Type {
	case TypeFloat:
		return int64(math.Float32frombits(uint32(v.bits)))
	case TypeDouble:
		return int64(math.Float64frombits(v.bits))
	}
	return int64(v.bits)
}

// Uint returns the value as a uint64 (negative values wrap; floats are
// truncated).
func (v Value) Uint() uint64 {
	switch v.Type {
	case TypeFloat, TypeDouble:
		return uint64(v.Float())
	}
	return v.bits
}

// Float returns the value as a float64.
func (v Value) Float() float64 {
	switch v.Type {
	case TypeFloat:
		return float64(math.Float32frombits(uint32(v.bits)))
	case TypeDouble:
		return math.Float64frombits(v.bits)
	case TypeUint64:
		return float64(v.bits)
	}
	return float64(int64(v.bits))
}

// IsFloat reports a float or double.
func (v Value) IsFloat() bool { return v.Type == TypeFloat || v.Type == TypeDouble }

func readValue(t FieldType, b []byte) Value {
	var x uint64
	switch t {
	case TypeUint8, TypeChar:
		x = uint64(b[0])
	case TypeInt8:
		x = uint64(int64(int8(b[0])))
	case TypeUint16:
		x = uint64(binary.LittleEndian.Uint16(b))
	case TypeInt16:
		x = uint64(int64(int16(binary.LittleEndian.Uint16(b))))
	case TypeUint32, TypeFloat:
		x = uint64(binary.LittleEndian.Uint32(b))
	case TypeInt32:
		x = uint64(int64(int32(binary.LittleEndian.Uint32(b))))
	default:
		x = binary.LittleEndian.Uint64(b)
	}
	return Value{Type: t, bits: x}
}

// Elem returns element i of field fd (i is 0 for a scalar). fd must belong
// to m.Def.
func (m *Message) Elem(fd *FieldDef, i int) Value {
	sz := fd.Type.Size()
	o := int(fd.Offset) + i*sz
	return readValue(fd.Type, m.buf[o:o+sz])
}

// Get returns the scalar (or first element) of the named field; ok is
// false when the message has no such field.
func (m *Message) Get(name string) (v Value, ok bool) {
	fd := m.Def.Field(name)
	if fd == nil {
		return Value{}, false
	}
	return m.Elem(fd, 0), true
}

// Bytes returns the raw bytes of field fd within the zero-extended payload.
// The slice aliases m.
func (m *Message) Bytes(fd *FieldDef) []byte {
	return m.buf[fd.Offset : int(fd.Offset)+fd.Len()]
}

// Str returns a char field's text up to its first NUL (as bytes aliasing
// m; no allocation). It works the same on any other field's raw bytes.
func (m *Message) Str(fd *FieldDef) []byte {
	b := m.Bytes(fd)
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

// AppendJSON appends the message's fields as a JSON object, in declaration
// order: numbers for every numeric type (enums included), arrays for
// arrays, strings (up to the first NUL) for char arrays. Non-finite floats,
// which MAVLink uses for "unknown", are written as null since JSON has no
// NaN. It allocates only if dst must grow.
func (m *Message) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	for i := range m.Def.Fields {
		fd := &m.Def.Fields[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, fd.Name)
		dst = append(dst, ':')
		switch {
		case fd.IsString():
			dst = appendJSONBytes(dst, m.Str(fd))
		case fd.IsArray():
			dst = append(dst, '[')
			for j := 0; j < int(fd.ArrayLen); j++ {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = appendValue(dst, m.Elem(fd, j))
			}
			dst = append(dst, ']')
		default:
			dst = appendValue(dst, m.Elem(fd, 0))
		}
	}
	return append(dst, '}')
}

func appendValue(dst []byte, v Value) []byte {
	switch v.Type {
	case TypeFloat:
		f := float64(math.Float32frombits(uint32(v.bits)))
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return append(dst, "null"...)
		}
		return strconv.AppendFloat(dst, f, 'g', -1, 32)
	case TypeDouble:
		f := math.Float64frombits(v.bits)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return append(dst, "null"...)
		}
		return strconv.AppendFloat(dst, f, 'g', -1, 64)
	case TypeUint64, TypeUint32, TypeUint16, TypeUint8, TypeChar:
		return strconv.AppendUint(dst, v.bits, 10)
	}
	return strconv.AppendInt(dst, int64(v.bits), 10)
}

const hexDigits = "0123456789abcdef"

func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			dst = appendJSONASCII(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// appendJSONBytes appends b as a JSON string; invalid UTF-8 becomes U+FFFD,
// as encoding/json does it.
func appendJSONBytes(dst []byte, b []byte) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			dst = appendJSONASCII(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, b[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

func appendJSONASCII(dst []byte, c byte) []byte {
	switch {
	case c == '"' || c == '\\':
		return append(dst, '\\', c)
	case c == '\n':
		return append(dst, '\\', 'n')
	case c == '\r':
		return append(dst, '\\', 'r')
	case c == '\t':
		return append(dst, '\\', 't')
	case c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f:
		return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
	}
	return append(dst, c)
}
