package remoteid

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// The presentation layer: JSON-ready views of decoded messages, with units,
// "*_name" fields and null for "unknown" sentinels (the raw value is kept in
// "raw" or in the enum number). Field names and units follow the conventions
// block of the shared reference vectors. Nothing here is on the hot path.

// WarningView is one warning in JSON.
type WarningView struct {
	Code string `json:"code"`
	// Message is the index in "messages" of the message the warning is about;
	// absent for pack-level warnings.
	Message *int   `json:"message,omitempty"`
	Detail  string `json:"detail"`
}

// FrameView is the JSON answer for a decoded message, pack or carrier frame.
type FrameView struct {
	ProtocolVersion int    `json:"protocol_version"`
	Transport       string `json:"transport,omitempty"`
	Transmitter     string `json:"transmitter,omitempty"`
	// TransmitterRandom is set for BLE random addresses.
	TransmitterRandom bool          `json:"transmitter_random,omitempty"`
	MessageCounter    *uint8        `json:"message_counter,omitempty"`
	MessagePack       bool          `json:"message_pack"`
	Messages          []any         `json:"messages"`
	Warnings          []WarningView `json:"warnings"`
}

// NewFrameView shapes a decoded frame for JSON.
func NewFrameView(f *Frame) FrameView {
	v := NewPackView(&f.Pack)
	v.MessagePack = !f.Single
	v.Transport = f.Transport.String()
	if f.HasTransmitter {
		v.Transmitter = FormatMAC(f.Transmitter)
		v.TransmitterRandom = f.TransmitterRandom
	}
	if f.HasCounter {
		c := f.Counter
		v.MessageCounter = &c
	}
	return v
}

// NewPackView shapes a decoded pack for JSON.
func NewPackView(p *Pack) FrameView {
	v := FrameView{
		ProtocolVersion: int(p.Version),
		MessagePack:     true,
		Messages:        make([]any, 0, p.Count),
		Warnings:        []WarningView{},
	}
	for i := 0; i < p.Count; i++ {
		m := &p.Messages[i]
		v.Messages = append(v.Messages, NewMessageView(m))
		for _, w := range m.Warnings.List() {
			if w == WarnLegacyVersion && p.Warnings.Has(WarnLegacyVersion) {
				continue // said once for the pack
			}
			idx := i
			v.Warnings = append(v.Warnings, WarningView{Code: w.String(), Message: &idx, Detail: messageWarningDetail(w, m)})
		}
	}
	for _, w := range p.Warnings.List() {
		v.Warnings = append(v.Warnings, WarningView{Code: w.String(), Detail: packWarningDetail(w, p)})
	}
	return v
}

// FormatMAC prints an address as aa:bb:cc:dd:ee:ff.
func FormatMAC(a [6]byte) string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", a[0], a[1], a[2], a[3], a[4], a[5])
}

func opt(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}

func optStr(s string, ok bool) *string {
	if !ok {
		return nil
	}
	return &s
}

// BasicIDView is a Basic ID message in JSON.
type BasicIDView struct {
	Type            string  `json:"type"`
	ProtocolVersion int     `json:"protocol_version"`
	Hex             string  `json:"hex"`
	IDType          uint8   `json:"id_type"`
	IDTypeName      string  `json:"id_type_name"`
	UAType          uint8   `json:"ua_type"`
	UATypeName      string  `json:"ua_type_name"`
	UASID           *string `json:"uas_id"`
	UASIDHex        string  `json:"uas_id_hex"`
}

// LocationRaw holds the encoded integers of a Location message.
type LocationRaw struct {
	Direction uint8  `json:"direction"`
	EWFlag    uint8  `json:"ew_flag"`
	SpeedH    uint8  `json:"speed_h"`
	SpeedMult uint8  `json:"speed_mult"`
	SpeedV    int8   `json:"speed_v"`
	Lat       int32  `json:"lat"`
	Lon       int32  `json:"lon"`
	AltBaro   uint16 `json:"alt_baro"`
	AltGeo    uint16 `json:"alt_geo"`
	Height    uint16 `json:"height"`
	Timestamp uint16 `json:"timestamp"`
}

