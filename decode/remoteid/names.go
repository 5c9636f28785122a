package remoteid

// Readable names of the enumerations, for the "*_name" JSON fields. A value
// outside a table is "reserved" (or "private_use" where F3411 sets a range
// aside for it).

var idTypeNames = [...]string{"none", "serial_number", "caa_registration_id", "utm_assigned_uuid", "specific_session_id"}

var uaTypeNames = [16]string{
	"none", "aeroplane", "helicopter_or_multirotor", "gyroplane", "hybrid_lift",
	"ornithopter", "glider", "kite", "free_balloon", "captive_balloon", "airship",
	"free_fall_parachute", "rocket", "tethered_powered_aircraft", "ground_obstacle", "other",
}

var statusNames = [...]string{"undeclared", "ground", "airborne", "emergency", "remote_id_system_failure"}

var heightTypeNames = [2]string{"above_takeoff", "above_ground_level"}

var authTypeNames = [...]string{
	"none", "uas_id_signature", "operator_id_signature", "message_set_signature",
	"network_remote_id", "specific_authentication",
}

var descTypeNames = [...]string{"text", "emergency", "extended_status"}

var opLocTypeNames = [...]string{"takeoff", "live_gnss", "fixed"}

var classificationNames = [...]string{"undeclared", "eu"}

var categoryEUNames = [...]string{"undeclared", "open", "specific", "certified"}

var classEUNames = [...]string{"undeclared", "c0", "c1", "c2", "c3", "c4", "c5", "c6"}

func name(t []string, v uint8) string {
	if int(v) < len(t) {
		return t[v]
	}
	return "reserved"
}

// IDTypeName names a Basic ID id_type.
func IDTypeName(v uint8) string { return name(idTypeNames[:], v) }

// UATypeName names a Basic ID ua_type.
func UATypeName(v uint8) string { return name(uaTypeNames[:], v) }

// StatusName names a Location status for a protocol version (status 4 came
// with version 2).
func StatusName(v, version uint8) string {
	if v == 4 && version < Version2 {
		return "reserved"
	}
	return name(statusNames[:], v)
}

// HeightTypeName names a Location height_type.
func HeightTypeName(v uint8) string { return name(heightTypeNames[:], v) }

// AuthTypeName names an Authentication auth_type (10..15 are private use).
func AuthTypeName(v uint8) string {
	if v >= 10 {
		return "private_use"
	}
	return name(authTypeNames[:], v)
}

// DescTypeName names a Self ID desc_type for a protocol version.
func DescTypeName(v, version uint8) string {
	if v >= 201 {
		return "private_use"
	}
	if v > 0 && version < Version2 {
		return "reserved"
	}
	return name(descTypeNames[:], v)
}

// OperatorLocationTypeName names a System operator_location_type.
func OperatorLocationTypeName(v uint8) string { return name(opLocTypeNames[:], v) }

// ClassificationTypeName names a System classification_type.
func ClassificationTypeName(v uint8) string { return name(classificationNames[:], v) }

// CategoryEUName names a System category_eu.
func CategoryEUName(v uint8) string { return name(categoryEUNames[:], v) }

// ClassEUName names a System class_eu.
func ClassEUName(v uint8) string { return name(classEUNames[:], v) }

// OperatorIDTypeName names an Operator ID operator_id_type.
func OperatorIDTypeName(v uint8) string {
	switch {
	case v == 0:
		return "operator_id"
	case v >= 201:
		return "private_use"
	}
	return "reserved"
}
