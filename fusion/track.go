package fusion

import (
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/fusion/swarm"
	"github.com/cuasd/cuasd/gate"
)

// historyLen bounds the position history per track: enough for trails and
// behaviour features, small enough to keep a track under 2 KiB.
const historyLen = 32

// HistoryLen is how many positions a track's history (Track.History)
// holds: the newest; older ones are gone from memory.
const HistoryLen = historyLen

// maxSensors bounds the sensors remembered per track.
const maxSensors = 8

// Point is one entry of a track's position history.
type Point struct {
	T   int64 // receive time, Unix ns
	Lat float64
	Lon float64
	Alt float32
	// HasAlt says Alt is known.
	HasAlt bool
	// sensor is the receiver that heard it: 1 + its index in the track's
	// sensors, 0 when not among them (in the struct's padding).
	sensor uint8
}

// protoMask is a set of protocols.
type protoMask uint8

// The bits follow protoIndex.
const (
	maskADSB protoMask = 1 << iota
	maskRemoteID
	maskMAVLink
	maskDJI
)

func maskOf(p decode.Protocol) protoMask {
	if i := protoIndex(p); i >= 0 {
		return 1 << i
	}
	return 0
}

func (m protoMask) list() []string {
	out := make([]string, 0, 3)
	if m&maskADSB != 0 {
		out = append(out, string(decode.ADSB))
	}
	if m&maskRemoteID != 0 {
		out = append(out, string(decode.RemoteID))
	}
	if m&maskMAVLink != 0 {
		out = append(out, string(decode.MAVLink))
	}
	if m&maskDJI != 0 {
		out = append(out, string(decode.DJI))
	}
	return out
}

// cprFrame is what position decoding keeps of a compact position report:
// its 17-bit latitude and longitude and whether it was a surface report
// (not the whole observation, which would cost about 400 bytes per report
// kept, twice per aircraft).
type cprFrame struct {
	lat, lon uint32
	surface  bool
	// nic and rc are the frame's NIC and Rc (issue 21), when hasNIC.
	hasNIC bool
	nic    uint8
	rc     uint16
}

// cprState is what ADS-B position decoding keeps per aircraft.
type cprState struct {
	even, odd cprFrame
	// The frames' times by their sensor's clock (issue 30): pairing and
	// the local reference's age are judged on the receiver's clock when
	// both frames came from the same clock.
	evenT, oddT     sensorclock.Time
	hasEven, hasOdd bool
	fixT            sensorclock.Time // time of the last accepted CPR position (the local reference)
	fixLat, fixLon  float64
	hasFix          bool
	rejected        uint32 // implausible positions rejected
	// posT is the time of the last accepted position of any method (CPR,
	// or decoded before fusion: Remote ID, MAVLink, SBS input), by which
	// the next one's jump is judged on the sensor's clock. It lives here,
	// not in track, which would outgrow its allocation size class.
	posT sensorclock.Time
	// cand is the last position refused as a jump across a reset of a
	// receiver's clock, against which the next one is judged (reacquire).
	cand             sensorclock.Time
	candLat, candLon float64
	// posSensor is the sensor that heard the position of posT: only its
	// own clock's reset is reacquired across.
	posSensor string
	// heard are the last compact reports heard, by whom (heardAgain).
	heard     [4]heardFrame
	heardNext uint8
	// idHash is the track id's hash in the store's table of reports
	// (clockLinks.heardOnce; 0 until first needed).
	idHash uint64
	// onClock are the last positions accepted on each of the last four
	// receiver clocks (jumpReference).
	onClock [4]clockPosition
}

