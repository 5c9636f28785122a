package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/cuasd/cuasd/gate"
)

// ActorKind is what a scripted actor broadcasts.
type ActorKind uint8

// The kinds of actor.
const (
	// ActorADSB broadcasts ADS-B 1090ES: aircraft, helicopters, a spoofer.
	ActorADSB ActorKind = iota
	// ActorRemoteID broadcasts ASTM F3411 Remote ID message packs.
	ActorRemoteID
	// ActorMAVLink sends MAVLink 2 telemetry.
	ActorMAVLink
)

// Page is whether an operator wants to be paged on an actor by a rule
// that pages on drones and unknowns at alert (the README's rule).
type Page uint8

// The page expectations.
const (
	// PageNever: a page is a false alert (an airliner, a helicopter, a
	// hobby drone flying legally away from the zone).
	PageNever Page = iota
	// PageMay: a page is defensible either way (a drone loitering near
	// an airport's zone); it counts neither as false nor as missed.
	PageMay
	// PageMust: the actor must be paged (it breaches the zone).
	PageMust
)

// String returns "never", "may" or "must".
func (p Page) String() string {
	return [...]string{"never", "may", "must"}[p]
}

// Expect is what a human operator should see of an actor: what it is,
// and whether it should page. Whether it breaches is measured from its
// true path (World.Actors), and every breach by a drone or an unknown
// must page within 2 s.
type Expect struct {
	Class gate.TrackClass
	Page  Page
}

// Actor is one scripted emitter of a scenario: where it starts relative to
// the site, how it flies, what it broadcasts and what an operator should
// see of it.
type Actor struct {
	Name string
	Kind ActorKind
	// NorthM and EastM place it relative to the site's centre (to its
	// leader's, for a follower); AltM is its height.
	NorthM, EastM, AltM float64
	// SpeedMps, HeadingDeg, TurnDps (degrees a second, positive right)
	// and VRateMps are its motion.
	SpeedMps, HeadingDeg, TurnDps, VRateMps float64
	// Category is an ADS-B actor's emitter category in set A (3: large
	// aircraft, 7: rotorcraft; 0 means 3).
	Category uint8
	// ClaimedSpeedMps, when set, is the ADS-B velocity it broadcasts
	// instead of its true speed: a spoofer's implausible claim.
	ClaimedSpeedMps float64
	// Operator: a Remote ID actor broadcasts its operator's id and
	// location.
	Operator bool
	// Land: it stops broadcasting when it reaches the ground.
	Land bool
	// StartAfter: it is silent (switched off, on the ground) until this
	// long after the scenario starts, then broadcasts where it is: a drone
	// that takes off inside the zone.
	StartAfter time.Duration
	// Leader, when above 0, is the 1-based index in the scenario's actors
	// of the actor it keeps formation with (a swarm).
	Leader int
	Expect Expect
}

// Scenario is one seeded situation of the false-alarm set: random traffic
// (Config) and scripted actors, run for Duration.
type Scenario struct {
	Name        string
	Description string
	Config      Config
	Duration    time.Duration
}

// ActorState is an emitter's true state now, for measuring what the gate
// made of it.
type ActorState struct {
	// Actor is the script (for random traffic, a description with its
	// expectation: aircraft never page, drones may).
	Actor *Actor
	// ICAO, UASID and SysID identify it as fusion keys its track
	// (TrackID).
	ICAO   uint32
	UASID  string
	SysID  uint8
	Lat    float64
	Lon    float64
	AltM   float64
	OnAir  bool // broadcasting (a landed actor is not)
	object *object
}

// TrackID is the id of the track fusion makes of the actor's broadcasts
// heard by sensor.
func (a *ActorState) TrackID(sensor string) string {
	switch {
	case a.ICAO != 0:
		return fmt.Sprintf("adsb:%06X", a.ICAO)
	case a.UASID != "":
		return "rid:" + a.UASID
	}
	return fmt.Sprintf("mav:%d-1@%s", a.SysID, sensor)
}

// Actors returns every emitter's true state, the random traffic's too.
func (w *World) Actors() []ActorState {
	out := make([]ActorState, 0, len(w.objects))
	for _, o := range w.objects {
		a := o.actor
		if a == nil {
			if o.desc == nil {
				o.desc = randomActor(o)
			}
			a = o.desc
		}
		out = append(out, ActorState{Actor: a, ICAO: o.icao, UASID: o.uasID, SysID: o.sysID,
			Lat: o.lat, Lon: o.lon, AltM: o.altM, OnAir: !o.stopped, object: o})
	}
	return out
}

