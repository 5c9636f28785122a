package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/cuasd/cuasd/decode/remoteid"
	"github.com/cuasd/cuasd/gate"
)

// Sink receives the frames of one protocol produced in one tick.
type Sink interface {
	Publish(ctx context.Context, protocol string, frames [][]byte, recvUnixNano int64) error
}

// Config describes the traffic to generate.
type Config struct {
	// CenterLat/CenterLon is the protected site the scenario is built
	// around; defaults to DemoSite.
	CenterLat, CenterLon float64
	// ZoneRadiusM is the radius of the site's protected zone (default
	// 1500 m); intruders are aimed at it.
	ZoneRadiusM float64
	Aircraft    int
	Drones      int
	MAVLink     int
	// SwarmSize is the number of drones in one coordinated swarm (0: none).
	SwarmSize int
	// Intruders are drones that fly straight into the zone.
	Intruders int
	// Rate is the target total frames per second; 0 means realistic
	// broadcast rates (ADS-B ~4 frames/s per aircraft, Remote ID 1 pack/s,
	// MAVLink 2 chunks/s). A load test sets it and the intervals shrink.
	Rate float64
	// Tick is the scheduling granularity (default 100 ms, 10 ms under Rate).
	Tick time.Duration
	// Duration bounds the run (0: until ctx ends).
	Duration time.Duration
	Seed     uint64
	// IDBase offsets the identities (issue 34): drone serial numbers,
	// operator ids and MAVLink system ids count from it, and with it set
	// the aircraft take addresses from 0x3C0000 up, a block the demo's
	// (IDBase 0, random from 0x400000) never uses. cuasd simulate sets it,
	// so that its traffic beside a --demo never reuses the demo's ids
	// (tracks would otherwise jump between two made-up positions).
	IDBase int
	// Actors are scripted emitters added to the random traffic (the
	// false-alarm scenarios, FalseAlarmSet).
	Actors []Actor
}

// DemoSite is the default protected site: Amsterdam Airport Schiphol's
// reference point, a place where the scenario is recognisable on a map.
var DemoSite = [2]float64{52.3086, 4.7639}

// DefaultDemo is the scenario `cuasd serve --demo` runs: a few aircraft,
// drones near the site, one intruder, a swarm and MAVLink vehicles.
func DefaultDemo() Config {
	return Config{Aircraft: 4, Drones: 4, MAVLink: 2, SwarmSize: 5, Intruders: 1, ZoneRadiusM: 1500}
}

// Stats counts what a run produced.
type Stats struct {
	Frames map[string]int
	Errors int
}

type kind uint8

const (
	kAircraft kind = iota
	kDrone
	kMAVLink
)

// object is one simulated emitter.
type object struct {
	kind      kind
	lat, lon  float64
	altM      float64
	speed     float64 // m/s
	heading   float64 // deg
	turn      float64 // deg/s
	vr        float64 // m/s
	icao      uint32
	callsign  string
	uasID     string
	uaType    uint8
	operator  string
	opLat     float64
	opLon     float64
	sysID     uint8
	mavType   uint8
	seq       uint8
	odd       bool
	nIdent    int
	leader    *object // swarm members follow a leader with an offset
	offN      float64 // metres north of the leader
	offE      float64
	interval  time.Duration
	next      time.Time
	intruder  bool
	bootStart time.Time
	// Scripted actors (Config.Actors, issue 33) fly their script: no
	// respawn, an ADS-B category and claimed speed of their own, and a
	// landing that ends their broadcast.
	actor    *Actor
	desc     *Actor // a random object's description (World.Actors)
	category uint8
	claimed  float64 // ADS-B velocity broadcast instead of speed (0: speed)
	stopped  bool
}

// World is the simulation state; Step advances it.
type World struct {
	cfg     Config
	rng     *rand.Rand
	objects []*object
	start   time.Time
}

// NewWorld builds the scenario.
func NewWorld(cfg Config, now time.Time) *World {
	cfg = cfg.withDefaults()
	w := &World{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed)), start: now}
	for i := 0; i < cfg.Aircraft; i++ {
		w.objects = append(w.objects, w.newAircraft(i))
	}
	for i := 0; i < cfg.Drones; i++ {
		w.objects = append(w.objects, w.newDrone(i, false))
	}
	for i := 0; i < cfg.Intruders; i++ {
		w.objects = append(w.objects, w.newDrone(cfg.Drones+i, true))
	}
	w.addSwarm()
	for i := 0; i < cfg.MAVLink; i++ {
		w.objects = append(w.objects, w.newMAVLink(i))
	}
	w.addActors()
	w.scaleToRate()
	for _, o := range w.objects {
		o.next = now.Add(time.Duration(w.rng.Int64N(int64(o.interval) + 1)))
		o.bootStart = now
	}
	return w
}

