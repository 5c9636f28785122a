package droneclaim

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// MaxMessageBytes bounds one sensor message. The feeds send a few hundred
// bytes per drone; anything larger is a broken or hostile sender.
const MaxMessageBytes = 64 << 10

// Kind says what a sensor message is about.
type Kind uint8

// The kinds of sensor message. KindAuto asks Parse to tell them apart by
// content.
const (
	KindAuto     Kind = iota
	KindRemoteID      // ASTM F3411 Remote ID decoded by the sensor
	KindDJI           // DJI DroneID decoded by the sensor (AntSDR)
	KindStatus        // the sensor's own position and health
)

var kindNames = [...]string{"auto", "remoteid", "dji", "status"}

// String names the kind as ParseKind accepts it.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// ParseKind maps a kind name ("", "auto", "remoteid" or "rid", "dji",
// "status") to a Kind.
func ParseKind(s string) (Kind, bool) {
	switch strings.ToLower(s) {
	case "", "auto":
		return KindAuto, true
	case "remoteid", "rid":
		return KindRemoteID, true
	case "dji", "droneid":
		return KindDJI, true
	case "status":
		return KindStatus, true
	}
	return 0, false
}

// Claim is what a sensor says it heard from one drone. Has* flags say
// which optional values are present, so a zero is never taken for a
// measurement. Every field is an unauthenticated claim.
type Claim struct {
	// ID is the UAS id (Remote ID) or the drone serial (DJI). It is empty
	// when the message named only its transmitter (MAC): the caller must
	// associate it with an id heard before from that MAC, or refuse it.
	ID string
	// IDType is the F3411 Basic ID id_type (1 serial number, 2 CAA
	// registration, 3 UTM UUID, 4 session id).
	IDType uint8
	// UAType is the F3411 ua_type (2 helicopter or multirotor...).
	UAType uint8
	// MAC is the transmitter address the sensor heard the drone on.
	MAC string
	// RSSI is the sensor's received signal strength in dBm.
	HasRSSI bool
	RSSI    float64

	HasPosition bool
	Lat, Lon    float64
	// GeoAltM is the geodetic (WGS-84) altitude, BaroAltM the pressure
	// altitude, HeightM the height above take-off or ground (HeightAGL).
	HasGeoAlt, HasBaroAlt, HasHeight bool
	GeoAltM, BaroAltM, HeightM       float64
	HeightAGL                        bool
	HasSpeed, HasVSpeed, HasDir      bool
	SpeedMps, VSpeedMps, DirDeg      float64
	// Status is the F3411 operational status (2 airborne...).
	Status uint8
	// Timestamp is the Location timestamp in seconds after the hour.
	HasTimestamp bool
	Timestamp    float64

	HasOperator              bool
	OperatorLat, OperatorLon float64
	HasHome                  bool
	HomeLat, HomeLon         float64
	OperatorID               string
	SelfID                   string
	// FrequencyHz is the carrier frequency the sensor heard (DJI).
	HasFrequency bool
	FrequencyHz  float64

	// ProductType is DJI DroneID's product type number (issue 25), as a
	// feed that relays the number rather than its name sends it
	// ("product_type" in the Basic ID or a flat object); 0 is none. The
	// name the AntSDR sends instead (the Basic ID "description") is
	// SelfID when no Self-ID text came.
	ProductType uint16
}

// Status is what a sensor says about itself (the WarDragon status feed).
type Status struct {
	// Serial is the kit's serial number, its natural sensor id.
	Serial      string
	HasPosition bool
	Lat, Lon    float64
	HasAlt      bool
	AltM        float64
	GPSFix      bool
	HasCPU      bool
	CPUPercent  float64
	HasTemp     bool
	TempC       float64
}

// Message is one parsed sensor message: a drone claim, or the sensor's
// status when Kind is KindStatus.
type Message struct {
	Kind   Kind
	Claim  Claim
	Status Status
}

// Error is the error type of the package: why a message was refused.
type Error struct {
	// Reason is a short metrics label: "oversized", "empty",
	// "invalid_json", "shape", "type", "range", "no_identity".
	Reason string
	// Field names the offending field, when there is one.
	Field  string
	Detail string
}

func (e *Error) Error() string {
	s := "droneclaim: " + e.Reason
	if e.Field != "" {
		s += " (" + e.Field + ")"
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Reasons are every Reason an Error of this package carries, and the
// "invalid" of ReasonOf: the label values an input's reject counter is
// created with at 0 (issue 24).
var Reasons = []string{"empty", "invalid", "invalid_json", "no_identity", "oversized", "range", "shape", "type"}

// ReasonOf returns the metrics label of a Parse error ("invalid" for an
// error of another kind).
func ReasonOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return "invalid"
}

// Parse parses one sensor message. hint, when not KindAuto, says what the
// feed carries (the kind given on the command line) for when the content
// cannot tell: a Remote ID list is a DJI claim with hint KindDJI. With
// KindAuto a list holding a "Frequency Message" is DJI, an object with
// "gps_data" or "serial_number" is a status, anything else a Remote ID
// claim.
func Parse(b []byte, hint Kind) (Message, error) {
	var m Message
	if len(b) > MaxMessageBytes {
		return m, &Error{Reason: "oversized", Detail: "message larger than 64 KiB"}
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return m, &Error{Reason: "empty"}
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return m, &Error{Reason: "invalid_json", Detail: err.Error()}
	}
	switch doc := v.(type) {
	case []any:
		return parseList(doc, hint)
	case map[string]any:
		if hint == KindStatus || isStatus(doc) {
			m.Kind = KindStatus
			err := parseStatus(doc, &m.Status)
			return m, err
		}
		return parseObject(doc, hint)
	}
	return m, &Error{Reason: "shape", Detail: "want a JSON object or array"}
}

func isStatus(doc map[string]any) bool {
	_, gps := doc["gps_data"]
	_, serial := doc["serial_number"]
	return gps || serial
}

// parseList reads the DragonSync list shape: single-key objects, each a
// Remote ID message, plus MAC and RSSI at the top of an item.
func parseList(items []any, hint Kind) (Message, error) {
	m := Message{Kind: KindRemoteID}
	if hint == KindDJI {
		m.Kind = KindDJI
	}
	var p parser
	for _, it := range items {
		// DragonSync skips list items that are not objects (a string, a
		// null) and reads the rest; so does cuasd.
		obj, ok := it.(map[string]any)
		if !ok {
			continue
		}
		p.esp32(obj) // BLE scanners repeat AUX_ADV_IND and aext in every item
		p.item(obj)
		if _, ok := obj["Frequency Message"]; ok && hint == KindAuto {
			m.Kind = KindDJI
		}
	}
	err := p.finish(&m.Claim)
	return m, err
}

// parseObject reads one object: the ESP32 shape (message keys at top
// level) or the flat forwarder shape (mac, rssi, lat, lon, id...).
func parseObject(doc map[string]any, hint Kind) (Message, error) {
	m := Message{Kind: KindRemoteID}
	if hint == KindDJI {
		m.Kind = KindDJI
	}
	var p parser
	if _, ok := doc["Frequency Message"]; ok && hint == KindAuto {
		m.Kind = KindDJI
	}
	p.esp32(doc)
	p.item(doc)
	p.flat(doc)
	err := p.finish(&m.Claim)
	return m, err
}
