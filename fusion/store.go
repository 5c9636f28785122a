package fusion

import (
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/gate"
)

// Config tunes the store.
type Config struct {
	// TTL is how long a track lives without updates (default 60 s).
	TTL time.Duration
	// CPRPairWindow is the longest time between an even and an odd ADS-B
	// frame that may be combined for a global position (default 10 s).
	CPRPairWindow time.Duration
	// LocalRefMaxAge is the oldest last fix used as the reference of local
	// CPR decoding (default 60 s).
	LocalRefMaxAge time.Duration
	// MaxSpeedMps is the speed beyond which a new position is rejected as
	// implausible (default 700 m/s, about Mach 2 at altitude).
	MaxSpeedMps float64
	// Now is the wall clock (tests replace it).
	Now func() time.Time
}

func (c *Config) defaults() {
	if c.TTL <= 0 {
		c.TTL = 60 * time.Second
	}
	if c.CPRPairWindow <= 0 {
		c.CPRPairWindow = 10 * time.Second
	}
	if c.LocalRefMaxAge <= 0 {
		c.LocalRefMaxAge = 60 * time.Second
	}
	if c.MaxSpeedMps <= 0 {
		c.MaxSpeedMps = 700
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Update says what an observation changed, for the evaluator.
type Update struct {
	TrackID     string
	NewTrack    bool
	PositionNew bool
}

// Store is the track store: tracks keyed by identity, merged across
// protocols when an identity links them. It is safe for concurrent use.
type Store struct {
	cfg Config

	mu     sync.RWMutex
	tracks map[string]*track
	// alias maps identity keys (protocol "adsb" + "406B90", "uas" +
	// "1596F3...", "mavlink" + "1-1@udp") to track ids, so observations of
	// one object from several protocols land on one track. A struct key
	// avoids building a string per lookup.
	alias map[aliasKey]string
	// clocks holds each sensor's newest receive time: expiry is measured
	// on a track's sensor clock as well as on the wall clock, so a replayed
	// old capture still shows and then expires as the capture moves on,
	// whatever live sensors report meanwhile.
	clocks map[string]int64
	// dropped counts observations that could not be applied, by reason.
	dropped map[string]uint64
	// skipped counts positions that were no new fix, by skipReason.
	skipped [skipReasons]uint64
	// links relate receivers' clocks by the transmissions they share.
	links   clockLinks
	version uint64
	// fixFeeds hear every accepted fix (FeedFixes); fix is the one value
	// handed to them, reused under mu: a fresh Fix per fix escaped to the
	// heap (the feeds are function values), an allocation per accepted
	// fix on fusion's goroutine.
	fixFeeds []fixFeed
	feedSeq  uint64
	fix      Fix
}

// NewStore returns an empty store.
func NewStore(cfg Config) *Store {
	cfg.defaults()
	// Every drop reason is reported from the start, at 0.
	dropped := map[string]uint64{dropNoIdentity: 0, dropModeSUnknown: 0}
	return &Store{cfg: cfg, tracks: map[string]*track{}, alias: map[aliasKey]string{}, clocks: map[string]int64{}, dropped: dropped}
}

// TTL is the configured track lifetime.
func (s *Store) TTL() time.Duration { return s.cfg.TTL }

func trackPrefix(p decode.Protocol) string {
	switch p {
	case decode.ADSB:
		return "adsb:"
	case decode.RemoteID:
		return "rid:"
	case decode.MAVLink:
		return "mav:"
	}
	return string(p) + ":"
}

// Apply merges one observation into the store.
func (s *Store) Apply(o *decode.Observation) (Update, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applyLocked(o, s.cfg.Now().UnixNano())
}

// ApplyBatch merges observations under one lock acquisition. It builds no
// list of updates: the consumer, its only caller, needs none.
func (s *Store) ApplyBatch(obs []decode.Observation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// One clock read per batch: it was a measurable share of the store's
	// CPU when read per observation.
	now := s.cfg.Now().UnixNano()
	for i := range obs {
		s.applyLocked(&obs[i], now)
	}
}

func (s *Store) drop(reason string) { s.dropped[reason]++ }

// The reasons of cuasd_observations_dropped_total.
const (
	dropNoIdentity   = "no_identity"             // no key to attach the observation to
	dropModeSUnknown = "mode_s_unknown_aircraft" // a parity-addressed reply from an aircraft with no live track
)

func (s *Store) applyLocked(o *decode.Observation, now int64) (Update, bool) {
	if o.Key == "" {
		s.drop(dropNoIdentity)
		return Update{}, false
	}
	recv := o.TimeUnixNano
	if recv == 0 {
		recv = now
	}
	if recv > s.clocks[o.Sensor] {
		s.clocks[o.Sensor] = recv
	}
	ak := aliasKey{string(o.Protocol), o.Key}
	t := s.trackFor(o, ak, now)
	if t == nil {
		return Update{}, false
	}
	up := Update{TrackID: t.id, NewTrack: t.nObs == 0}
	t.touch(o, recv, now)
	at := sensorclock.Time{UnixNano: recv, SensorNs: o.SensorNs, Clock: o.SensorClock, Source: o.TimeSource}
	if cur, ok := s.alias[ak]; !ok || cur != t.id {
		s.alias[ak] = t.id
	}
	if o.UASID != "" && o.UASID != t.uasID {
		t.uasID = o.UASID
		s.alias[aliasKey{"uas", o.UASID}] = t.id
	}
	t.mergeClaims(o)
	t.mergeMeasurements(o, recv)
	t.mergeSensorClaims(o, recv) // issue 25
	if o.HasCommB && o.ModeSReply && o.Protocol == decode.ADSB {
		applyCommB(t, o, recv)
	}
	applyADSBInfo(t, o, recv) // issue 21
	switch {
	case o.HasPosition:
		up.PositionNew = s.acceptDecoded(t, o, at)
	case o.HasCPR:
		up.PositionNew = s.resolveCPR(t, o, at)
	}
	s.version++
	return up, true
}

// trackFor finds the track an observation belongs to (by its key, or its
// UAS id), or makes one; nil when the observation may not make a track.
func (s *Store) trackFor(o *decode.Observation, ak aliasKey, now int64) *track {
	id, ok := s.alias[ak]
	if !ok && o.UASID != "" {
		id, ok = s.alias[aliasKey{"uas", o.UASID}]
	}
	if !ok && o.UASID != "" && o.Transmitter != "" {
		id, ok = s.rekeyTransmitter(o)
	}
	t := s.tracks[id]
	if ok && t != nil && s.expiredLocked(t, now) {
		s.removeLocked(t)
		t = nil
	}
	if t != nil {
		return t
	}
	if o.ModeSReply {
		// A Mode S reply's address comes from its parity: any corrupted
		// reply yields *some* address, so it may only update an aircraft
		// that announced itself with a CRC-checked squitter.
		s.drop(dropModeSUnknown)
		return nil
	}
	key := trackPrefix(o.Protocol) + o.Key
	t = &track{id: key, firstSeen: o.TimeUnixNano}
	if t.firstSeen == 0 {
		t.firstSeen = now
	}
	s.tracks[key] = t
	return t
}

// rekeyTransmitter: Remote ID frames heard before the Basic ID made a track
// keyed by the transmitter address; now that the UAS id is known, that
// track becomes the UAS id's instead of leaving a twin behind.
func (s *Store) rekeyTransmitter(o *decode.Observation) (string, bool) {
	mid, ok := s.alias[aliasKey{string(o.Protocol), "mac:" + o.Transmitter}]
	if !ok {
		return "", false
	}
	mt := s.tracks[mid]
	if mt == nil || mt.uasID != "" {
		return "", false
	}
	delete(s.tracks, mid)
	mt.id = trackPrefix(o.Protocol) + o.Key
	s.tracks[mt.id] = mt
	for k, v := range s.alias {
		if v == mid {
			s.alias[k] = mt.id
		}
	}
	return mt.id, true
}

// touch counts the observation: protocols, times, sensors, and whether
// the track is simulated (all its observations were).
func (t *track) touch(o *decode.Observation, recv, now int64) {
	t.protocols |= maskOf(o.Protocol)
	t.simulated = o.Simulated && (t.nObs == 0 || t.simulated)
	t.nObs++
	if recv > t.lastSeen {
		t.lastSeen = recv
	}
	if recv < t.firstSeen {
		t.firstSeen = recv
	}
	t.lastUpdate = now
	t.lastSensor = o.Sensor
	t.lastProto = o.Protocol
	t.timeSource = o.TimeSource
	t.addSensor(o.Sensor)
}

// mergeClaims takes the identity claims the observation makes; an absent
// claim keeps the track's.
func (t *track) mergeClaims(o *decode.Observation) {
	setStr := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	setStr(&t.icao, o.ICAO)
	setStr(&t.operatorID, o.OperatorID)
	setStr(&t.callsign, o.Callsign)
	if o.Category != "" {
		t.category, t.categoryKind = o.Category, o.CategoryKind
	}
	setStr(&t.squawk, o.Squawk)
	setStr(&t.emergency, o.Emergency)
	if o.SystemID != 0 {
		t.systemID, t.componentID = o.SystemID, o.ComponentID
	}
}

// ADSBAltitudePriority is how long an ADS-B altitude outranks a Mode S
// reply's (readsb: a lower-priority source does not replace data a better
// one gave less than 15 s before).
const ADSBAltitudePriority = 15 * time.Second

// mergeMeasurements takes altitude, velocity, accuracy, the operator's
// position and the decoder's warnings, of an observation at recv.
func (t *track) mergeMeasurements(o *decode.Observation, recv int64) {
	if o.HasAltitude && t.altitudeFrom(o, recv) {
		t.hasAlt, t.alt, t.altKind = true, o.AltM, o.AltKind
	}
	if o.HasVelocity {
		t.hasVel, t.speed, t.heading, t.vr = true, o.SpeedMps, o.HeadingDeg, o.VRateMps
	}
	if o.HAccuracyM > 0 {
		t.hAcc = float32(o.HAccuracyM)
	}
	if o.VAccuracyM > 0 {
		t.vAcc = float32(o.VAccuracyM)
	}
	if o.HasOperatorPosition {
		t.hasOp, t.opLat, t.opLon = true, o.OperatorLat, o.OperatorLon
	}
	for _, w := range o.Warnings {
		t.addWarning(w)
	}
}

// altitudeFrom reports whether o's altitude may replace the track's: not
// a Mode S reply's while an ADS-B altitude is younger than
// ADSBAltitudePriority. It notes the time of an ADS-B altitude.
func (t *track) altitudeFrom(o *decode.Observation, recv int64) bool {
	if o.Protocol != decode.ADSB {
		return true
	}
	if !o.ModeSReply {
		if t.adsb == nil {
			t.adsb = &adsbState{}
		}
		t.adsb.altT = recv
		return true
	}
	return t.adsb == nil || t.adsb.altT == 0 || recv-t.adsb.altT >= int64(ADSBAltitudePriority)
}

// acceptPosition applies the plausibility check and records a position
// of time at: the time since the last position is measured on the
// receiver's clock when both came from the same clock (issue 30), so a
// burst of frames arriving at once is judged as they were heard.
func (s *Store) acceptPosition(t *track, at sensorclock.Time, lat, lon float64, method string) bool {
	recv := at.UnixNano
	if math.IsNaN(lat) || math.IsNaN(lon) || lat < -90 || lat > 90 || lon < -180 || lon > 180 {
		t.addWarning("position out of range")
		return false
	}
	// Remember what each protocol claims, accepted or not: a claim that
	// disagrees with another protocol's is itself a spoofing indicator.
	if i := protoIndex(t.lastProto); i >= 0 {
		t.protoPos[i].t, t.protoPos[i].lat, t.protoPos[i].lon = recv, lat, lon
	}
	if s.skipPosition(t, at, lat, lon) {
		return false
	}
	if s.implausibleJump(t, at, lat, lon) && !s.reacquire(t, at, lat, lon) {
		t.cpr.rejected++
		// One fixed text (no formatting on this path, which a spoofer
		// can drive at the frame rate), so repeated jumps are one
		// warning and do not evict the track's other warnings.
		t.addWarning("implausible position jump rejected (faster than the plausible maximum speed)")
		return false
	}
	t.hasPos, t.lat, t.lon, t.posMethod, t.posSource = true, lat, lon, method, at.Source
	t.notePosTime(at, lat, lon)
	p := Point{T: recv, Lat: lat, Lon: lon, sensor: t.sensorIndex(t.lastSensor)}
	if t.hasAlt {
		p.Alt, p.HasAlt = float32(t.alt), true
	}
	t.pushHistory(p)
	if len(s.fixFeeds) > 0 {
		s.feedFix(t, p)
	}
	return true
}

// implausibleJump reports whether lat, lon at time at is further from the
// track's last position than the plausible maximum speed covers. The time
// between them is the receiver's when both came from one receiver clock.
func (s *Store) implausibleJump(t *track, at sensorclock.Time, lat, lon float64) bool {
	if !t.hasPos || t.histTotal == 0 {
		return false
	}
	refLat, refLon, since := t.jumpReference(at, &s.links)
	dt := float64(since) / 1e9
	d := gate.Distance(gate.Point{Lat: refLat, Lon: refLon}, gate.Point{Lat: lat, Lon: lon})
	// Allow 1 km of slack for the position quantisation of the protocols
	// and receiver clock jitter.
	return d > 1000 && (dt <= 0 || d/dt > s.cfg.MaxSpeedMps)
}

// skipPosition reports, and counts, a position that is no new fix of t:
// late, or the track's last position again at the same time (another
// receiver's copy of one message timed by the message itself, as Remote
// ID is) or from another receiver within heardAgainNS (its copy of a
// message that carries no time: readsb's duplicate_check, track.c).
func (s *Store) skipPosition(t *track, at sensorclock.Time, lat, lon float64) bool {
	if t.late(at, &s.links) {
		s.skipped[skipOlder]++
		return true
	}
	if !t.hasPos || t.histTotal == 0 {
		return false
	}
	last := t.lastPoint()
	if last.Lat != lat || last.Lon != lon {
		return false
	}
	if last.T == at.UnixNano || last.sensor != 0 && last.sensor != t.sensorIndex(t.lastSensor) && abs64(at.UnixNano-last.T) <= heardAgainNS {
		s.skipped[skipHeardAgain]++
		return true
	}
	return false
}

// late reports whether a position at at is older than the track's last
// accepted one: heard late (a slower receiver, a feeder's buffer after a
// reconnect, another protocol lagging). It is no new fix: the track's
// position is its newest, and history is in time order. A last position
// timed by its arrival was heard some time before that: it makes no
// position timed by a clock since look late.
func (t *track) late(at sensorclock.Time, links *clockLinks) bool {
	return t.hasPos && t.histTotal > 0 && t.posSource != sensorclock.Arrival && t.sinceLastPosition(at, links) < 0
}

// sinceLastPosition is the time from the track's last accepted position
// to at (t.hasPos): by the receiver's clock when both were timed on the
// same epoch of one or on related ones (links), by their UTC times
// otherwise.
func (t *track) sinceLastPosition(at sensorclock.Time, links *clockLinks) int64 {
	last := t.lastPoint()
	if c := t.cpr; c != nil && c.posT.UnixNano == last.T && c.posT.Clock != 0 {
		return links.since(c.posT, at)
	}
	return at.UnixNano - last.T
}

// notePosTime remembers the time of the position just accepted, by
// which the next one's jump is judged, and forgets a reacquire candidate.
func (t *track) notePosTime(at sensorclock.Time, lat, lon float64) {
	if at.Clock != 0 {
		if t.cpr == nil {
			t.cpr = &cprState{} // once per track with a sensor clock
		}
		t.cpr.posT, t.cpr.posSensor, t.cpr.cand = at, t.lastSensor, sensorclock.Time{}
		t.cpr.noteOnClock(at, lat, lon)
	} else if t.cpr != nil {
		t.cpr.posT, t.cpr.posSensor, t.cpr.cand = sensorclock.Time{}, "", sensorclock.Time{}
	}
}

// reacquire reports whether a position refused as a jump from the
// track's last one is taken all the same, because the two were timed on
// different epochs of free-running receiver clocks (the receiver's clock
// was reset: a restart in a replayed recording, a reconnecting feeder
// re-sending its buffer). The time between such positions is not known:
// the clock model anchors a new epoch at an arrival, and in a burst or a
// replay the arrivals are milliseconds apart however long the receiver
// was down, so every later position looked like a jump and the track
// froze. The position is judged instead against the previous one refused
// on its own epoch, by that clock: two that agree are taken. A single
// wild position is never taken, nor a jump on the epoch of the last
// accepted position (the receiver's running clock says how long it
// was), nor one heard by another receiver than the last accepted
// position: a spoofer's two agreeing positions, heard by a second
// receiver of a track the first one holds, are no clock reset. It
// leaves t.cpr allocated.
func (s *Store) reacquire(t *track, at sensorclock.Time, lat, lon float64) bool {
	if t.cpr == nil {
		t.cpr = &cprState{}
	}
	c := t.cpr
	prev, pLat, pLon := c.cand, c.candLat, c.candLon
	c.cand = sensorclock.Time{}
	if at.Source != sensorclock.FromReceiver || at.Clock == 0 || c.posT.Source != sensorclock.FromReceiver || c.posT.Clock == at.Clock ||
		c.posSensor != t.lastSensor {
		return false
	}
	c.cand, c.candLat, c.candLon = at, lat, lon
	if prev.Clock != at.Clock {
		return false
	}
	dt := float64(sensorclock.Since(prev, at)) / 1e9
	d := gate.Distance(gate.Point{Lat: pLat, Lon: pLon}, gate.Point{Lat: lat, Lon: lon})
	return dt > 0 && d/dt <= s.cfg.MaxSpeedMps
}

// acceptDecoded takes a position decoded before fusion (Remote ID,
// MAVLink, SBS input); an aircraft's NIC and Rc, which are only known for
// positions decoded here from CPR, no longer apply (issue 21).
func (s *Store) acceptDecoded(t *track, o *decode.Observation, at sensorclock.Time) bool {
	ok := s.acceptPosition(t, at, o.Lat, o.Lon, o.PositionMethod)
	if ok && t.adsb != nil {
		t.adsb.HasNIC = false
	}
	return ok
}

// resolveCPR turns an ADS-B compact position report into a position:
// global decoding from a fresh even/odd pair (the newest frame decides),
// otherwise local decoding from the aircraft's last good fix.
func (s *Store) resolveCPR(t *track, o *decode.Observation, at sensorclock.Time) bool {
	recv := at.UnixNano
	if t.cpr == nil {
		t.cpr = &cprState{}
	}
	c := t.cpr
	f, ok := s.newCPRFrame(t, o, at)
	if !ok {
		return false
	}
	if o.CPROdd {
		c.odd, c.oddT, c.hasOdd = f, at, true
	} else {
		c.even, c.evenT, c.hasEven = f, at, true
	}
	window := s.cfg.CPRPairWindow.Nanoseconds()
	if c.hasEven && c.hasOdd && abs64(s.links.since(c.evenT, c.oddT)) <= window && c.even.surface == c.odd.surface {
		if lat, lon, err := c.global(o); err == nil && s.acceptFix(t, at, lat, lon, "cpr_global") {
			t.positionFix(o, recv, true)
			return true
		}
	}
	if c.hasFix && s.links.since(c.fixT, at) <= s.cfg.LocalRefMaxAge.Nanoseconds() {
		if lat, lon, err := c.local(o); err == nil && s.acceptFix(t, at, lat, lon, "cpr_local") {
			t.positionFix(o, recv, false)
			return true
		}
	}
	return false
}

// newCPRFrame is o's compact position report as t.cpr keeps it, and
// whether it is new: not another receiver's copy of a report already
// heard, nor late (then not kept for pairing either: the newer frame of
// its parity already is). What is not new is counted.
func (s *Store) newCPRFrame(t *track, o *decode.Observation, at sensorclock.Time) (cprFrame, bool) {
	f := cprFrame{lat: o.CPRLat, lon: o.CPRLon, surface: o.CPRSurface}
	if t.adsb != nil && o.PosTypeCode != 0 {
		f.hasNIC = true
		f.nic, f.rc = t.adsb.frameNIC(o.PosTypeCode, o.NICB)
	}
	if t.cpr.heardAgain(t.id, f, o.CPROdd, o.Sensor, at, &s.links) {
		s.skipped[skipHeardAgain]++
		return f, false
	}
	if t.late(at, &s.links) {
		s.skipped[skipOlder]++
		return f, false
	}
	return f, true
}

// positionFix records the issue 21 state of a position decoded from CPR.
func (t *track) positionFix(o *decode.Observation, recv int64, global bool) {
	if t.adsb != nil {
		t.adsb.positionFix(o, recv, t.cpr, global)
	}
}

// global decodes the even/odd pair, the newest (o) deciding; a surface
// pair needs the last fix as reference.
func (c *cprState) global(o *decode.Observation) (lat, lon float64, err error) {
	even := adsb.CPR{Lat: c.even.lat, Lon: c.even.lon}
	odd := adsb.CPR{Lat: c.odd.lat, Lon: c.odd.lon, Odd: true}
	if !o.CPRSurface {
		return adsb.CPRGlobalAirborne(even, odd, o.CPROdd)
	}
	if !c.hasFix {
		return 0, 0, errNoRef
	}
	return adsb.CPRGlobalSurface(even, odd, o.CPROdd, c.fixLat, c.fixLon)
}

// local decodes o alone against the last fix.
func (c *cprState) local(o *decode.Observation) (lat, lon float64, err error) {
	cur := adsb.CPR{Lat: o.CPRLat, Lon: o.CPRLon, Odd: o.CPROdd}
	if o.CPRSurface {
		return adsb.CPRLocalSurface(cur, c.fixLat, c.fixLon)
	}
	return adsb.CPRLocalAirborne(cur, c.fixLat, c.fixLon)
}

func (s *Store) acceptFix(t *track, at sensorclock.Time, lat, lon float64, method string) bool {
	if !s.acceptPosition(t, at, lat, lon, method) {
		return false
	}
	c := t.cpr
	c.fixT, c.fixLat, c.fixLon, c.hasFix = at, lat, lon, true
	return true
}

type aliasKey struct {
	kind string // a protocol, or "uas" for a Remote ID UAS id
	key  string
}

type constErr string

func (e constErr) Error() string { return string(e) }

const errNoRef = constErr("surface position needs a reference")

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// expiredLocked: no update for TTL on the wall clock, or the data clock
// has moved TTL past the track's last reception.
func (s *Store) expiredLocked(t *track, now int64) bool {
	ttl := s.cfg.TTL.Nanoseconds()
	return now-t.lastUpdate > ttl || s.clocks[t.lastSensor]-t.lastSeen > ttl
}

func (s *Store) removeLocked(t *track) {
	delete(s.tracks, t.id)
	for k, v := range s.alias {
		if v == t.id {
			delete(s.alias, k)
		}
	}
}

// Expire removes expired tracks and returns their ids.
func (s *Store) Expire() []string {
	now := s.cfg.Now().UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone []string
	for id, t := range s.tracks {
		if s.expiredLocked(t, now) {
			gone = append(gone, id)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	set := make(map[string]bool, len(gone))
	for _, id := range gone {
		set[id] = true
		delete(s.tracks, id)
	}
	for k, v := range s.alias {
		if set[v] {
			delete(s.alias, k)
		}
	}
	s.version++
	return gone
}

// Filter selects tracks in List.
type Filter struct {
	Protocol string
	// BBox is min lon, min lat, max lon, max lat; nil for none. A box
	// whose min lon is greater than its max lon crosses the antimeridian
	// (RFC 7946 §5.2): it holds min lon…180 and -180…max lon.
	BBox  *[4]float64
	Limit int
}

// List returns live tracks, most recently seen first.
func (s *Store) List(f Filter) []Track {
	out := s.collect(f, false)
	sort.Slice(out, func(i, j int) bool {
		if !out[i].LastSeen.Equal(out[j].LastSeen) {
			return out[i].LastSeen.After(out[j].LastSeen)
		}
		return out[i].ID < out[j].ID
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out
}

// ListWithHistory is List, unsorted and unlimited, with each track's full
// bounded history, for the evaluator's behaviour features.
func (s *Store) ListWithHistory(f Filter) []Track { return s.collect(f, true) }

// collect snapshots the live tracks that pass f.
func (s *Store) collect(f Filter, withHistory bool) []Track {
	now := s.cfg.Now().UnixNano()
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Track, 0, len(s.tracks))
	for _, t := range s.tracks {
		if s.expiredLocked(t, now) {
			continue
		}
		if f.Protocol != "" && t.protocols&maskOf(decode.Protocol(f.Protocol)) == 0 {
			continue
		}
		if f.BBox != nil && (!t.hasPos || !gate.InBBox(f.BBox, t.lat, t.lon)) {
			continue
		}
		out = append(out, t.snapshot(withHistory))
	}
	return out
}

// Get returns one live track with its full history.
func (s *Store) Get(id string) (Track, bool) {
	now := s.cfg.Now().UnixNano()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if p, k, ok := strings.Cut(id, ":"); ok {
		if real, ok := s.alias[aliasKey{protoOfPrefix(p), k}]; ok {
			id = real
		}
	}
	t, ok := s.tracks[id]
	if !ok || s.expiredLocked(t, now) {
		return Track{}, false
	}
	return t.snapshot(true), true
}

// Len is the number of tracks held (including ones about to expire).
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.tracks)
}

// CountByProtocol counts live tracks per protocol.
func (s *Store) CountByProtocol() map[string]int {
	now := s.cfg.Now().UnixNano()
	out := map[string]int{"adsb": 0, "remoteid": 0, "mavlink": 0, "dji": 0}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, t := range s.tracks {
		if s.expiredLocked(t, now) {
			continue
		}
		for _, p := range t.protocols.list() {
			out[p]++
		}
	}
	return out
}

// Skipped returns the counts of positions that were no new fix of their
// track, by reason: "heard_again" (another receiver's copy of a
// transmission already applied), "older" (older than the track's
// position: heard late).
func (s *Store) Skipped() map[string]uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]uint64, skipReasons)
	for r, n := range s.skipped {
		out[skipReason(r).String()] = n
	}
	return out
}

// RelatedClockPairs is the number of pairs of receiver clocks related by
// position reports both heard and confirmed within linkMaxAgeNS of the
// newest confirmation (cuasd_receiver_clock_pairs).
func (s *Store) RelatedClockPairs() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.links.fresh()
}

// Dropped returns the counts of observations not applied, by reason.
func (s *Store) Dropped() map[string]uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]uint64, len(s.dropped))
	for k, v := range s.dropped {
		out[k] = v
	}
	return out
}

// Version increases with every change; the board uses it to skip idle work.
func (s *Store) Version() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.version
}

func protoOfPrefix(p string) string {
	switch p {
	case "rid":
		return string(decode.RemoteID)
	case "mav":
		return string(decode.MAVLink)
	}
	return p
}

// TrackID normalises a user-supplied id ("adsb:406b90" → "adsb:406B90").
func TrackID(id string) string {
	if strings.HasPrefix(id, "adsb:") {
		return "adsb:" + strings.ToUpper(id[5:])
	}
	return id
}