// LocationView is a Location/Vector message in JSON.
type LocationView struct {
	Type               string      `json:"type"`
	ProtocolVersion    int         `json:"protocol_version"`
	Hex                string      `json:"hex"`
	Status             uint8       `json:"status"`
	StatusName         string      `json:"status_name"`
	DirectionDeg       *float64    `json:"direction_deg"`
	SpeedHorizontalMps *float64    `json:"speed_horizontal_mps"`
	SpeedVerticalMps   *float64    `json:"speed_vertical_mps"`
	LatitudeDeg        *float64    `json:"latitude_deg"`
	LongitudeDeg       *float64    `json:"longitude_deg"`
	AltitudeBaroM      *float64    `json:"altitude_baro_m"`
	AltitudeGeoM       *float64    `json:"altitude_geo_m"`
	HeightM            *float64    `json:"height_m"`
	HeightType         uint8       `json:"height_type"`
	HeightTypeName     string      `json:"height_type_name"`
	HorizAccuracy      uint8       `json:"horiz_accuracy"`
	HorizAccuracyM     *float64    `json:"horiz_accuracy_m"`
	VertAccuracy       uint8       `json:"vert_accuracy"`
	VertAccuracyM      *float64    `json:"vert_accuracy_m"`
	BaroAccuracy       uint8       `json:"baro_accuracy"`
	BaroAccuracyM      *float64    `json:"baro_accuracy_m"`
	SpeedAccuracy      uint8       `json:"speed_accuracy"`
	SpeedAccuracyMps   *float64    `json:"speed_accuracy_mps"`
	TSAccuracy         uint8       `json:"ts_accuracy"`
	TSAccuracyS        *float64    `json:"ts_accuracy_s"`
	TimestampS         *float64    `json:"timestamp_s"`
	Raw                LocationRaw `json:"raw"`
}

// AuthView is an Authentication page in JSON. Page-0-only fields are null on
// other pages.
type AuthView struct {
	Type            string  `json:"type"`
	ProtocolVersion int     `json:"protocol_version"`
	Hex             string  `json:"hex"`
	DataPage        uint8   `json:"data_page"`
	AuthType        uint8   `json:"auth_type"`
	AuthTypeName    string  `json:"auth_type_name"`
	LastPageIndex   *uint8  `json:"last_page_index"`
	Length          *uint8  `json:"length"`
	Timestamp       *uint32 `json:"timestamp"`
	TimestampUnix   *int64  `json:"timestamp_unix"`
	AuthDataHex     string  `json:"auth_data_hex"`
}

// SelfIDView is a Self ID message in JSON.
type SelfIDView struct {
	Type            string  `json:"type"`
	ProtocolVersion int     `json:"protocol_version"`
	Hex             string  `json:"hex"`
	DescType        uint8   `json:"desc_type"`
	DescTypeName    string  `json:"desc_type_name"`
	Desc            *string `json:"desc"`
}

// SystemRaw holds the encoded integers of a System message.
type SystemRaw struct {
	OperatorLat      int32  `json:"operator_lat"`
	OperatorLon      int32  `json:"operator_lon"`
	AreaRadius       uint8  `json:"area_radius"`
	AreaCeiling      uint16 `json:"area_ceiling"`
	AreaFloor        uint16 `json:"area_floor"`
	OperatorAltitude uint16 `json:"operator_altitude"`
}