// track is the store's mutable record of one object. It is only touched
// under the store's lock; readers get Track copies.
type track struct {
	id        string
	protocols protoMask

	icao, uasID, operatorID, callsign, category string
	squawk, emergency, altKind, posMethod       string

	lat, lon           float64
	alt                float64
	speed, heading, vr float64
	opLat, opLon       float64
	hAcc, vAcc         float32 // stated accuracy, metres; 0 unknown

	// The small fields together: a track is allocated in Go's 1,536-byte
	// size class only while padding does not push it over (1,544 bytes
	// cost a 1,792-byte block).
	hasPos, hasAlt, hasVel, hasOp bool
	// simulated: every observation so far was of a simulated frame.
	simulated             bool
	systemID, componentID uint8
	categoryKind          decode.CategoryKind
	// timeSource is where the last observation's time came from (issue 30).
	timeSource sensorclock.Source
	// posSource is where the last accepted position's time came from.
	posSource sensorclock.Source

	sensors    []string
	firstSeen  int64 // receive time
	lastSeen   int64 // receive time
	lastUpdate int64 // wall clock of the last update, for expiry
	lastSensor string
	lastProto  decode.Protocol
	nObs       uint64

	warnings []string // bounded, most recent last

	hist [historyLen]Point
	// histTotal counts every point ever pushed: the ring's fill and next
	// write index follow from it (histLen, histNext), and a reader of
	// successive snapshots can tell how many fell out of the ring between
	// two reads (Track.Positions).
	histTotal uint64

	cpr *cprState
	air *AirData // Comm-B claims, only for aircraft that sent any
	// adsb is readsb's ADS-B state (issue 21), only for tracks whose
	// observations carried any.
	adsb *adsbState

	// protoPos is the last position each protocol claimed (index: 0 ADS-B,
	// 1 Remote ID, 2 MAVLink, 3 DJI), for the cross-protocol disagreement
	// check.
	protoPos [4]struct {
		t        int64
		lat, lon float64
	}

	// ext is the issue-25 part (product claim, per-sensor signal), nil
	// until an observation carries either; out of line, one pointer, to
	// keep the track in its size class.
	ext *trackExt
}

func protoIndex(p decode.Protocol) int {
	switch p {
	case decode.ADSB:
		return 0
	case decode.RemoteID:
		return 1
	case decode.MAVLink:
		return 2
	case decode.DJI:
		return 3
	}
	return -1
}

// disagreementM is the largest distance between the positions different
// protocols claimed for this object within window of each other.
func (t *track) disagreementM(window int64) float64 {
	worst := 0.0
	for i := range t.protoPos {
		for j := i + 1; j < len(t.protoPos); j++ {
			a, b := t.protoPos[i], t.protoPos[j]
			if a.t == 0 || b.t == 0 || abs64(a.t-b.t) > window {
				continue
			}
			if d := gate.Distance(gate.Point{Lat: a.lat, Lon: a.lon}, gate.Point{Lat: b.lat, Lon: b.lon}); d > worst {
				worst = d
			}
		}
	}
	return worst
}

// sensorIndex is 1 + the index of sensor s in t.sensors, 0 when it is
// not among them.
func (t *track) sensorIndex(s string) uint8 {
	for i, x := range t.sensors {
		if x == s {
			return uint8(i + 1)
		}
	}
	return 0
}

func (t *track) addSensor(s string) {
	if s == "" {
		return
	}
	for _, x := range t.sensors {
		if x == s {
			return
		}
	}
	if len(t.sensors) < maxSensors {
		t.sensors = append(t.sensors, s)
	}
}

const maxWarnings = 8

func (t *track) addWarning(w string) {
	for _, x := range t.warnings {
		if x == w {
			return
		}
	}
	if len(t.warnings) == maxWarnings {
		copy(t.warnings, t.warnings[1:])
		t.warnings = t.warnings[:maxWarnings-1]
	}
	t.warnings = append(t.warnings, w)
}

// histLen is the number of valid history points.
func (t *track) histLen() int { return int(min(t.histTotal, historyLen)) }

// histNext is the ring index the next history point is written to.
func (t *track) histNext() int { return int(t.histTotal % historyLen) }

// lastPoint is the newest history point; only meaningful when histLen() > 0.
func (t *track) lastPoint() Point { return t.hist[(t.histNext()+historyLen-1)%historyLen] }

func (t *track) pushHistory(p Point) {
	t.hist[t.histNext()] = p
	t.histTotal++
}

// history returns the newest n points (every point when there are fewer),
// oldest first.
func (t *track) history(n int) []Point {
	n = min(n, t.histLen())
	out := make([]Point, n)
	start := (t.histNext() - n + historyLen) % historyLen
	for i := range out {
		out[i] = t.hist[(start+i)%historyLen]
	}
	return out
}