// withDefaults fills the site, the zone radius and the tick.
func (cfg Config) withDefaults() Config {
	if cfg.CenterLat == 0 && cfg.CenterLon == 0 {
		cfg.CenterLat, cfg.CenterLon = DemoSite[0], DemoSite[1]
	}
	if cfg.ZoneRadiusM <= 0 {
		cfg.ZoneRadiusM = 1500
	}
	if cfg.Tick <= 0 {
		cfg.Tick = 100 * time.Millisecond
		if cfg.Rate > 0 {
			cfg.Tick = 10 * time.Millisecond
		}
	}
	return cfg
}

// addSwarm adds a leader circling outside the zone and SwarmSize-1
// followers in a ring 45 m around it.
func (w *World) addSwarm() {
	cfg := w.cfg
	if cfg.SwarmSize <= 0 {
		return
	}
	leader := w.newDrone(10000, false)
	leader.lat, leader.lon = offset(cfg.CenterLat, cfg.CenterLon, -cfg.ZoneRadiusM*2.2, cfg.ZoneRadiusM*0.8)
	leader.heading, leader.speed, leader.turn = 60, 9, 1.5
	w.objects = append(w.objects, leader)
	for i := 1; i < cfg.SwarmSize; i++ {
		m := w.newDrone(10000+i, false)
		m.leader = leader
		a := float64(i) * 2 * math.Pi / float64(cfg.SwarmSize-1)
		m.offN, m.offE = 45*math.Cos(a), 45*math.Sin(a)
		w.objects = append(w.objects, m)
	}
}

// scaleToRate scales the broadcast intervals so that the world emits
// cfg.Rate frames a second (when set).
func (w *World) scaleToRate() {
	natural := 0.0
	for _, o := range w.objects {
		natural += float64(time.Second) / float64(o.interval) * framesPerEmit(o.kind)
	}
	if w.cfg.Rate <= 0 || natural <= 0 {
		return
	}
	f := natural / w.cfg.Rate
	for _, o := range w.objects {
		o.interval = max(time.Duration(float64(o.interval)*f), time.Microsecond)
	}
}

func framesPerEmit(k kind) float64 {
	if k == kAircraft {
		return 2 // a position and a velocity each time
	}
	return 1
}

// Objects returns the number of emitters.
func (w *World) Objects() int { return len(w.objects) }

func (w *World) newAircraft(i int) *object {
	c := w.cfg
	bearing := w.rng.Float64() * 360
	dist := 5000 + w.rng.Float64()*40000
	lat, lon := offset(c.CenterLat, c.CenterLon, dist*math.Cos(bearing*math.Pi/180), dist*math.Sin(bearing*math.Pi/180))
	airlines := []string{"KLM", "DLH", "EZY", "BAW", "AFR", "SAS", "TRA", "RYR"}
	return &object{
		kind: kAircraft, lat: lat, lon: lon, altM: 900 + w.rng.Float64()*10000,
		speed: 120 + w.rng.Float64()*120, heading: w.rng.Float64() * 360, turn: (w.rng.Float64() - 0.5) * 0.6,
		icao:     w.aircraftAddress(i),
		callsign: fmt.Sprintf("%s%d", airlines[i%len(airlines)], 100+w.rng.IntN(8900)),
		interval: 500 * time.Millisecond, category: 3, // A3: large aircraft
	}
}

// aircraftAddress is aircraft i's ICAO address: random from 0x400000 for
// the demo, from 0x3C0000 by IDBase otherwise (see Config.IDBase).
func (w *World) aircraftAddress(i int) uint32 {
	a := 0x400000 + uint32(w.rng.IntN(0x3FFFFF)) // drawn either way: the scenario stays the same
	if b := w.cfg.IDBase; b != 0 {
		a = 0x3C0000 + uint32((b*16+i)&0x3FFFF)
	}
	return a
}