// SystemView is a System message in JSON. The timestamp is null for protocol
// versions before 2, which lack it.
type SystemView struct {
	Type                     string    `json:"type"`
	ProtocolVersion          int       `json:"protocol_version"`
	Hex                      string    `json:"hex"`
	OperatorLocationType     uint8     `json:"operator_location_type"`
	OperatorLocationTypeName string    `json:"operator_location_type_name"`
	ClassificationType       uint8     `json:"classification_type"`
	ClassificationTypeName   string    `json:"classification_type_name"`
	OperatorLatitudeDeg      *float64  `json:"operator_latitude_deg"`
	OperatorLongitudeDeg     *float64  `json:"operator_longitude_deg"`
	AreaCount                uint16    `json:"area_count"`
	AreaRadiusM              float64   `json:"area_radius_m"`
	AreaCeilingM             *float64  `json:"area_ceiling_m"`
	AreaFloorM               *float64  `json:"area_floor_m"`
	CategoryEU               uint8     `json:"category_eu"`
	CategoryEUName           string    `json:"category_eu_name"`
	ClassEU                  uint8     `json:"class_eu"`
	ClassEUName              string    `json:"class_eu_name"`
	OperatorAltitudeGeoM     *float64  `json:"operator_altitude_geo_m"`
	Timestamp                *uint32   `json:"timestamp"`
	TimestampUnix            *int64    `json:"timestamp_unix"`
	Raw                      SystemRaw `json:"raw"`
}

// OperatorIDView is an Operator ID message in JSON.
type OperatorIDView struct {
	Type               string  `json:"type"`
	ProtocolVersion    int     `json:"protocol_version"`
	Hex                string  `json:"hex"`
	OperatorIDType     uint8   `json:"operator_id_type"`
	OperatorIDTypeName string  `json:"operator_id_type_name"`
	OperatorID         *string `json:"operator_id"`
}

// NewMessageView returns the JSON view of m: one of *BasicIDView,
// *LocationView, *AuthView, *SelfIDView, *SystemView, *OperatorIDView.
func NewMessageView(m *Message) any {
	t, pv, hx := m.Type.String(), int(m.Version), hex.EncodeToString(m.Bytes[:])
	switch m.Type {
	case TypeBasicID:
		d := &m.BasicID
		id, ok := d.UASID()
		return &BasicIDView{
			Type: t, ProtocolVersion: pv, Hex: hx,
			IDType: d.IDType, IDTypeName: IDTypeName(d.IDType),
			UAType: d.UAType, UATypeName: UATypeName(d.UAType),
			UASID: optStr(id, ok), UASIDHex: hex.EncodeToString(d.ID[:]),
		}
	case TypeLocation:
		return newLocationView(m, t, pv, hx)
	case TypeAuth:
		return newAuthView(m, t, pv, hx)
	case TypeSelfID:
		d := &m.SelfID
		s, ok := d.Description()
		return &SelfIDView{
			Type: t, ProtocolVersion: pv, Hex: hx,
			DescType: d.DescType, DescTypeName: DescTypeName(d.DescType, m.Version), Desc: optStr(s, ok),
		}
	case TypeSystem:
		return newSystemView(m, t, pv, hx)
	case TypeOperatorID:
		d := &m.OperatorID
		s, ok := d.Text()
		return &OperatorIDView{
			Type: t, ProtocolVersion: pv, Hex: hx,
			OperatorIDType: d.OperatorIDType, OperatorIDTypeName: OperatorIDTypeName(d.OperatorIDType),
			OperatorID: optStr(s, ok),
		}
	}
	return nil
}

