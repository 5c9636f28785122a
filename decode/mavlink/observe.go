package mavlink

import (
	"math"
	"strconv"
	"strings"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/remoteid"
	"github.com/cuasd/cuasd/decode/sensorclock"
)

// Message ids that Observe maps to observations.
const (
	idHeartbeat         = 0
	idSysStatus         = 1
	idGPSRawInt         = 24
	idGlobalPositionInt = 33
	idVFRHUD            = 74
	idBatteryStatus     = 147
	idODIDBasicID       = 12900
	idODIDLocation      = 12901
	idODIDAuth          = 12902
	idODIDSelfID        = 12903
	idODIDSystem        = 12904
	idODIDOperatorID    = 12905
	idODIDMessagePack   = 12915
	idODIDArmStatus     = 12918
	idODIDSystemUpdate  = 12919
)

// Warnings Observe may attach (plausibility findings, not proof of spoofing).
const (
	WarnPositionOutOfRange  = "mavlink_position_out_of_range"
	WarnAltitudeImplausible = "mavlink_altitude_implausible"
	WarnSpeedImplausible    = "mavlink_speed_implausible"
	// WarnODIDPackInvalid: an OPEN_DRONE_ID_MESSAGE_PACK whose sizes or
	// messages do not decode as ASTM F3411.
	WarnODIDPackInvalid = "mavlink_odid_pack_invalid"
)

// Key returns the observation key of a MAVLink system: "sysid-compid@sensor"
// ("1-1@udp-14550"), or "sysid-compid" without a sensor. A MAVLink system id
// is only unique on one link, so the receiving sensor is part of the
// identity: the same "1-1" heard by two receivers may be two vehicles.
func Key(sysID, compID uint8, sensor string) string {
	var b strings.Builder
	b.Grow(8 + len(sensor))
	b.WriteString(strconv.Itoa(int(sysID)))
	b.WriteByte('-')
	b.WriteString(strconv.Itoa(int(compID)))
	if sensor != "" {
		b.WriteByte('@')
		b.WriteString(sensor)
	}
	return b.String()
}

// Observes reports whether Observe maps messages of id msgID.
func Observes(msgID uint32) bool {
	switch msgID {
	case idHeartbeat, idSysStatus, idGPSRawInt, idGlobalPositionInt, idVFRHUD, idBatteryStatus,
		idODIDBasicID, idODIDLocation, idODIDAuth, idODIDSelfID, idODIDSystem, idODIDOperatorID,
		idODIDMessagePack, idODIDArmStatus, idODIDSystemUpdate:
		return true
	}
	return false
}

// Observe maps a decoded message of frame f to the normalised observation
// of the sending system: GLOBAL_POSITION_INT and GPS_RAW_INT give position,
// altitude and velocity; VFR_HUD velocity and altitude; HEARTBEAT the
// vehicle class (Category, the MAV_TYPE name) and emergency states;
// OPEN_DRONE_ID_* (MAVLink's carriage of Remote ID) the UAS id, UA type,
// position and operator claims; SYS_STATUS and BATTERY_STATUS only keep the
// track alive. ok is false for other messages. sensor names the receiver
// and timeUnixNano is the receive time. Every value is the sender's claim.
//
// Use VehicleStatus for the HEARTBEAT details Observation has no field for
// (autopilot, armed, flight mode).
func Observe(f *Frame, m *Message, sensor string, timeUnixNano int64) (o decode.Observation, ok bool) {
	if m.Def == nil || !Observes(m.Def.ID) {
		return o, false
	}
	o = decode.Observation{
		Protocol:     decode.MAVLink,
		Key:          Key(f.SysID, f.CompID, sensor),
		Sensor:       sensor,
		TimeUnixNano: timeUnixNano,
		SystemID:     f.SysID,
		ComponentID:  f.CompID,
	}
	switch m.Def.ID {
	case idGlobalPositionInt:
		observeGlobalPosition(&o, m)
	case idGPSRawInt:
		observeGPSRaw(&o, m)
	case idVFRHUD:
		setVelocity(&o, num(m, "groundspeed"), num(m, "heading"), num(m, "climb"))
		setAltitude(&o, num(m, "alt"), "msl")
	case idHeartbeat:
		observeHeartbeat(&o, m)
	case idODIDBasicID:
		// uas_id is uint8[20], not char, but holds NUL-padded text too.
		if id := m.Str(m.Def.Field("uas_id")); len(id) > 0 {
			o.UASID = string(id)
		}
		o.Category, o.CategoryKind = remoteid.UATypeName(uint8(num(m, "ua_type"))), decode.CategoryUAType
	case idODIDLocation:
		observeODIDLocation(&o, m)
	case idODIDSystem, idODIDSystemUpdate:
		observeODIDOperatorPosition(&o, m)
	case idODIDOperatorID:
		if id := m.Str(m.Def.Field("operator_id")); len(id) > 0 {
			o.OperatorID = string(id)
		}
	case idODIDMessagePack:
		observePack(&o, m, sensor, timeUnixNano)
	}
	return o, true
}