func (w *World) newDrone(i int, intruder bool) *object {
	c := w.cfg
	bearing := w.rng.Float64() * 360
	dist := c.ZoneRadiusM * (0.5 + w.rng.Float64()*1.5)
	if intruder {
		dist = c.ZoneRadiusM + 250
	}
	lat, lon := offset(c.CenterLat, c.CenterLon, dist*math.Cos(bearing*math.Pi/180), dist*math.Sin(bearing*math.Pi/180))
	o := &object{
		kind: kDrone, lat: lat, lon: lon, altM: 40 + w.rng.Float64()*80, speed: 4 + w.rng.Float64()*8,
		heading: w.rng.Float64() * 360, turn: 4 + w.rng.Float64()*6, uaType: 2, // helicopter or multirotor
		interval: time.Second, intruder: intruder,
	}
	// ANSI/CTA-2063-A serial numbers: a 4-character manufacturer code,
	// a length character, then the manufacturer's serial. "1581" is DJI's
	// published code; "ZZ9X" stands for a manufacturer nobody registered.
	mfr := "1581"
	if i%3 == 2 || intruder {
		mfr = "ZZ9X"
	}
	serial := fmt.Sprintf("SIM%08d", 1000+c.IDBase+i)
	o.uasID = mfr + string(lengthCode(len(serial))) + serial
	o.operator = fmt.Sprintf("NLD-OP-DEMO%04d", c.IDBase+i)
	o.opLat, o.opLon = offset(lat, lon, 80, -60)
	if intruder {
		// Straight at the zone's centre.
		o.heading = math.Mod(bearing+180, 360)
		o.turn, o.speed, o.altM = 0, 14, 90
		o.operator = ""
	}
	return o
}

// lengthCode is CTA-2063-A's length character for a serial of n characters
// (1-9 → '1'-'9', 10-15 → 'A'-'F').
func lengthCode(n int) byte {
	if n < 10 {
		return byte('0' + n)
	}
	return byte('A' + n - 10)
}

func (w *World) newMAVLink(i int) *object {
	c := w.cfg
	lat, lon := offset(c.CenterLat, c.CenterLon, c.ZoneRadiusM*3*math.Cos(float64(i)), c.ZoneRadiusM*3*math.Sin(float64(i)))
	mt := uint8(2) // MAV_TYPE_QUADROTOR
	if i%2 == 1 {
		mt = 1 // MAV_TYPE_FIXED_WING
	}
	return &object{kind: kMAVLink, lat: lat, lon: lon, altM: 120, speed: 12, heading: float64(i * 90), turn: 5,
		sysID: uint8(1 + (c.IDBase/1000+i)%250), mavType: mt, interval: 500 * time.Millisecond}
}

// offset moves a position by north/east metres (flat-earth, fine at these
// distances).
func offset(lat, lon, north, east float64) (float64, float64) {
	const r = 6371008.8
	dLat := north / r * 180 / math.Pi
	dLon := east / (r * math.Cos(lat*math.Pi/180)) * 180 / math.Pi
	return lat + dLat, lon + dLon
}

// Step advances every object by dt and returns the frames due at now, by
// protocol.
func (w *World) Step(now time.Time, dt time.Duration, out map[string][][]byte) {
	sec := dt.Seconds()
	for _, o := range w.objects {
		if o.leader == nil {
			o.heading = math.Mod(o.heading+o.turn*sec+360, 360)
			n := o.speed * sec * math.Cos(o.heading*math.Pi/180)
			e := o.speed * sec * math.Sin(o.heading*math.Pi/180)
			o.lat, o.lon = offset(o.lat, o.lon, n, e)
			o.altM += o.vr * sec
		}
		if o.actor != nil {
			o.fly(now.Sub(w.start))
			continue
		}
		w.keepInArea(o)
	}
	for _, o := range w.objects {
		if o.leader != nil {
			l := o.leader
			o.lat, o.lon = offset(l.lat, l.lon, o.offN, o.offE)
			o.altM, o.speed, o.heading = l.altM+5, l.speed, l.heading
		}
		for !o.next.After(now) {
			if !o.stopped {
				w.emit(o, now, out)
			}
			o.next = o.next.Add(o.interval)
		}
	}
}

// keepInArea respawns objects that leave the scenario's area.
func (w *World) keepInArea(o *object) {
	c := w.cfg
	d := distM(c.CenterLat, c.CenterLon, o.lat, o.lon)
	limit := 60000.0
	if o.kind != kAircraft {
		limit = c.ZoneRadiusM * 4
	}
	if o.intruder && d < 60 {
		// Through the centre: turn around and fly out again, so the
		// breach starts and ends.
		o.heading = math.Mod(o.heading+180, 360)
		return
	}
	if d > limit {
		// Turn back towards the site.
		o.heading = bearing(o.lat, o.lon, c.CenterLat, c.CenterLon)
	}
}