func newLocationView(m *Message, t string, pv int, hx string) *LocationView {
	d := &m.Location
	v := &LocationView{
		Type: t, ProtocolVersion: pv, Hex: hx,
		Status: d.Status, StatusName: StatusName(d.Status, m.Version),
		HeightType: d.HeightType, HeightTypeName: HeightTypeName(d.HeightType),
		HorizAccuracy: d.HorizAcc, VertAccuracy: d.VertAcc, BaroAccuracy: d.BaroAcc,
		SpeedAccuracy: d.SpeedAcc, TSAccuracy: d.TSAcc,
		Raw: LocationRaw{
			Direction: d.DirectionRaw, EWFlag: d.EWFlag, SpeedH: d.SpeedHRaw, SpeedMult: d.SpeedMult,
			SpeedV: d.SpeedVRaw, Lat: d.LatRaw, Lon: d.LonRaw, AltBaro: d.AltBaroRaw,
			AltGeo: d.AltGeoRaw, Height: d.HeightRaw, Timestamp: d.TimestampRaw,
		},
	}
	v.DirectionDeg = opt(d.Direction())
	v.SpeedHorizontalMps = opt(d.SpeedHorizontal())
	v.SpeedVerticalMps = opt(d.SpeedVertical())
	if lat, lon, ok := d.Position(); ok {
		v.LatitudeDeg, v.LongitudeDeg = &lat, &lon
	}
	v.AltitudeBaroM = opt(d.AltitudeBaro())
	v.AltitudeGeoM = opt(d.AltitudeGeo())
	v.HeightM = opt(d.Height())
	v.HorizAccuracyM = opt(d.HorizAccuracyM())
	v.VertAccuracyM = opt(d.VertAccuracyM())
	v.BaroAccuracyM = opt(d.BaroAccuracyM())
	v.SpeedAccuracyMps = opt(d.SpeedAccuracyMps())
	v.TSAccuracyS = opt(d.TSAccuracyS())
	v.TimestampS = opt(d.Timestamp())
	return v
}

func newAuthView(m *Message, t string, pv int, hx string) *AuthView {
	d := &m.Auth
	v := &AuthView{
		Type: t, ProtocolVersion: pv, Hex: hx,
		DataPage: d.Page, AuthType: d.AuthType, AuthTypeName: AuthTypeName(d.AuthType),
		AuthDataHex: hex.EncodeToString(d.Data[:d.DataLen]),
	}
	if d.Page == 0 {
		lpi, l, ts := d.LastPageIndex, d.Length, d.Timestamp
		tu, _ := d.TimestampUnix()
		v.LastPageIndex, v.Length, v.Timestamp, v.TimestampUnix = &lpi, &l, &ts, &tu
	}
	return v
}

func newSystemView(m *Message, t string, pv int, hx string) *SystemView {
	d := &m.System
	v := &SystemView{
		Type: t, ProtocolVersion: pv, Hex: hx,
		OperatorLocationType: d.OperatorLocationType, OperatorLocationTypeName: OperatorLocationTypeName(d.OperatorLocationType),
		ClassificationType: d.ClassificationType, ClassificationTypeName: ClassificationTypeName(d.ClassificationType),
		AreaCount: d.AreaCount, AreaRadiusM: d.AreaRadius(),
		CategoryEU: d.CategoryEU, CategoryEUName: CategoryEUName(d.CategoryEU),
		ClassEU: d.ClassEU, ClassEUName: ClassEUName(d.ClassEU),
		Raw: SystemRaw{
			OperatorLat: d.OpLatRaw, OperatorLon: d.OpLonRaw, AreaRadius: d.AreaRadiusRaw,
			AreaCeiling: d.AreaCeilingRaw, AreaFloor: d.AreaFloorRaw, OperatorAltitude: d.OpAltGeoRaw,
		},
	}
	if lat, lon, ok := d.OperatorPosition(); ok {
		v.OperatorLatitudeDeg, v.OperatorLongitudeDeg = &lat, &lon
	}
	v.AreaCeilingM = opt(d.AreaCeiling())
	v.AreaFloorM = opt(d.AreaFloor())
	v.OperatorAltitudeGeoM = opt(d.OperatorAltitudeGeo())
	if tu, ok := d.TimestampUnix(); ok {
		ts := d.Timestamp
		v.Timestamp, v.TimestampUnix = &ts, &tu
	}
	return v
}

// MessageWarningDetail explains warning w found in message m, with the values.
func messageWarningDetail(w Warning, m *Message) string {
	for _, explain := range [...]func(Warning, *Message) (string, bool){
		idWarningDetail, locationWarningDetail, authWarningDetail, systemWarningDetail,
	} {
		if d, ok := explain(w, m); ok {
			return d
		}
	}
	return w.String()
}