// observeGlobalPosition reads GLOBAL_POSITION_INT: position, MSL altitude
// and velocity, the heading from hdg or else from the velocity.
func observeGlobalPosition(o *decode.Observation, m *Message) {
	setPosition(o, num(m, "lat"), num(m, "lon"), "mavlink_global_position_int")
	if ms := num(m, "time_boot_ms"); ms > 0 {
		// The vehicle's own clock (issue 30): the decoder stage maps it
		// per system, as a receiver's.
		o.SensorNs, o.TimeSource = int64(ms)*1e6, sensorclock.FromReceiver
	}
	if o.HasPosition {
		setAltitude(o, num(m, "alt")/1000, "msl")
	}
	vx, vy, vz := num(m, "vx")/100, num(m, "vy")/100, num(m, "vz")/100
	heading := math.NaN()
	if hdg := num(m, "hdg"); hdg != math.MaxUint16 {
		heading = hdg / 100
	} else if vx != 0 || vy != 0 {
		heading = math.Atan2(vy, vx) * 180 / math.Pi
	}
	setVelocity(o, math.Hypot(vx, vy), heading, 0-vz) // 0-vz: no negative zero
}

// observeGPSRaw reads GPS_RAW_INT: position and speed with a 2D fix, the
// altitude only with a 3D one.
func observeGPSRaw(o *decode.Observation, m *Message) {
	fix := num(m, "fix_type") // GPS_FIX_TYPE: 2 = 2D, 3 = 3D, more = better
	if fix >= 2 {
		setPosition(o, num(m, "lat"), num(m, "lon"), "mavlink_gps_raw_int")
	}
	if fix >= 3 && o.HasPosition {
		setAltitude(o, num(m, "alt")/1000, "msl")
	}
	// h_acc and v_acc (mm; MAVLink 2 extensions, 0 = unknown) are the
	// receiver's stated uncertainty. eph and epv are dilutions of precision,
	// not distances: turning them into metres would take an assumed ranging
	// error, so they are not used.
	if h := num(m, "h_acc"); h > 0 && o.HasPosition {
		o.HAccuracyM = h / 1000
	}
	if v := num(m, "v_acc"); v > 0 && o.HasAltitude {
		o.VAccuracyM = v / 1000
	}
	if vel := num(m, "vel"); fix >= 2 && vel != math.MaxUint16 {
		heading := math.NaN()
		if cog := num(m, "cog"); cog != math.MaxUint16 {
			heading = cog / 100
		}
		setVelocity(o, vel/100, heading, math.NaN())
	}
}

// observeHeartbeat reads HEARTBEAT: the vehicle class and the emergency
// states.
func observeHeartbeat(o *decode.Observation, m *Message) {
	o.Category, o.CategoryKind = EnumName("MAV_TYPE", uint32(num(m, "type"))), decode.CategoryMAVType
	switch st := uint32(num(m, "system_status")); st {
	case 5, 6, 8: // MAV_STATE_CRITICAL, _EMERGENCY, _FLIGHT_TERMINATION
		o.Emergency = EnumName("MAV_STATE", st)
	}
}

