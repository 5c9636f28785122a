package remoteid

import "math/bits"

// Warning is one plausibility finding: the bytes decoded, but what they claim
// is reserved, out of range or inconsistent. Warnings are the spoofing and
// malfunction indicators operators ask for; they never stop decoding.
type Warning uint8

// The warnings a message, a pack or a carrier can carry. The numeric values
// are bit positions in [Warnings] and are not stable across releases; the
// [Warning.String] codes are.
const (
	// WarnLegacyVersion: protocol version 0 (F3411-19) or 1 (F3411-20);
	// F3411-22a (version 2) is the current means of compliance, so an older
	// version means an old or non-compliant transmitter.
	WarnLegacyVersion Warning = iota
	WarnIDTypeReserved
	WarnUASIDEmpty
	WarnUASIDNotPrintable
	WarnStatusReserved
	WarnReservedBitsSet
	WarnDirectionOutOfRange
	WarnVerticalSpeedOutOfRange
	WarnLatitudeOutOfRange
	WarnLongitudeOutOfRange
	WarnTimestampOutOfRange
	WarnAccuracyReserved
	WarnAuthTypeReserved
	WarnAuthLengthExceedsPages
	WarnDescTypeReserved
	WarnDescNotPrintable
	WarnOperatorLocationTypeReserved
	WarnClassificationTypeReserved
	WarnCategoryEUReserved
	WarnClassEUReserved
	WarnOperatorLatitudeOutOfRange
	WarnOperatorLongitudeOutOfRange
	WarnAreaFloorAboveCeiling
	WarnOperatorIDTypeReserved
	WarnOperatorIDNotPrintable
	// Pack-level findings.
	WarnDuplicateMessage
	WarnPackVersionMismatch
	WarnOperatorFarFromAircraft
	warnCount
)

var warningCodes = [warnCount]string{
	WarnLegacyVersion:                "legacy_protocol_version",
	WarnIDTypeReserved:               "id_type_reserved",
	WarnUASIDEmpty:                   "uas_id_empty",
	WarnUASIDNotPrintable:            "uas_id_not_printable",
	WarnStatusReserved:               "status_reserved",
	WarnReservedBitsSet:              "reserved_bits_set",
	WarnDirectionOutOfRange:          "direction_out_of_range",
	WarnVerticalSpeedOutOfRange:      "vertical_speed_out_of_range",
	WarnLatitudeOutOfRange:           "latitude_out_of_range",
	WarnLongitudeOutOfRange:          "longitude_out_of_range",
	WarnTimestampOutOfRange:          "timestamp_out_of_range",
	WarnAccuracyReserved:             "accuracy_reserved",
	WarnAuthTypeReserved:             "auth_type_reserved",
	WarnAuthLengthExceedsPages:       "auth_length_exceeds_pages",
	WarnDescTypeReserved:             "desc_type_reserved",
	WarnDescNotPrintable:             "desc_not_printable",
	WarnOperatorLocationTypeReserved: "operator_location_type_reserved",
	WarnClassificationTypeReserved:   "classification_type_reserved",
	WarnCategoryEUReserved:           "category_eu_reserved",
	WarnClassEUReserved:              "class_eu_reserved",
	WarnOperatorLatitudeOutOfRange:   "operator_latitude_out_of_range",
	WarnOperatorLongitudeOutOfRange:  "operator_longitude_out_of_range",
	WarnAreaFloorAboveCeiling:        "area_floor_above_ceiling",
	WarnOperatorIDTypeReserved:       "operator_id_type_reserved",
	WarnOperatorIDNotPrintable:       "operator_id_not_printable",
	WarnDuplicateMessage:             "duplicate_message",
	WarnPackVersionMismatch:          "pack_version_mismatch",
	WarnOperatorFarFromAircraft:      "operator_far_from_aircraft",
}

// String returns the stable snake_case code of the warning.
func (w Warning) String() string {
	if w < warnCount {
		return warningCodes[w]
	}
	return "unknown_warning"
}

// Warnings is a set of [Warning]s, one bit each, so that recording them costs
// no allocation on the hot path.
type Warnings uint64

// Has reports whether w is in the set.
func (s Warnings) Has(w Warning) bool { return s&(1<<w) != 0 }

// Len returns the number of warnings in the set.
func (s Warnings) Len() int { return bits.OnesCount64(uint64(s)) }

// List returns the warnings in the set in ascending order (allocates).
func (s Warnings) List() []Warning {
	out := make([]Warning, 0, s.Len())
	for w := Warning(0); w < warnCount; w++ {
		if s.Has(w) {
			out = append(out, w)
		}
	}
	return out
}

func (s *Warnings) add(w Warning) { *s |= 1 << w }