// idWarningDetail explains the warnings of the header, Basic ID and
// Operator ID messages.
func idWarningDetail(w Warning, m *Message) (string, bool) {
	switch w {
	case WarnLegacyVersion:
		return legacyVersionDetail(m.Version), true
	case WarnIDTypeReserved:
		return fmt.Sprintf("id_type %d is reserved (0 to 4 are defined)", m.BasicID.IDType), true
	case WarnUASIDEmpty:
		return "the UAS ID is empty", true
	case WarnUASIDNotPrintable:
		return fmt.Sprintf("the UAS ID of id_type %d is not printable ASCII", m.BasicID.IDType), true
	case WarnReservedBitsSet:
		return fmt.Sprintf("reserved bits are set in byte 1 (0x%02x)", m.Bytes[1]), true
	case WarnOperatorIDTypeReserved:
		return fmt.Sprintf("operator_id_type %d is reserved", m.OperatorID.OperatorIDType), true
	case WarnOperatorIDNotPrintable:
		return "the operator ID is not printable ASCII", true
	}
	return "", false
}

// locationWarningDetail explains the warnings of the Location message.
func locationWarningDetail(w Warning, m *Message) (string, bool) {
	l := &m.Location
	switch w {
	case WarnStatusReserved:
		return fmt.Sprintf("status %d is reserved for protocol version %d", l.Status, m.Version), true
	case WarnDirectionOutOfRange:
		return fmt.Sprintf("direction %d degrees is beyond 360 (361 means unknown)", l.directionInt()), true
	case WarnVerticalSpeedOutOfRange:
		return fmt.Sprintf("vertical speed %.1f m/s is beyond ±62 (63 means unknown)", float64(l.SpeedVRaw)*0.5), true
	case WarnLatitudeOutOfRange:
		return fmt.Sprintf("latitude %.7f is beyond ±90 degrees", float64(l.LatRaw)/1e7), true
	case WarnLongitudeOutOfRange:
		return fmt.Sprintf("longitude %.7f is beyond ±180 degrees", float64(l.LonRaw)/1e7), true
	case WarnTimestampOutOfRange:
		return fmt.Sprintf("timestamp %.1f s is beyond one hour after the full hour", float64(l.TimestampRaw)/10), true
	case WarnAccuracyReserved:
		return fmt.Sprintf("accuracy enums horizontal %d, vertical %d, baro %d, speed %d include a reserved value",
			l.HorizAcc, l.VertAcc, l.BaroAcc, l.SpeedAcc), true
	}
	return "", false
}

// authWarningDetail explains the warnings of the Authentication and Self
// ID messages.
func authWarningDetail(w Warning, m *Message) (string, bool) {
	switch w {
	case WarnAuthTypeReserved:
		return fmt.Sprintf("auth_type %d is reserved", m.Auth.AuthType), true
	case WarnAuthLengthExceedsPages:
		return fmt.Sprintf("authentication length %d exceeds the %d bytes that pages 0 to %d hold",
			m.Auth.Length, authCapacity(m.Auth.LastPageIndex), m.Auth.LastPageIndex), true
	case WarnDescTypeReserved:
		return fmt.Sprintf("desc_type %d is reserved for protocol version %d", m.SelfID.DescType, m.Version), true
	case WarnDescNotPrintable:
		return "the Self ID description is not printable ASCII", true
	}
	return "", false
}