func (w *World) emit(o *object, now time.Time, out map[string][][]byte) {
	switch o.kind {
	case kAircraft:
		var f [14]byte
		if o.nIdent%10 == 0 {
			encodeIdent(&f, o.icao, o.callsign, o.category)
			out["adsb"] = append(out["adsb"], append([]byte(nil), f[:]...))
		}
		o.nIdent++
		encodePosition(&f, o.icao, o.lat, o.lon, o.altM/0.3048, o.odd)
		o.odd = !o.odd
		out["adsb"] = append(out["adsb"], append([]byte(nil), f[:]...))
		v := o.speed
		if o.claimed > 0 {
			v = o.claimed
		}
		encodeVelocity(&f, o.icao, v/0.514444, o.heading, o.vr/0.00508)
		out["adsb"] = append(out["adsb"], append([]byte(nil), f[:]...))
	case kDrone:
		out["remoteid"] = append(out["remoteid"], w.ridPack(o, now))
	case kMAVLink:
		var b []byte
		boot := uint32(now.Sub(o.bootStart).Milliseconds())
		b = appendMAVLink2(b, o.seq, o.sysID, 1, mavGlobalPositionInt,
			globalPositionPayload(boot, o.lat, o.lon, o.altM, o.altM, o.speed, o.heading, o.vr))
		o.seq++
		if o.nIdent%2 == 0 {
			b = appendMAVLink2(b, o.seq, o.sysID, 1, mavHeartbeat, heartbeatPayload(o.mavType))
			o.seq++
		}
		o.nIdent++
		out["mavlink"] = append(out["mavlink"], b)
	}
}

// ridPack encodes a Remote ID message pack (protocol version 2): Basic ID,
// Location/Vector, System and Operator ID.
func (w *World) ridPack(o *object, now time.Time) []byte {
	var msgs [][remoteid.MessageSize]byte
	var m [remoteid.MessageSize]byte
	_ = remoteid.EncodeBasicID(&m, 2, &remoteid.BasicIDData{IDType: 1, UAType: o.uaType, UASID: []byte(o.uasID)})
	msgs = append(msgs, m)
	sinceHour := float64(now.Minute()*60+now.Second()) + float64(now.Nanosecond()/1e8)/10
	_ = remoteid.EncodeLocation(&m, 2, &remoteid.LocationData{
		Status: 2, Direction: math.Round(o.heading), SpeedHorizontal: math.Min(o.speed, 254), SpeedVertical: 0,
		Latitude: o.lat, Longitude: o.lon, AltitudeBaro: o.altM, AltitudeGeo: o.altM + 45, HeightType: 0, Height: o.altM,
		HorizAccuracy: 10, VertAccuracy: 4, BaroAccuracy: 3, SpeedAccuracy: 3, TSAccuracy: 1, Timestamp: sinceHour,
	})
	msgs = append(msgs, m)
	if o.operator != "" {
		_ = remoteid.EncodeSystem(&m, 2, &remoteid.SystemData{
			OperatorLocationType: 1, ClassificationType: 0, OperatorLatitude: o.opLat, OperatorLongitude: o.opLon,
			AreaCount: 1, OperatorAltitudeGeo: 45, Timestamp: uint32(now.Sub(time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)).Seconds()),
		})
		msgs = append(msgs, m)
		_ = remoteid.EncodeOperatorID(&m, 2, &remoteid.OperatorIDData{OperatorIDType: 0, OperatorID: o.operator})
		msgs = append(msgs, m)
	}
	pack, _ := remoteid.AppendPack(nil, 2, msgs...)
	return pack
}

// distM and bearing are the gate's great-circle geometry, so simulated
// and evaluated distances agree.
func distM(lat1, lon1, lat2, lon2 float64) float64 {
	return gate.Distance(gate.Point{Lat: lat1, Lon: lon1}, gate.Point{Lat: lat2, Lon: lon2})
}

func bearing(lat1, lon1, lat2, lon2 float64) float64 {
	return gate.Bearing(gate.Point{Lat: lat1, Lon: lon1}, gate.Point{Lat: lat2, Lon: lon2})
}

// Run advances the world in real time, publishing to sink, until ctx ends
// or cfg.Duration passes.
func Run(ctx context.Context, cfg Config, sink Sink) (Stats, error) {
	now := time.Now()
	w := NewWorld(cfg, now)
	st := Stats{Frames: map[string]int{}}
	t := time.NewTicker(w.cfg.Tick)
	defer t.Stop()
	var end <-chan time.Time
	if cfg.Duration > 0 {
		end = time.After(cfg.Duration)
	}
	last := now
	out := map[string][][]byte{}
	for {
		select {
		case <-ctx.Done():
			return st, nil
		case <-end:
			return st, nil
		case now = <-t.C:
		}
		for k := range out {
			out[k] = out[k][:0]
		}
		w.Step(now, now.Sub(last), out)
		last = now
		for _, p := range []string{"adsb", "remoteid", "mavlink"} {
			if len(out[p]) == 0 {
				continue
			}
			if err := sink.Publish(ctx, p, out[p], now.UnixNano()); err != nil {
				if ctx.Err() != nil {
					return st, nil
				}
				st.Errors++
				continue
			}
			st.Frames[p] += len(out[p])
		}
	}
}
