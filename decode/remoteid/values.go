package remoteid

// Accessors that turn raw wire fields into values with units. Each returns
// ok=false for the format's "unknown" sentinel, so that a sentinel is never
// mistaken for a measurement. Out-of-range values are returned as decoded
// (ok=true); the message's Warnings say they are implausible.

// Direction returns the track direction in degrees clockwise from true north
// (raw byte + 180 for the west segment). Unknown is 361.
func (l *Location) Direction() (deg float64, ok bool) {
	d := l.directionInt()
	return float64(d), d != 361
}

func (l *Location) directionInt() int { return int(l.DirectionRaw) + 180*int(l.EWFlag) }

// SpeedHorizontal returns the ground speed in m/s: 0.25 m/s steps up to
// 63.75, then 63.75 + 0.75 m/s steps. Unknown is 255 m/s (multiplier 1, raw 255).
func (l *Location) SpeedHorizontal() (mps float64, ok bool) {
	if l.SpeedMult == 0 {
		return float64(l.SpeedHRaw) * 0.25, true
	}
	if l.SpeedHRaw == 255 {
		return 255, false
	}
	return float64(l.SpeedHRaw)*0.75 + 63.75, true
}

// SpeedVertical returns the vertical speed in m/s, positive up, in 0.5 m/s
// steps. Unknown is 63 m/s (raw 126).
func (l *Location) SpeedVertical() (mps float64, ok bool) {
	return float64(l.SpeedVRaw) * 0.5, l.SpeedVRaw != 126
}

// Position returns latitude and longitude in degrees (raw / 1e7). Unknown is
// 0,0.
func (l *Location) Position() (lat, lon float64, ok bool) {
	return rawPosition(l.LatRaw, l.LonRaw)
}

// PositionValid reports whether the position is known and within ±90/±180.
func (l *Location) PositionValid() bool { return rawPositionValid(l.LatRaw, l.LonRaw) }

// rawPosition decodes a position as Location and System both encode it:
// degrees * 1e7 in signed 32-bit integers, 0,0 meaning unknown.
func rawPosition(lat, lon int32) (latDeg, lonDeg float64, ok bool) {
	return float64(lat) / 1e7, float64(lon) / 1e7, lat != 0 || lon != 0
}

func rawLatInRange(lat int32) bool { return lat >= -900000000 && lat <= 900000000 }
func rawLonInRange(lon int32) bool { return lon >= -1800000000 && lon <= 1800000000 }

func rawPositionValid(lat, lon int32) bool {
	return (lat != 0 || lon != 0) && rawLatInRange(lat) && rawLonInRange(lon)
}

// altitude decodes the shared altitude encoding: raw * 0.5 - 1000 metres,
// where raw 0 (-1000 m) means unknown.
func altitude(raw uint16) (m float64, ok bool) {
	return float64(raw)*0.5 - 1000, raw != 0
}

// AltitudeBaro returns the pressure altitude in metres (29.92 inHg reference).
func (l *Location) AltitudeBaro() (m float64, ok bool) { return altitude(l.AltBaroRaw) }

// AltitudeGeo returns the geodetic altitude in metres above the WGS-84 ellipsoid.
func (l *Location) AltitudeGeo() (m float64, ok bool) { return altitude(l.AltGeoRaw) }

// Height returns the height in metres above takeoff or ground (see HeightType).
func (l *Location) Height() (m float64, ok bool) { return altitude(l.HeightRaw) }

// Timestamp returns the seconds after the full UTC hour (tenths on the wire).
// Unknown is 0xFFFF.
func (l *Location) Timestamp() (s float64, ok bool) {
	return float64(l.TimestampRaw) / 10, l.TimestampRaw != 0xFFFF
}

// Horizontal accuracy bounds in metres per enum value. Value 0 is "unknown or
// >= 10 NM" and is reported as the worst bound, as the reference library
// does. Value 2 is 4 NM = 7408 m (the reference library says 7808, a typo).
var horizAccM = [13]float64{18520, 18520, 7408, 3704, 1852, 926, 555.6, 185.2, 92.6, 30, 10, 3, 1}
var vertAccM = [7]float64{150, 150, 45, 25, 10, 3, 1}
var speedAccMps = [5]float64{10, 10, 3, 1, 0.3}

// HorizAccuracyM returns the horizontal accuracy bound in metres; false for
// reserved enum values (13..15).
func (l *Location) HorizAccuracyM() (float64, bool) { return lookup(horizAccM[:], l.HorizAcc) }