// randomActor describes a random object of the demo traffic: an aircraft
// should never page; a drone near the site may.
func randomActor(o *object) *Actor {
	switch o.kind {
	case kAircraft:
		return &Actor{Name: o.callsign, Kind: ActorADSB, Expect: Expect{Class: gate.TrackAircraft, Page: PageNever}}
	case kMAVLink:
		return &Actor{Name: fmt.Sprintf("mavlink-%d", o.sysID), Kind: ActorMAVLink, Expect: Expect{Class: gate.TrackDrone, Page: PageMay}}
	}
	return &Actor{Name: o.uasID, Kind: ActorRemoteID, Expect: Expect{Class: gate.TrackDrone, Page: PageMay}}
}

// addActors adds the scripted actors of the configuration.
func (w *World) addActors() {
	c := w.cfg
	objs := make([]*object, len(c.Actors))
	for i := range c.Actors {
		a := &c.Actors[i]
		o := &object{actor: a, altM: a.AltM, speed: a.SpeedMps, heading: a.HeadingDeg, turn: a.TurnDps, vr: a.VRateMps,
			category: a.Category, claimed: a.ClaimedSpeedMps}
		if o.category == 0 {
			o.category = 3
		}
		o.lat, o.lon = offset(c.CenterLat, c.CenterLon, a.NorthM, a.EastM)
		o.stopped = a.StartAfter > 0
		if a.Leader > 0 && a.Leader <= i {
			o.leader, o.offN, o.offE = objs[a.Leader-1], a.NorthM, a.EastM
		}
		switch a.Kind {
		case ActorADSB:
			o.kind, o.interval = kAircraft, 500*time.Millisecond
			o.icao = 0x480000 + uint32(w.rng.IntN(0x7FFFF))
			o.callsign = fmt.Sprintf("SC%d", 100+i)
		case ActorRemoteID:
			o.kind, o.interval, o.uaType = kDrone, time.Second, 2
			serial := fmt.Sprintf("SCN%08d", 2000+i)
			o.uasID = "1581" + string(lengthCode(len(serial))) + serial
			if a.Operator {
				o.operator = fmt.Sprintf("NLD-OP-SCN%04d", i)
				o.opLat, o.opLon = offset(o.lat, o.lon, 80, -60)
			}
		case ActorMAVLink:
			o.kind, o.interval, o.mavType = kMAVLink, 500*time.Millisecond, 2
			o.sysID = uint8(100 + i)
		}
		objs[i] = o
		w.objects = append(w.objects, o)
	}
}

// fly applies a scripted actor's rules after it moved, at elapsed since
// the scenario began: a late actor starts broadcasting, a landing actor
// stops on the ground; nobody flies below it.
func (o *object) fly(elapsed time.Duration) {
	if a := o.actor; a.StartAfter > 0 && o.stopped && elapsed >= a.StartAfter && o.altM > 0 {
		o.stopped = false
	}
	if o.altM <= 0 {
		o.altM = 0
		if o.actor.Land {
			o.stopped = true
		}
	}
}