// observeODIDLocation reads OPEN_DRONE_ID_LOCATION. Remote ID "unknown"
// encodings: 0 lat/lon, -1000 m altitudes, 255 m/s (25500 cm/s) speed,
// 63 m/s vertical, 361° direction.
func observeODIDLocation(o *decode.Observation, m *Message) {
	setPosition(o, num(m, "latitude"), num(m, "longitude"), "mavlink_open_drone_id")
	// The accuracy enums are Remote ID's (MAV_ODID_HOR_ACC = F3411's codes).
	acc := remoteid.Location{HorizAcc: uint8(num(m, "horizontal_accuracy")),
		VertAcc: uint8(num(m, "vertical_accuracy")), BaroAcc: uint8(num(m, "barometer_accuracy"))}
	if o.HasPosition {
		if alt := num(m, "altitude_geodetic"); alt > -1000 {
			setAltitude(o, alt, "geo")
			o.VAccuracyM = acc.StatedVertAccuracyM()
		} else if alt := num(m, "altitude_barometric"); alt > -1000 {
			setAltitude(o, alt, "baro")
			o.VAccuracyM = acc.StatedBaroAccuracyM()
		}
		o.HAccuracyM = acc.StatedHorizAccuracyM()
	}
	if sp := num(m, "speed_horizontal"); sp < 25500 {
		heading := math.NaN()
		if dir := num(m, "direction"); dir <= 36000 {
			heading = dir / 100
		}
		vr := math.NaN()
		if v := num(m, "speed_vertical"); math.Abs(v) < 6300 {
			vr = v / 100
		}
		setVelocity(o, sp/100, heading, vr)
	}
	if num(m, "status") == 3 { // MAV_ODID_STATUS_EMERGENCY
		o.Emergency = "emergency"
	}
}

// observeODIDOperatorPosition reads the operator position of
// OPEN_DRONE_ID_SYSTEM and _SYSTEM_UPDATE, when it is given and valid.
func observeODIDOperatorPosition(o *decode.Observation, m *Message) {
	lat, lon := num(m, "operator_latitude")*1e-7, num(m, "operator_longitude")*1e-7
	if (lat != 0 || lon != 0) && math.Abs(lat) <= 90 && math.Abs(lon) <= 180 {
		o.HasOperatorPosition, o.OperatorLat, o.OperatorLon = true, lat, lon
	}
}

// observePack decodes the ASTM F3411 messages an OPEN_DRONE_ID_MESSAGE_PACK
// carries (msg_pack_size messages of single_message_size = 25 bytes) with
// the Remote ID decoder and copies their claims onto the MAVLink
// observation. Undecodable messages are skipped and said in a warning.
func observePack(o *decode.Observation, m *Message, sensor string, t int64) {
	size, n := int(num(m, "single_message_size")), int(num(m, "msg_pack_size"))
	raw := m.Bytes(m.Def.Field("messages"))
	if size != remoteid.MessageSize || n < 1 || n > remoteid.MaxPackMessages || n*size > len(raw) {
		o.Warnings = append(o.Warnings, WarnODIDPackInvalid)
		return
	}
	var f remoteid.Frame
	for i := 0; i < n; i++ {
		if err := remoteid.Decode(raw[i*size:(i+1)*size], &f.Pack.Messages[f.Pack.Count]); err != nil {
			o.Warnings = append(o.Warnings, WarnODIDPackInvalid)
			continue
		}
		f.Pack.Count++
	}
	if f.Pack.Count == 0 {
		return
	}
	r := remoteid.FrameObservation(&f, t, sensor)
	o.UASID, o.OperatorID = r.UASID, r.OperatorID
	if r.Category != "" {
		o.Category, o.CategoryKind = r.Category, r.CategoryKind
	}
	if r.HasPosition {
		o.HasPosition, o.Lat, o.Lon, o.PositionMethod = true, r.Lat, r.Lon, "mavlink_open_drone_id"
	}
	if r.HasAltitude {
		o.HasAltitude, o.AltM, o.AltKind = true, r.AltM, r.AltKind
	}
	if r.HasVelocity {
		o.HasVelocity, o.SpeedMps, o.HeadingDeg, o.VRateMps = true, r.SpeedMps, r.HeadingDeg, r.VRateMps
	}
	if r.HasOperatorPosition {
		o.HasOperatorPosition, o.OperatorLat, o.OperatorLon = true, r.OperatorLat, r.OperatorLon
	}
	if r.Emergency != "" {
		o.Emergency = r.Emergency
	}
	o.Warnings = append(o.Warnings, r.Warnings...)
}

func num(m *Message, name string) float64 {
	v, _ := m.Get(name)
	return v.Float()
}

// setPosition sets a position given in 1e-7 degrees. 0,0 is MAVLink's "no
// position" (autopilots send it before a fix), not a claim of a point in
// the Gulf of Guinea.
func setPosition(o *decode.Observation, latE7, lonE7 float64, method string) {
	if latE7 == 0 && lonE7 == 0 {
		return
	}
	lat, lon := latE7*1e-7, lonE7*1e-7
	if math.Abs(lat) > 90 || math.Abs(lon) > 180 {
		o.Warnings = append(o.Warnings, WarnPositionOutOfRange)
		return
	}
	o.HasPosition, o.Lat, o.Lon, o.PositionMethod = true, lat, lon, method
}