// Track is a read-only snapshot of a track.
type Track struct {
	ID         string
	Protocols  []string
	ICAO       string
	UASID      string
	OperatorID string
	Callsign   string
	Category   string
	// CategoryKind says which scheme Category is in.
	CategoryKind decode.CategoryKind
	Squawk       string
	Emergency    string
	SystemID     uint8

	HasPosition    bool
	Lat, Lon       float64
	PositionMethod string
	// TimeSource says where the last observation's time came from: gps,
	// receiver (the sensor's clock, mapped) or arrival (issue 30).
	TimeSource  string
	HasAltitude bool
	AltM        float64
	AltKind     string
	HasVelocity bool
	SpeedMps    float64
	HeadingDeg  float64
	VRateMps    float64
	HasOperator bool
	OperatorLat float64
	OperatorLon float64
	// HAccuracyM and VAccuracyM are the stated 95% position accuracy in
	// metres (0: unknown).
	HAccuracyM float64
	VAccuracyM float64

	Sensors      []string
	FirstSeen    time.Time
	LastSeen     time.Time
	Observations uint64
	Warnings     []string
	// RejectedPositions counts positions dropped as implausible.
	RejectedPositions uint32
	// DisagreementM is the largest distance between positions that two
	// protocols claimed for this object within 2 s of each other (0 when
	// only one protocol reports).
	DisagreementM float64
	History       []Point
	// Positions counts every position the track's history ever received
	// (History holds the newest of them, at most 32): the difference
	// between two snapshots, less the newer positions History still
	// holds, is how many fell out of it in between.
	Positions uint64
	// Air is what the aircraft's Comm-B replies said (nil: nothing).
	Air *AirData

	// Issue 25 (field sensors). Product is the product the broadcast
	// names and its drone-database match (nil: no claim); SensorSignals
	// the last signal level of each listed sensor that measured one.
	Product       *ProductClaim
	SensorSignals []SensorSignal
	// ADSB is readsb's ADS-B state of an aircraft (issue 21; nil: none).
	ADSB *ADSBInfo
	// MLAT is the quality of the aircraft's last multilaterated fix and
	// Verification the verdict on its last checked ADS-B position (issue
	// 31; nil: none).
	MLAT         *MLATInfo
	Verification *Verification
	// Simulated: every observation of the track was of a simulated frame
	// (issue 34); the feeds leave it out unless --demo-outputs.
	Simulated bool
}

// SwarmTrack is the track as an input of swarm detection: what the board
// groups on every sweep and what the swarm endpoint is served.
func (t *Track) SwarmTrack() swarm.Track {
	return swarm.Track{ID: t.ID, Lat: t.Lat, Lon: t.Lon, AltM: t.AltM, HasAlt: t.HasAltitude,
		SpeedMps: t.SpeedMps, HeadingDeg: t.HeadingDeg, HasVelocity: t.HasVelocity}
}

func (t *track) snapshot(withHistory bool) Track {
	s := Track{
		ID: t.id, Protocols: t.protocols.list(), ICAO: t.icao, UASID: t.uasID, OperatorID: t.operatorID,
		Callsign: t.callsign, Category: t.category, CategoryKind: t.categoryKind, Squawk: t.squawk, Emergency: t.emergency, SystemID: t.systemID,
		HasPosition: t.hasPos, Lat: t.lat, Lon: t.lon, PositionMethod: t.posMethod, TimeSource: t.timeSource.String(),
		HasAltitude: t.hasAlt, AltM: t.alt, AltKind: t.altKind,
		HasVelocity: t.hasVel, SpeedMps: t.speed, HeadingDeg: t.heading, VRateMps: t.vr,
		HasOperator: t.hasOp, OperatorLat: t.opLat, OperatorLon: t.opLon,
		HAccuracyM: float64(t.hAcc), VAccuracyM: float64(t.vAcc),
		Sensors:   append([]string(nil), t.sensors...),
		FirstSeen: time.Unix(0, t.firstSeen).UTC(), LastSeen: time.Unix(0, t.lastSeen).UTC(),
		Observations: t.nObs, Warnings: append([]string(nil), t.warnings...), Positions: t.histTotal,
		Simulated: t.simulated,
	}
	if t.cpr != nil {
		s.RejectedPositions = t.cpr.rejected
	}
	s.DisagreementM = t.disagreementM(2e9)
	t.snapshotSensorClaims(&s) // issue 25
	t.snapshotMLAT(&s)         // issue 31
	if t.air != nil {
		a := *t.air
		s.Air = &a
	}
	if t.adsb != nil {
		a := t.adsb.ADSBInfo
		s.ADSB = &a
	}
	if withHistory {
		s.History = t.history(historyLen)
	} else if t.histTotal > 0 {
		// A short trail for the board and map.
		s.History = t.history(8)
	}
	return s
}
