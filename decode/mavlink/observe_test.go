package mavlink

import (
	"math"
	"testing"
)

// frameOf parses the first frame of a vector by id.
func frameOf(t *testing.T, id string) (Frame, Message) {
	t.Helper()
	for _, v := range loadVectors(t) {
		if v.ID != id {
			continue
		}
		var p Parser
		p.Reset(mustHex(t, v.Hex))
		f, ok := p.Next()
		if !ok {
			t.Fatalf("%s: no frame", id)
		}
		var m Message
		if !m.Decode(&f) {
			t.Fatalf("%s: not in dialect", id)
		}
		return f, m
	}
	t.Fatalf("no vector %s", id)
	return Frame{}, Message{}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

// TestObserve checks the observations of the vectors' messages. The wanted
// values are the vectors' fields converted with the units of the MAVLink
// definitions (degE7, mm, cm/s, cdeg).
func TestObserve(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		vector                string
		pos                   bool
		lat, lon              float64
		method                string
		alt                   float64 // NaN: no altitude
		altKind               string
		speed, heading, vrate float64 // speed NaN: no velocity
		category, emergency   string
		uasID                 string
		opLat, opLon          float64
		hAcc, vAcc            float64 // stated accuracy, metres; 0 unknown
	}{
		{vector: "GLOBAL_POSITION_INT_v1", pos: true, lat: 47.3977418, lon: 8.5455939, method: "mavlink_global_position_int",
			alt: 488.12, altKind: "msl", speed: math.Hypot(5.23, -1.18), heading: 270.12, vrate: -0.12},
		// hdg UINT16_MAX: heading from the velocity vector (vx -327.68, vy 327.67 m/s).
		{vector: "GLOBAL_POSITION_INT_sitl_home_extremes_v2", pos: true, lat: -35.3632621, lon: 149.1652374, method: "mavlink_global_position_int",
			alt: -15, altKind: "msl", speed: math.Hypot(327.68, 327.67), heading: math.Atan2(327.67, -327.68) * 180 / math.Pi, vrate: 0.01},
		{vector: "GPS_RAW_INT_v1", pos: true, lat: 47.3977418, lon: 8.5455939, method: "mavlink_gps_raw_int",
			alt: 488.12, altKind: "msl", speed: 15.30, heading: 270.12, vrate: 0},
		{vector: "HEARTBEAT_v1", alt: nan, speed: nan, category: "MAV_TYPE_QUADROTOR"},
		{vector: "HEARTBEAT_PX4_v2", alt: nan, speed: nan, category: "MAV_TYPE_FIXED_WING"},
		{vector: "SYS_STATUS_v1", alt: nan, speed: nan},
		{vector: "BATTERY_STATUS_v1", alt: nan, speed: nan},
		{vector: "OPEN_DRONE_ID_BASIC_ID_v2", alt: nan, speed: nan, category: "helicopter_or_multirotor", uasID: "1596F350457170000001"},
		{vector: "OPEN_DRONE_ID_LOCATION_v2", pos: true, lat: 47.3977418, lon: 8.5455939, method: "mavlink_open_drone_id",
			alt: 530, altKind: "geo", speed: 12.5, heading: 90, vrate: -0.5,
			hAcc: 3, vAcc: 3}, // horizontal_accuracy 11 "< 3 m", vertical_accuracy 5 "< 3 m" (F3411 / MAV_ODID_*_ACC)
		{vector: "OPEN_DRONE_ID_SYSTEM_v2", alt: nan, speed: nan, opLat: 47.397, opLon: 8.545},
	}
	for _, tc := range tests {
		t.Run(tc.vector, func(t *testing.T) {
			f, m := frameOf(t, tc.vector)
			o, ok := Observe(&f, &m, "rx1", 42)
			if !ok {
				t.Fatal("no observation")
			}
			if o.Protocol != "mavlink" || o.Key != Key(f.SysID, f.CompID, "rx1") || o.Sensor != "rx1" || o.TimeUnixNano != 42 ||
				o.SystemID != f.SysID || o.ComponentID != f.CompID {
				t.Errorf("identity %+v", o)
			}
			if o.HasPosition != tc.pos || tc.pos && (!near(o.Lat, tc.lat) || !near(o.Lon, tc.lon) || o.PositionMethod != tc.method) {
				t.Errorf("position %v %v,%v %s; want %v %v,%v %s", o.HasPosition, o.Lat, o.Lon, o.PositionMethod, tc.pos, tc.lat, tc.lon, tc.method)
			}
			if wantAlt := !math.IsNaN(tc.alt); o.HasAltitude != wantAlt || wantAlt && (!near(o.AltM, tc.alt) || o.AltKind != tc.altKind) {
				t.Errorf("altitude %v %v %s; want %v %s", o.HasAltitude, o.AltM, o.AltKind, tc.alt, tc.altKind)
			}
			if wantVel := !math.IsNaN(tc.speed); o.HasVelocity != wantVel || wantVel && (!near(o.SpeedMps, tc.speed) || !near(o.HeadingDeg, tc.heading) || !near(o.VRateMps, tc.vrate)) {
				t.Errorf("velocity %v %v m/s %v° %v m/s; want %v m/s %v° %v m/s", o.HasVelocity, o.SpeedMps, o.HeadingDeg, o.VRateMps, tc.speed, tc.heading, tc.vrate)
			}
			if o.Category != tc.category || o.Emergency != tc.emergency || o.UASID != tc.uasID {
				t.Errorf("category %q emergency %q uas_id %q; want %q %q %q", o.Category, o.Emergency, o.UASID, tc.category, tc.emergency, tc.uasID)
			}
			if hasOp := tc.opLat != 0; o.HasOperatorPosition != hasOp || hasOp && (!near(o.OperatorLat, tc.opLat) || !near(o.OperatorLon, tc.opLon)) {
				t.Errorf("operator %v %v,%v", o.HasOperatorPosition, o.OperatorLat, o.OperatorLon)
			}
			if o.HAccuracyM != tc.hAcc || o.VAccuracyM != tc.vAcc {
				t.Errorf("accuracy %v m, %v m; want %v, %v", o.HAccuracyM, o.VAccuracyM, tc.hAcc, tc.vAcc)
			}
			if len(o.Warnings) != 0 {
				t.Errorf("warnings %v", o.Warnings)
			}
		})
	}
}