// VertAccuracyM returns the geodetic vertical accuracy bound in metres; false
// for reserved enum values (7..15).
func (l *Location) VertAccuracyM() (float64, bool) { return lookup(vertAccM[:], l.VertAcc) }

// BaroAccuracyM returns the barometric altitude accuracy bound in metres;
// false for reserved enum values (7..15).
func (l *Location) BaroAccuracyM() (float64, bool) { return lookup(vertAccM[:], l.BaroAcc) }

// SpeedAccuracyMps returns the speed accuracy bound in m/s; false for
// reserved enum values (5..15).
func (l *Location) SpeedAccuracyMps() (float64, bool) { return lookup(speedAccMps[:], l.SpeedAcc) }

// TSAccuracyS returns the timestamp accuracy in seconds (enum * 0.1); false
// for 0, which means unknown.
func (l *Location) TSAccuracyS() (float64, bool) {
	return float64(l.TSAcc) / 10, l.TSAcc != 0
}

// StatedHorizAccuracyM, StatedVertAccuracyM and StatedBaroAccuracyM are the
// bounds the transmitter stated, in metres, or 0 when it did not: code 0
// ("unknown"), which the methods above report as the table's worst bound,
// and the reserved codes. An observation's accuracy comes from these.
func (l *Location) StatedHorizAccuracyM() float64 { return stated(horizAccM[:], l.HorizAcc) }

// StatedVertAccuracyM: see StatedHorizAccuracyM.
func (l *Location) StatedVertAccuracyM() float64 { return stated(vertAccM[:], l.VertAcc) }

// StatedBaroAccuracyM: see StatedHorizAccuracyM.
func (l *Location) StatedBaroAccuracyM() float64 { return stated(vertAccM[:], l.BaroAcc) }

func stated(t []float64, code uint8) float64 {
	if m, ok := lookup(t, code); ok && code != 0 {
		return m
	}
	return 0
}

func lookup(t []float64, i uint8) (float64, bool) {
	if int(i) < len(t) {
		return t[i], true
	}
	return 0, false
}

// OperatorPosition returns the operator (pilot) position in degrees. Unknown
// is 0,0.
func (s *System) OperatorPosition() (lat, lon float64, ok bool) {
	return rawPosition(s.OpLatRaw, s.OpLonRaw)
}

// OperatorPositionValid reports whether the operator position is known and
// within ±90/±180.
func (s *System) OperatorPositionValid() bool { return rawPositionValid(s.OpLatRaw, s.OpLonRaw) }

// AreaRadius returns the radius of the operating area in metres (raw * 10).
func (s *System) AreaRadius() float64 { return float64(s.AreaRadiusRaw) * 10 }

// AreaCeiling returns the area ceiling in metres (geodetic); unknown is -1000.
func (s *System) AreaCeiling() (float64, bool) { return altitude(s.AreaCeilingRaw) }

// AreaFloor returns the area floor in metres (geodetic); unknown is -1000.
func (s *System) AreaFloor() (float64, bool) { return altitude(s.AreaFloorRaw) }

// OperatorAltitudeGeo returns the operator's geodetic altitude in metres;
// unknown is -1000.
func (s *System) OperatorAltitudeGeo() (float64, bool) { return altitude(s.OpAltGeoRaw) }

// TimestampUnix returns the System timestamp as Unix seconds; false when the
// protocol version has no timestamp.
func (s *System) TimestampUnix() (int64, bool) {
	return int64(s.Timestamp) + Epoch2019, s.HasTimestamp
}

// TimestampUnix returns the page-0 authentication timestamp as Unix seconds;
// false on pages other than 0.
func (a *Auth) TimestampUnix() (int64, bool) {
	return int64(a.Timestamp) + Epoch2019, a.Page == 0
}

// UASID returns the UAS ID text up to the first NUL, and false when the
// bytes are not printable ASCII (session IDs are binary). Allocates.
func (b *BasicID) UASID() (string, bool) {
	if !printable(b.ID[:]) {
		return "", false
	}
	return string(cstring(b.ID[:])), true
}

// Description returns the Self ID text up to the first NUL, and false when
// it is not printable ASCII. Allocates.
func (s *SelfID) Description() (string, bool) {
	if !printable(s.Desc[:]) {
		return "", false
	}
	return string(cstring(s.Desc[:])), true
}

// Text returns the operator ID up to the first NUL, and false when it is not
// printable ASCII. Allocates.
func (o *OperatorID) Text() (string, bool) {
	if !printable(o.ID[:]) {
		return "", false
	}
	return string(cstring(o.ID[:])), true
}