// systemWarningDetail explains the warnings of the System message.
func systemWarningDetail(w Warning, m *Message) (string, bool) {
	s := &m.System
	switch w {
	case WarnOperatorLocationTypeReserved:
		return fmt.Sprintf("operator_location_type %d is reserved", s.OperatorLocationType), true
	case WarnClassificationTypeReserved:
		return fmt.Sprintf("classification_type %d is reserved", s.ClassificationType), true
	case WarnCategoryEUReserved:
		return fmt.Sprintf("category_eu %d is reserved", s.CategoryEU), true
	case WarnClassEUReserved:
		return fmt.Sprintf("class_eu %d is reserved", s.ClassEU), true
	case WarnOperatorLatitudeOutOfRange:
		return fmt.Sprintf("operator latitude %.7f is beyond ±90 degrees", float64(s.OpLatRaw)/1e7), true
	case WarnOperatorLongitudeOutOfRange:
		return fmt.Sprintf("operator longitude %.7f is beyond ±180 degrees", float64(s.OpLonRaw)/1e7), true
	case WarnAreaFloorAboveCeiling:
		f, _ := s.AreaFloor()
		c, _ := s.AreaCeiling()
		return fmt.Sprintf("area floor %.1f m is above the ceiling %.1f m", f, c), true
	}
	return "", false
}

func packWarningDetail(w Warning, p *Pack) string {
	switch w {
	case WarnLegacyVersion:
		return legacyVersionDetail(p.Version)
	case WarnDuplicateMessage:
		return "the pack repeats a message kind beyond F3411's limits (one Location, Self ID, System, Operator ID; two Basic ID; one of each Authentication page)"
	case WarnPackVersionMismatch:
		return fmt.Sprintf("a message's protocol version differs from the pack's (%d)", p.Version)
	case WarnOperatorFarFromAircraft:
		var d float64
		var loc *Location
		var sys *System
		for i := 0; i < p.Count; i++ {
			switch p.Messages[i].Type {
			case TypeLocation:
				loc = &p.Messages[i].Location
			case TypeSystem:
				sys = &p.Messages[i].System
			}
		}
		if loc != nil && sys != nil {
			a, b, _ := loc.Position()
			c, e, _ := sys.OperatorPosition()
			d = HaversineM(a, b, c, e)
		}
		return operatorFarDetail(d)
	}
	return w.String()
}

// legacyVersionDetail explains WarnLegacyVersion, said of a message or of a
// whole pack.
func legacyVersionDetail(v uint8) string {
	return fmt.Sprintf("protocol version %d predates ASTM F3411-22a (version 2), the current means of compliance", v)
}

// operatorFarDetail explains WarnOperatorFarFromAircraft for operator and
// aircraft d metres apart, whether found in one pack or across the frames
// of one transmitter (see uasState.observation).
func operatorFarDetail(d float64) string {
	return fmt.Sprintf("operator position is %.0f m from the aircraft (more than %d m)", d, MaxOperatorDistanceM)
}

// Result is the JSON answer of the decode endpoint and of
// `cuasd decode remoteid`: the carrier the bytes were read as, then the frame.
type Result struct {
	Carrier string `json:"carrier"`
	FrameView
}

// DecodeResult decodes b as carrier c (detected when CarrierAuto) and shapes
// the answer. The error is an *Error naming the byte offset; ResultError
// words it for people.
func DecodeResult(c Carrier, b []byte) (*Result, error) {
	if c == CarrierAuto {
		c = DetectCarrier(b)
	}
	var f Frame
	if err := DecodeCarrier(c, b, &f); err != nil {
		if e, ok := err.(*Error); ok {
			return nil, &Error{Offset: e.Offset, Reason: e.Reason + " (read as " + c.String() + ")", notRID: e.notRID}
		}
		return nil, err
	}
	return &Result{Carrier: c.String(), FrameView: NewFrameView(&f)}, nil
}

// ParseHex decodes hex text, tolerating surrounding space, a 0x prefix and
// space or colon separators between bytes.
func ParseHex(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	s = strings.NewReplacer(" ", "", ":", "", "\t", "", "\n", "", "\r", "").Replace(s)
	if s == "" {
		return nil, errors.New("no bytes")
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		var ie hex.InvalidByteError
		if errors.As(err, &ie) {
			return nil, fmt.Errorf("character %q is not a hex digit", rune(ie))
		}
		if errors.Is(err, hex.ErrLength) {
			return nil, fmt.Errorf("odd number of hex digits (%d)", len(s))
		}
		return nil, err
	}
	return b, nil
}