// setAltitude sets an altitude in metres; values outside -1 km .. 100 km
// are implausible for anything MAVLink flies and are dropped with a warning.
func setAltitude(o *decode.Observation, m float64, kind string) {
	if math.IsNaN(m) || m < -1000 || m > 100000 {
		o.Warnings = append(o.Warnings, WarnAltitudeImplausible)
		return
	}
	o.HasAltitude, o.AltM, o.AltKind = true, m, kind
}

// setVelocity sets ground speed (m/s), heading (degrees, NaN when unknown)
// and vertical rate (m/s up, NaN when unknown).
func setVelocity(o *decode.Observation, speed, heading, vrate float64) {
	if math.IsNaN(speed) || speed < 0 || speed > 1000 {
		o.Warnings = append(o.Warnings, WarnSpeedImplausible)
		return
	}
	o.HasVelocity, o.SpeedMps = true, speed
	if !math.IsNaN(heading) && !math.IsInf(heading, 0) {
		h := math.Mod(heading, 360)
		if h < 0 {
			h += 360
		}
		o.HeadingDeg = h
	}
	if !math.IsNaN(vrate) && !math.IsInf(vrate, 0) {
		o.VRateMps = vrate
	}
}

// Vehicle is what a HEARTBEAT says about its sender beyond Observation's
// fields.
type Vehicle struct {
	// Type is the MAV_TYPE and TypeName its name ("MAV_TYPE_QUADROTOR").
	Type     uint8
	TypeName string
	// Autopilot is the MAV_AUTOPILOT ("MAV_AUTOPILOT_ARDUPILOTMEGA").
	Autopilot     uint8
	AutopilotName string
	// Armed is base_mode's MAV_MODE_FLAG_SAFETY_ARMED bit.
	Armed bool
	// CustomMode is the autopilot-specific flight mode number; ModeName
	// names it for ArduPilot vehicles ("GUIDED", "AUTO", "RTL"), from the
	// ardupilotmega *_MODE enums, and is "" otherwise.
	CustomMode uint32
	ModeName   string
	// SystemStatus is the MAV_STATE and StateName its name.
	SystemStatus uint8
	StateName    string
}

// VehicleStatus decodes a HEARTBEAT message; ok is false for any other.
func VehicleStatus(m *Message) (v Vehicle, ok bool) {
	if m.Def == nil || m.Def.ID != idHeartbeat {
		return v, false
	}
	v.Type = uint8(num(m, "type"))
	v.TypeName = EnumName("MAV_TYPE", uint32(v.Type))
	v.Autopilot = uint8(num(m, "autopilot"))
	v.AutopilotName = EnumName("MAV_AUTOPILOT", uint32(v.Autopilot))
	v.Armed = uint8(num(m, "base_mode"))&0x80 != 0 // MAV_MODE_FLAG_SAFETY_ARMED
	v.CustomMode = uint32(num(m, "custom_mode"))
	v.SystemStatus = uint8(num(m, "system_status"))
	v.StateName = EnumName("MAV_STATE", uint32(v.SystemStatus))
	if v.Autopilot == 3 { // MAV_AUTOPILOT_ARDUPILOTMEGA
		if enum := arduPilotModeEnum(v.Type); enum != "" {
			v.ModeName = strings.TrimPrefix(EnumName(enum, v.CustomMode), enum+"_")
		}
	}
	return v, true
}

// arduPilotModeEnum picks the ardupilotmega mode enum of a vehicle type:
// ArduPilot reports custom_mode in the numbering of its firmware (Copter,
// Plane, Rover, Sub, Tracker), which the vehicle type identifies.
func arduPilotModeEnum(mavType uint8) string {
	switch mavType {
	case 2, 3, 4, 13, 14, 15, 29, 35, 43: // quad, coaxial, heli, hexa, octo, tri, dodeca, deca, generic multirotor
		return "COPTER_MODE"
	case 1, 16, 19, 20, 21, 22, 23, 24, 25: // fixed wing, flapping wing, VTOL types
		return "PLANE_MODE"
	case 10, 11: // ground rover, surface boat
		return "ROVER_MODE"
	case 12: // submarine
		return "SUB_MODE"
	case 5: // antenna tracker
		return "TRACKER_MODE"
	}
	return ""
}
