package cot

import (
	"slices"

	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/reference"
)

// Decision names as events carry them.
var (
	decIntercept = gate.InterceptRecommended.String()
	decAlert     = gate.Alert.String()
)

// Affiliation letters of a CoT atom type ("a-h-A-M-H-Q": hostile).
const (
	AffPending = 'p'
	AffUnknown = 'u'
	AffFriend  = 'f'
	AffAssumed = 'a'
	AffSuspect = 's'
	AffHostile = 'h'
)

// affiliation is the CoT affiliation of a track from the gate's decision:
// an allow-listed identity is a friend and an allied or counter-UAS system
// an assumed friend; intercept-recommended is hostile; alert is suspect, or
// hostile when the drone database names the system an adversary's;
// monitor is unknown; a track not yet evaluated is pending.
func affiliation(a *events.Assessment) byte {
	switch {
	case a == nil:
		return AffPending
	case a.AllowListed:
		return AffFriend
	case a.Side == string(gate.SideAllied) || a.Side == string(gate.SideCounterUAS):
		return AffAssumed
	case a.Decision == decIntercept:
		return AffHostile
	case a.Decision == decAlert && a.Side == string(gate.SideAdversary):
		return AffHostile
	case a.Decision == decAlert:
		return AffSuspect
	}
	return AffUnknown
}

// Airframe function codes (the part of the type after "a-<affiliation>-").
const (
	typeDroneFixed  = "A-M-F-Q" // unmanned fixed wing (also the generic UAV)
	typeDroneRotary = "A-M-H-Q" // unmanned rotary wing
	typeCivilFixed  = "A-C-F"
	typeCivilHeli   = "A-C-H"
	typeCivilLTA    = "A-C-L" // lighter than air
	typeMilFixed    = "A-M-F"
	typeGroundVeh   = "G-E-V"
	typeAir         = "A"
)

// rotary are the category names (Remote ID UA types, MAVLink MAV_TYPEs)
// of rotary-wing drones; fixedWing those of fixed-wing ones (VTOL
// included: it cruises on its wing). A category in neither ("none",
// "other", MAV_TYPE_GENERIC, a balloon) does not say, and the drone
// database's record of the claimed product decides.
var (
	rotary = map[string]bool{
		"helicopter_or_multirotor": true, "gyroplane": true,
		"MAV_TYPE_QUADROTOR": true, "MAV_TYPE_COAXIAL": true, "MAV_TYPE_HELICOPTER": true,
		"MAV_TYPE_HEXAROTOR": true, "MAV_TYPE_OCTOROTOR": true, "MAV_TYPE_TRICOPTER": true,
		"MAV_TYPE_DODECAROTOR": true, "MAV_TYPE_DECAROTOR": true, "MAV_TYPE_GENERIC_MULTIROTOR": true,
	}
	fixedWing = map[string]bool{
		"aeroplane": true, "hybrid_lift": true, "glider": true,
		"MAV_TYPE_FIXED_WING": true, "MAV_TYPE_FLAPPING_WING": true, "MAV_TYPE_VTOL_TAILSITTER_DUOROTOR": true,
		"MAV_TYPE_VTOL_TAILSITTER_QUADROTOR": true, "MAV_TYPE_VTOL_TILTROTOR": true, "MAV_TYPE_VTOL_FIXEDROTOR": true,
		"MAV_TYPE_VTOL_TAILSITTER": true, "MAV_TYPE_VTOL_TILTWING": true, "MAV_TYPE_VTOL_RESERVED5": true,
	}
)

// droneProtocols are the protocols whose tracks are drones.
var droneProtocols = [...]string{"remoteid", "mavlink", "dji"}

// RotaryAirframes maps the id of every aircraft record of the drone
// database to whether it is rotary wing (quad-, hexa-, octorotor, coaxial,
// helicopter) or not (fixed wing, VTOL): the airframe of a drone whose
// own broadcast does not say (Remote ID UA type "none", DJI DroneID) comes
// from the record its claimed product matched (events.Product).
func RotaryAirframes(db *reference.DB) map[string]bool {
	if db == nil {
		return nil
	}
	m := map[string]bool{}
	for _, d := range db.Drones() {
		switch d.Airframe {
		case "quadrotor", "hexarotor", "octorotor", "coaxial", "helicopter":
			m[d.ID] = true
		case "fixed_wing", "vtol_fixedrotor", "vtol_tailsitter", "vtol_tiltrotor":
			m[d.ID] = false
		}
	}
	return m
}

// emitterTypes maps ADS-B emitter categories (DO-260B set and code) to
// airframes: A6 "high performance (> 5 g, > 400 kt)" is military in
// practice, A7 is a rotorcraft, B2 lighter than air, B6 an unmanned aerial
// vehicle, C1–C3 surface vehicles.
var emitterTypes = map[string]string{
	"A6": typeMilFixed, "A7": typeCivilHeli, "B2": typeCivilLTA, "B6": typeDroneFixed,
	"C1": typeGroundVeh, "C2": typeGroundVeh, "C3": typeGroundVeh,
}

// airframe is the function part of a track's CoT type. A drone's wing
// comes from its own broadcast (Remote ID UA type, MAVLink MAV_TYPE), else
// from the drone-database record its product claim matched (rotary,
// nil: none known), else it is the generic UAV (fixed wing).
func airframe(t *events.Track, rotaryByRef map[string]bool) string {
	drone := false
	for _, p := range droneProtocols {
		drone = drone || slices.Contains(t.Protocols, p)
	}
	if !drone && t.ICAO != "" {
		if ty, ok := emitterTypes[t.Category]; ok {
			return ty
		}
		return typeCivilFixed
	}
	switch {
	case !drone && t.Category != "B6":
		return typeAir
	case rotary[t.Category]:
		return typeDroneRotary
	case fixedWing[t.Category]:
		return typeDroneFixed
	}
	if t.Product != nil && t.Product.ReferenceID != "" && rotaryByRef[t.Product.ReferenceID] {
		return typeDroneRotary
	}
	return typeDroneFixed
}

// appendType appends the CoT type of a track ("a-s-A-M-H-Q").
func (e *Encoder) appendType(dst []byte, t *events.Track, a *events.Assessment) []byte {
	dst = append(dst, 'a', '-', affiliation(a), '-')
	return append(dst, airframe(t, e.RotaryByReference)...)
}

// Type is the CoT type of a track with its assessment ("a-h-A-M-H-Q"),
// without the drone database.
func Type(t *events.Track, a *events.Assessment) string {
	var e Encoder
	return string(e.appendType(nil, t, a))
}
