package decode

import "fmt"

// CategoryKind says what an observation's Category names. The category is
// a class the transmitter claims for itself, and each protocol has its own
// scheme; the kind keeps them apart, so that "A1" is only ever read as an
// ADS-B emitter category and "Helicopter (or Multirotor)" only as a Remote
// ID UA type (a MAVLink vehicle can send either: MAV_TYPE in HEARTBEAT, the
// UA type in OPEN_DRONE_ID_BASIC_ID).
type CategoryKind uint8

const (
	// CategoryNone: no category claimed.
	CategoryNone CategoryKind = iota
	// CategoryEmitter is an ADS-B emitter category, "A0".."D7" (DO-260B
	// §2.2.3.2.5.2).
	CategoryEmitter
	// CategoryUAType is an ASTM F3411 UA type name (Remote ID Basic ID).
	CategoryUAType
	// CategoryMAVType is a MAVLink MAV_TYPE enum name (HEARTBEAT).
	CategoryMAVType

	numCategoryKinds
)

var categoryKindNames = [numCategoryKinds]string{"", "adsb_emitter", "ua_type", "mav_type"}

// String is the kind's JSON name: "adsb_emitter", "ua_type", "mav_type"
// ("" for none).
func (k CategoryKind) String() string {
	if k < numCategoryKinds {
		return categoryKindNames[k]
	}
	return fmt.Sprintf("CategoryKind(%d)", uint8(k))
}

// Valid reports whether k is a kind this version knows (MarshalText
// refuses the others).
func (k CategoryKind) Valid() bool { return k < numCategoryKinds }

// MarshalText implements encoding.TextMarshaler.
func (k CategoryKind) MarshalText() ([]byte, error) {
	if k >= numCategoryKinds {
		return nil, fmt.Errorf("decode: unknown category kind %d", uint8(k))
	}
	return []byte(categoryKindNames[k]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *CategoryKind) UnmarshalText(b []byte) error {
	for i, n := range categoryKindNames {
		if n == string(b) {
			*k = CategoryKind(i)
			return nil
		}
	}
	return fmt.Errorf("decode: unknown category kind %q", b)
}