func TestObserveIgnoresOtherMessages(t *testing.T) {
	f, m := frameOf(t, "ATTITUDE_v1")
	if _, ok := Observe(&f, &m, "rx", 0); ok {
		t.Error("ATTITUDE gave an observation")
	}
}

func TestObserveImplausible(t *testing.T) {
	f, m := frameOf(t, "GLOBAL_POSITION_INT_v1")
	def := m.Def
	lat := def.Field("lat")
	m.buf[lat.Offset+3] = 0x7f // ~214 degrees
	o, _ := Observe(&f, &m, "rx", 0)
	if o.HasPosition || o.HasAltitude || len(o.Warnings) != 1 || o.Warnings[0] != WarnPositionOutOfRange {
		t.Errorf("%+v", o)
	}
}

// TestVehicleStatus checks HEARTBEAT details against the vectors' fields:
// base_mode 81 (0x51) is disarmed, 157 (0x9D) armed; ArduPilot copter
// custom_mode 5 is LOITER in the ardupilotmega COPTER_MODE enum.
func TestVehicleStatus(t *testing.T) {
	_, m := frameOf(t, "HEARTBEAT_v1")
	v, ok := VehicleStatus(&m)
	if !ok || v.TypeName != "MAV_TYPE_QUADROTOR" || v.AutopilotName != "MAV_AUTOPILOT_ARDUPILOTMEGA" || v.Armed ||
		v.CustomMode != 5 || v.ModeName != "LOITER" || v.StateName != "MAV_STATE_ACTIVE" {
		t.Errorf("%+v", v)
	}
	_, m = frameOf(t, "HEARTBEAT_PX4_v2")
	v, ok = VehicleStatus(&m)
	if !ok || v.TypeName != "MAV_TYPE_FIXED_WING" || v.AutopilotName != "MAV_AUTOPILOT_PX4" || !v.Armed ||
		v.CustomMode != 67371008 || v.ModeName != "" || v.StateName != "MAV_STATE_STANDBY" {
		t.Errorf("%+v", v)
	}
}

// TestObserveTlog maps the ArduPlane log, recorded near Canberra (see
// shared/data/mavlink/SOURCES.md): every position must lie there.
func TestObserveTlog(t *testing.T) {
	data := readShared(t, "uavlogviewer_vtol.tlog")
	var r TlogReader
	r.Reset(data)
	var m Message
	n := 0
	for {
		f, usec, ok := r.Next()
		if !ok {
			break
		}
		if !m.Decode(&f) {
			continue
		}
		o, ok := Observe(&f, &m, "tlog", usec*1000)
		if !ok || !o.HasPosition {
			continue
		}
		n++
		if o.Lat < -35.5 || o.Lat > -35.2 || o.Lon < 149.0 || o.Lon > 149.3 || len(o.Warnings) > 0 {
			t.Fatalf("offset %d: %+v", f.Offset, o)
		}
	}
	if n < 1000 {
		t.Errorf("only %d positions", n)
	}
}
