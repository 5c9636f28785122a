package droneclaim

import "github.com/cuasd/cuasd/decode/remoteid"

// AppendPack appends c as an ASTM F3411 (version 2) message pack to dst:
// a Basic ID, a Location when c has a position, a System when it has an
// operator position, an Operator ID and a Self ID when it has them. The
// pack is what cuasd's Remote ID decoder reads, so a drone relayed by a
// sensor becomes the same observation, and the same track rid:<id>, as the
// drone heard in a capture. Values are quantised as F3411 quantises them;
// the home position and the frequency have no place in F3411 and are not
// carried. Text longer than its field is cut at the field's size.
func (c *Claim) AppendPack(dst []byte) ([]byte, error) {
	if c.ID == "" {
		return dst, &Error{Reason: "no_identity", Detail: "a claim without a drone id has no Basic ID"}
	}
	var msgs [5][remoteid.MessageSize]byte
	n := 0
	idType := c.IDType
	if idType == 0 {
		idType = 1 // the feeds name drones by serial unless they say otherwise
	}
	if err := remoteid.EncodeBasicID(&msgs[n], remoteid.Version2,
		&remoteid.BasicIDData{IDType: idType, UAType: c.UAType, UASID: []byte(c.ID)}); err != nil {
		return dst, &Error{Reason: "range", Field: "id", Detail: err.Error()}
	}
	n++
	if c.HasPosition {
		loc := c.location()
		if err := remoteid.EncodeLocation(&msgs[n], remoteid.Version2, &loc); err != nil {
			return dst, &Error{Reason: "range", Field: "Location/Vector Message", Detail: err.Error()}
		}
		n++
	}
	if c.HasOperator {
		sys := remoteid.SystemData{OperatorLatitude: c.OperatorLat, OperatorLongitude: c.OperatorLon,
			AreaCount: 1, AreaCeiling: remoteid.AltitudeUnknown, AreaFloor: remoteid.AltitudeUnknown,
			OperatorAltitudeGeo: remoteid.AltitudeUnknown}
		if err := remoteid.EncodeSystem(&msgs[n], remoteid.Version2, &sys); err != nil {
			return dst, &Error{Reason: "range", Field: "System Message", Detail: err.Error()}
		}
		n++
	}
	if c.OperatorID != "" {
		_ = remoteid.EncodeOperatorID(&msgs[n], remoteid.Version2,
			&remoteid.OperatorIDData{OperatorID: cut(c.OperatorID, 20)})
		n++
	}
	if c.SelfID != "" {
		_ = remoteid.EncodeSelfID(&msgs[n], remoteid.Version2, &remoteid.SelfIDData{Desc: cut(c.SelfID, 23)})
		n++
	}
	out, err := remoteid.AppendPack(dst, remoteid.Version2, msgs[:n]...)
	if err != nil {
		return dst, &Error{Reason: "range", Detail: err.Error()}
	}
	return out, nil
}

// location is c's Location message in F3411's normative form, with the
// "unknown" sentinels for what c lacks.
func (c *Claim) location() remoteid.LocationData {
	d := remoteid.LocationData{
		Status: c.Status, Latitude: c.Lat, Longitude: c.Lon,
		Direction: remoteid.DirectionUnknown, SpeedHorizontal: remoteid.SpeedHorizontalUnknown,
		SpeedVertical: remoteid.SpeedVerticalUnknown, AltitudeBaro: remoteid.AltitudeUnknown,
		AltitudeGeo: remoteid.AltitudeUnknown, Height: remoteid.AltitudeUnknown,
		Timestamp: remoteid.TimestampUnknown,
	}
	if c.HasDir {
		d.Direction = c.DirDeg
	}
	if c.HasSpeed {
		d.SpeedHorizontal = c.SpeedMps
	}
	if c.HasVSpeed {
		d.SpeedVertical = c.VSpeedMps
	}
	if c.HasBaroAlt {
		d.AltitudeBaro = c.BaroAltM
	}
	if c.HasGeoAlt {
		d.AltitudeGeo = c.GeoAltM
	}
	if c.HasHeight {
		d.Height = c.HeightM
	}
	if c.HeightAGL {
		d.HeightType = 1
	}
	if c.HasTimestamp {
		d.Timestamp = c.Timestamp
	}
	return d
}

// cut shortens s to at most n bytes without splitting a UTF-8 sequence.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