// FalseAlarmSet is the seeded scenario set of issue 33's false-alarm
// benchmark around the demo site (an airport, zone radius 1,500 m): what
// an airport's counter-UAS picture holds on an ordinary day, and the
// intrusions it exists for. Each actor says what an operator should see.
func FalseAlarmSet(seed uint64) []Scenario {
	site := func(actors ...Actor) Config {
		return Config{ZoneRadiusM: 1500, Seed: seed, Actors: actors}
	}
	airliner := Expect{Class: gate.TrackAircraft, Page: PageNever}
	drone := Expect{Class: gate.TrackDrone, Page: PageMust}
	// A 3° glide path: 72 m/s over the ground sinks 3.8 m/s.
	return []Scenario{
		{Name: "airliners-approach", Description: "two airliners on final approach from 15 km, landing through the zone",
			Duration: 5 * time.Minute, Config: site(
				Actor{Name: "final-27", Kind: ActorADSB, EastM: 15000, AltM: 800, SpeedMps: 72, HeadingDeg: 270, VRateMps: -3.8, Land: true, Expect: airliner},
				Actor{Name: "final-18", Kind: ActorADSB, NorthM: 14000, EastM: -700, AltM: 760, SpeedMps: 70, HeadingDeg: 180, VRateMps: -3.8, Land: true, Expect: airliner},
			)},
		{Name: "airliners-departure", Description: "two airliners taking off from the site and climbing out",
			Duration: 4 * time.Minute, Config: site(
				Actor{Name: "dep-24", Kind: ActorADSB, SpeedMps: 75, HeadingDeg: 240, VRateMps: 10, Expect: airliner},
				Actor{Name: "dep-36", Kind: ActorADSB, NorthM: -800, SpeedMps: 80, HeadingDeg: 0, VRateMps: 12, Expect: airliner},
			)},
		{Name: "helicopters", Description: "a helicopter crossing the zone at 300 m and one orbiting 2.5 km out at 150 m",
			Duration: 5 * time.Minute, Config: site(
				Actor{Name: "heli-cross", Kind: ActorADSB, Category: 7, EastM: -6000, NorthM: 300, AltM: 300, SpeedMps: 50, HeadingDeg: 90, Expect: airliner},
				Actor{Name: "heli-orbit", Kind: ActorADSB, Category: 7, NorthM: 2500, AltM: 150, SpeedMps: 20, HeadingDeg: 90, TurnDps: 3, Expect: airliner},
			)},
		{Name: "hobby-drone-outside", Description: "a Remote ID hobby drone with its operator, circling legally 3.5 km from the site",
			Duration: 10 * time.Minute, Config: site(
				Actor{Name: "hobby", Kind: ActorRemoteID, Operator: true, NorthM: 3500, AltM: 90, SpeedMps: 6, HeadingDeg: 0, TurnDps: 6,
					Expect: Expect{Class: gate.TrackDrone, Page: PageNever}},
			)},
		{Name: "drones-breach", Description: "a Remote ID drone with operator, one without, and a MAVLink quadcopter flying through the zone",
			Duration: 7 * time.Minute, Config: site(
				Actor{Name: "rid-south", Kind: ActorRemoteID, Operator: true, NorthM: -2500, AltM: 100, SpeedMps: 12, HeadingDeg: 0, Expect: drone},
				Actor{Name: "rid-east", Kind: ActorRemoteID, EastM: 2400, NorthM: 400, AltM: 60, SpeedMps: 14, HeadingDeg: 265, Expect: drone},
				Actor{Name: "mav-west", Kind: ActorMAVLink, EastM: -2600, NorthM: -300, AltM: 80, SpeedMps: 15, HeadingDeg: 80, Expect: drone},
				// Switched on inside the zone: nothing warned of it, so its
				// page measures breach → page from the first broadcast.
				Actor{Name: "rid-popup", Kind: ActorRemoteID, NorthM: 400, EastM: 300, AltM: 40, SpeedMps: 2, HeadingDeg: 90, TurnDps: 3,
					StartAfter: 90 * time.Second, Expect: drone},
			)},
		{Name: "swarm", Description: "five Remote ID drones in formation flying into the zone from the south-west",
			Duration: 7 * time.Minute, Config: site(swarmActors(drone)...)},
		{Name: "spoofed-track", Description: "an ADS-B 'airliner' flying like a drone (80 m, 15 m/s) into the zone, claiming 420 m/s",
			Duration: 6 * time.Minute, Config: site(
				Actor{Name: "ghost", Kind: ActorADSB, NorthM: 2500, AltM: 80, SpeedMps: 15, HeadingDeg: 180, ClaimedSpeedMps: 420,
					Expect: Expect{Class: gate.TrackUnknown, Page: PageMust}},
			)},
		// serve --demo's own traffic (its seed is 0, whatever the set's).
		{Name: "demo", Description: "`cuasd serve --demo`'s traffic: 4 airliners, 4 drones, an intruder, a swarm of 5, 2 MAVLink vehicles",
			Duration: 10 * time.Minute, Config: DefaultDemo()},
	}
}

// swarmActors is a leader and four followers 40 m around it.
func swarmActors(e Expect) []Actor {
	d := 3000 / math.Sqrt2
	out := []Actor{{Name: "swarm-lead", Kind: ActorRemoteID, Operator: true, NorthM: -d, EastM: -d, AltM: 70, SpeedMps: 10, HeadingDeg: 45, Expect: e}}
	for i, off := range [][2]float64{{40, 0}, {-40, 0}, {0, 40}, {0, -40}} {
		out = append(out, Actor{Name: fmt.Sprintf("swarm-%d", i+1), Kind: ActorRemoteID, NorthM: off[0], EastM: off[1], AltM: 75, Leader: 1, Expect: e})
	}
	return out
}
