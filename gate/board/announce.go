package board

import (
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/gate"
)

// Publisher sends one event on a subject; *nats.Conn is one (core NATS:
// a publish never waits for a consumer). Publish must not keep data after
// it returns (nats.Conn copies it into its write buffer): the board reuses
// the buffer.
type Publisher interface {
	Publish(subject string, data []byte) error
}

// announcer turns what each sweep found into events (package events):
// track updates, at most once per events.MinInterval per track and again
// every events.KeepAlive, and a final track.lost; swarms formed, changed
// and dissolved; zones added, changed, deleted and re-announced every
// events.ZoneRepeat. Threat events are published by the receipt loop, once
// a decision is recorded. It only announces what this instance owns, so
// that several instances announce each thing once.
type announcer struct {
	pub      Publisher
	instance string
	owns     func(id string) bool
	log      *slog.Logger

	tracks     map[string]*announced
	swarms     map[string][]string // id → sorted members
	zones      map[string][32]byte // id → content hash
	zoneRepeat time.Time

	published *prometheus.CounterVec
	// unannounced counts positions no published track event carried,
	// unfed those no fed one carried (see unannounced).
	unannounced, unfed prometheus.Counter
	// buf holds a track event while it is published; only the sweep
	// writes track events, and Publish copies what it sends.
	buf []byte
	// feeds are the in-process consumers of the typed track events
	// (Gate.FeedTracks), replaced whole under feedMu when one comes or
	// goes, read by the sweep without a lock.
	feedMu sync.Mutex
	feeds  atomic.Pointer[[]*trackFeed]
}

// trackFeed is one Gate.FeedTracks consumer.
type trackFeed struct {
	fn func(subject string, ev *events.TrackEvent)
}

// announced is what was last said about a track.
type announced struct {
	at    time.Time
	obs   uint64
	state assessState // to notice a change of assessment
	view  events.Track
	// lastPoint is the receive time (Unix ns) of the newest position the
	// track's events carried, so that the next event carries only newer ones.
	lastPoint int64
	// positions is the track's fusion.Track.Positions at that event.
	positions uint64
	// owned is whether this instance published that event on NATS; a
	// track another instance owns is followed only while a feed listens.
	owned bool
	// fedPoint and fedPositions are lastPoint and positions of the
	// newest event handed to the feeds, which may be newer than the
	// newest published (see feedPositions).
	fedPoint     int64
	fedPositions uint64
}

// eventKinds label cuasd_events_published_total.
var eventKinds = []string{"track", "threat", "swarm", "zone"}

func newAnnouncer(pub Publisher, instance string, owns func(string) bool, log *slog.Logger, reg prometheus.Registerer) *announcer {
	a := &announcer{
		pub: pub, instance: instance, owns: owns, log: log,
		tracks: map[string]*announced{}, swarms: map[string][]string{}, zones: map[string][32]byte{},
		published: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_events_published_total",
			Help: "JSON events published on NATS (cuas.track, cuas.threat, cuas.swarm, cuas.zone), by kind and result (ok, error).",
		}, []string{"kind", "result"}),
		unannounced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cuasd_track_positions_unannounced_total",
			Help: "Position fixes of tracks this instance publishes that no track event on NATS carried: more arrived between two of a track's events (at most one a second) than its 32-position history holds. A consumer of cuas.track.> never saw them (cuasd's own history recorder is fed in process: see cuasd_track_positions_unfed_total).",
		}),
		unfed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cuasd_track_positions_unfed_total",
			Help: "Position fixes no track event handed to the in-process feed (the CoT sinks; the history recorder takes fusion's accepted fixes instead) carried: more than a track's 32-position history arrived after the feed's previous event of the track, before a sweep of the gate handed them over (a steady rate above 64 a second at the default 500 ms sweeps, or a burst).",
		}),
	}
	for _, k := range eventKinds {
		a.published.WithLabelValues(k, "ok")
		a.published.WithLabelValues(k, "error")
	}
	if reg != nil {
		reg.MustRegister(a.published, a.unannounced, a.unfed)
	}
	if a.owns == nil {
		a.owns = func(string) bool { return true }
	}
	return a
}

func (a *announcer) header(typ string, now time.Time) events.Header {
	return events.Header{V: events.Version, Type: typ, Time: now.UTC(), Instance: a.instance}
}

// send marshals and publishes one event.
func (a *announcer) send(kind, subject string, ev any) {
	data, err := json.Marshal(ev)
	if err == nil {
		err = a.pub.Publish(subject, data)
	}
	if err != nil {
		a.published.WithLabelValues(kind, "error").Inc()
		a.log.Warn("publish event", "subject", subject, "err", err)
		return
	}
	a.published.WithLabelValues(kind, "ok").Inc()
}

// sendTrack encodes and publishes one track event. Track events are the
// one event of every live track about once a second: they are encoded by
// hand (events.TrackEvent.AppendJSON, byte for byte encoding/json's
// output) into a reused buffer, a third of encoding/json's time and no
// allocation.
func (a *announcer) sendTrack(subject string, ev *events.TrackEvent) {
	var err error
	a.buf, err = ev.AppendJSON(a.buf[:0])
	if err == nil {
		err = a.pub.Publish(subject, a.buf)
	}
	if err != nil {
		a.published.WithLabelValues("track", "error").Inc()
		a.log.Warn("publish event", "subject", subject, "err", err)
		return
	}
	a.published.WithLabelValues("track", "ok").Inc()
}

// sweep announces the results of one sweep.
func (a *announcer) sweep(now time.Time, tracks []fusion.Track, snap *Snapshot, geofences []gate.Geofence) {
	byID := make(map[string]*Entry, len(snap.Entries))
	for i := range snap.Entries {
		byID[snap.Entries[i].Track.ID] = &snap.Entries[i]
	}
	a.announceTracks(now, tracks, byID)
	a.announceSwarms(now, tracks, snap.Entries)
	a.announceZones(now, geofences)
}

// trackSubject is the subject of a track's events.
func trackSubject(id string) (protocol, key string) {
	p, key, ok := decode.SplitTrackID(id)
	if !ok {
		if i := strings.IndexByte(id, ':'); i > 0 {
			return id[:i], id[i+1:]
		}
		return "other", id
	}
	return string(p), key
}

// addFeed registers fn for every track event (Gate.FeedTracks).
func (a *announcer) addFeed(fn func(string, *events.TrackEvent)) (stop func()) {
	f := &trackFeed{fn: fn}
	a.setFeeds(func(fs []*trackFeed) []*trackFeed { return append(fs, f) })
	var once sync.Once
	return func() {
		once.Do(func() {
			a.setFeeds(func(fs []*trackFeed) []*trackFeed {
				return slices.DeleteFunc(fs, func(g *trackFeed) bool { return g == f })
			})
		})
	}
}

// setFeeds replaces the feeds by edit of a copy of them.
func (a *announcer) setFeeds(edit func([]*trackFeed) []*trackFeed) {
	a.feedMu.Lock()
	defer a.feedMu.Unlock()
	var fs []*trackFeed
	if p := a.feeds.Load(); p != nil {
		fs = slices.Clone(*p)
	}
	fs = edit(fs)
	a.feeds.Store(&fs)
}

// feed hands a track event to the feeds.
func feed(fs []*trackFeed, subject string, ev *events.TrackEvent) {
	for _, f := range fs {
		f.fn(subject, ev)
	}
}

// announceTracks announces each track whose event is due, and the tracks
// lost since the previous sweep.
func (a *announcer) announceTracks(now time.Time, tracks []fusion.Track, byID map[string]*Entry) {
	var fs []*trackFeed
	if p := a.feeds.Load(); p != nil {
		fs = *p
	}
	live := make(map[string]bool, len(tracks))
	for i := range tracks {
		t := &tracks[i]
		live[t.ID] = true
		owned := a.owns(t.ID)
		if !owned && len(fs) == 0 {
			delete(a.tracks, t.ID) // another instance announces it now
			continue
		}
		e := byID[t.ID]
		st, state, due := a.due(now, t, e, owned)
		switch {
		case due:
			a.announceTrack(now, t, e, st, state, owned, fs)
		case len(fs) > 0 && t.Positions-st.fedPositions >= fusion.HistoryLen/2:
			a.feedPositions(now, t, e, st, fs)
		}
	}
	a.announceLost(now, live, fs)
}

// due says whether a track's event is due: on a change of its
// observations or assessment at most once per events.MinInterval, else
// every events.KeepAlive. It returns what was last said of the track (nil
// for a track new to this instance, or taken over from another, which is
// announced as new) and the track's assessment state.
func (a *announcer) due(now time.Time, t *fusion.Track, e *Entry, owned bool) (*announced, assessState, bool) {
	var state assessState
	if e != nil {
		state = assessState{evaluated: true, decision: e.Result.Decision, breach: e.Result.Breach, swarm: e.SwarmID}
	}
	st := a.tracks[t.ID]
	if st != nil && owned && !st.owned {
		st = nil
	}
	if st == nil {
		return nil, state, true
	}
	changed := st.obs != t.Observations || st.state != state
	since := now.Sub(st.at)
	return st, state, changed && since >= events.MinInterval || since >= events.KeepAlive
}

// announceLost announces the loss of every track announced before that
// is not live: on NATS when this instance owned it, to the feeds always.
func (a *announcer) announceLost(now time.Time, live map[string]bool, fs []*trackFeed) {
	for id, st := range a.tracks {
		if live[id] {
			continue
		}
		p, k := trackSubject(id)
		subject, ev := bus.TrackSubject(p, k), &events.TrackEvent{Header: a.header(events.TypeTrackLost, now), Track: st.view}
		if st.owned {
			a.sendTrack(subject, ev)
		}
		feed(fs, subject, ev)
		delete(a.tracks, id)
	}
}

// assessState is what of a track's assessment makes a new track event
// due: whether it was evaluated, its decision, breach and swarm. Compared
// on every sweep for every track, it is built without allocating.
type assessState struct {
	evaluated bool
	decision  gate.Decision
	breach    bool
	swarm     string
}

// announceTrack builds a track's event, with the positions received since
// its previous one (st, nil for a track not announced before), publishes
// it when this instance owns the track, hands it to the feeds, and
// remembers what it said.
func (a *announcer) announceTrack(now time.Time, t *fusion.Track, e *Entry, st *announced, state assessState, owned bool, fs []*trackFeed) {
	var as *events.Assessment
	if e != nil {
		as = e.Assessment()
	}
	prev := a.tracks[t.ID] // st, or when taken over what the feeds were given
	var after int64
	if st != nil {
		after = st.lastPoint
	}
	view, last := newPositions(t, after)
	if st != nil && owned { // counted once on a cluster: by the instance that publishes the track
		a.unannounced.Add(float64(unannounced(st.positions, t.Positions, len(view.History))))
	}
	p, k := trackSubject(t.ID)
	subject, ev := bus.TrackSubject(p, k), &events.TrackEvent{Header: a.header(events.TypeTrackUpdate, now), Track: view, Assessment: as}
	if owned {
		a.sendTrack(subject, ev)
	}
	fedPoint := a.feedEvent(fs, subject, ev, prev, t.Positions, last)
	view.History = nil
	if prev == nil {
		prev = &announced{}
		a.tracks[t.ID] = prev
	}
	*prev = announced{at: now, obs: t.Observations, state: state, view: view, lastPoint: last, positions: t.Positions, owned: owned,
		fedPoint: fedPoint, fedPositions: t.Positions}
}

// feedEvent hands ev to the feeds without the positions they were given
// before (prev's, nil for a track new to them), counts the positions
// that fell out of the ring before any fed event carried them, and
// returns the time of the newest position the feeds have (last, that of
// ev's newest, or a newer one fed before).
func (a *announcer) feedEvent(fs []*trackFeed, subject string, ev *events.TrackEvent, prev *announced, positions uint64, last int64) int64 {
	var fedAfter int64
	if prev != nil {
		fedAfter = prev.fedPoint
	}
	if len(fs) == 0 {
		return max(last, fedAfter)
	}
	ev.Track.History = pointsAfter(ev.Track.History, fedAfter)
	feed(fs, subject, ev)
	if prev != nil {
		a.unfed.Add(float64(unannounced(prev.fedPositions, positions, len(ev.Track.History))))
	}
	return max(last, fedAfter)
}

// feedPositions hands the feeds, between two of a track's events, the
// positions it received since the newest event they had, before the ring
// that holds them (fusion.HistoryLen) overflows: events come at most once
// a second, a MAVLink autopilot may send 50 positions a second, and the
// history recorder is to keep every one. Sweeps (every 500 ms) call it
// once half the ring is new, so at a steady rate the feeds miss none up
// to 64 a second (a burst of more than 32 after the feed's last event of
// the track loses the oldest, counted in unfed). Nothing is published:
// NATS subscribers get the usual events.
func (a *announcer) feedPositions(now time.Time, t *fusion.Track, e *Entry, st *announced, fs []*trackFeed) {
	var as *events.Assessment
	if e != nil {
		as = e.Assessment()
	}
	view, last := newPositions(t, st.fedPoint)
	p, k := trackSubject(t.ID)
	feed(fs, bus.TrackSubject(p, k), &events.TrackEvent{Header: a.header(events.TypeTrackUpdate, now), Track: view, Assessment: as})
	a.unfed.Add(float64(unannounced(st.fedPositions, t.Positions, len(view.History))))
	st.fedPoint, st.fedPositions = last, t.Positions
}

// pointsAfter is the points of pts (time order) received after after
// (Unix ns).
func pointsAfter(pts []events.Point, after int64) []events.Point {
	i := 0
	for i < len(pts) && pts[i].T.UnixNano() <= after {
		i++
	}
	return pts[i:]
}

// newPositions is the track's view with, as its history, the positions
// received after the Unix-ns time after (every one it holds for a track
// not announced before), and the time of its newest position. Events are
// at most one a second while positions come faster (ADS-B: two a second),
// so this is how an output such as the history recorder hears every fix.
func newPositions(t *fusion.Track, after int64) (events.Track, int64) {
	view := t.ViewAfter(after)
	last := after
	for _, p := range t.History {
		last = max(last, p.T)
	}
	return view, last
}

// unannounced is how many positions a track received between two of its
// events (its Positions count then and now) that the new event does not
// carry (it carries carried): they fell out of the track's ring before the
// event. Not counted for a track's first event from this instance, whose
// earlier positions another instance may have announced.
func unannounced(before, now uint64, carried int) uint64 {
	if now < before || now-before <= uint64(carried) {
		return 0
	}
	return now - before - uint64(carried)
}

// announceSwarms compares this sweep's swarms with the last one's.
func (a *announcer) announceSwarms(now time.Time, tracks []fusion.Track, entries []Entry) {
	cur := map[string][]string{}
	pos := map[string][2]float64{}
	for i := range entries {
		if id := entries[i].SwarmID; id != "" {
			cur[id] = append(cur[id], entries[i].Track.ID)
			p := pos[id]
			pos[id] = [2]float64{p[0] + entries[i].Track.Lat, p[1] + entries[i].Track.Lon}
		}
	}
	for id, members := range cur {
		sort.Strings(members)
		prev, seen := a.swarms[id]
		if seen && slices.Equal(prev, members) {
			continue
		}
		a.swarms[id] = members
		typ := events.TypeSwarmChanged
		if !seen {
			typ = events.TypeSwarmFormed
		}
		n := float64(len(members))
		a.sendSwarm(now, typ, events.Swarm{ID: id, Members: members, Size: len(members),
			Lat: fusion.Round(pos[id][0]/n, 6), Lon: fusion.Round(pos[id][1]/n, 6)})
	}
	for id, members := range a.swarms {
		if _, ok := cur[id]; !ok {
			delete(a.swarms, id)
			a.sendSwarm(now, events.TypeSwarmGone, events.Swarm{ID: id, Members: members, Size: len(members)})
		}
	}
}

func (a *announcer) sendSwarm(now time.Time, typ string, s events.Swarm) {
	// The swarm's id carries its smallest member's id: its owner speaks.
	if !a.owns(strings.TrimPrefix(s.ID, "swarm-")) {
		return
	}
	a.send("swarm", bus.SwarmSubject, events.SwarmEvent{Header: a.header(typ, now), Swarm: s})
}

// announceZones says which zones were added, changed or deleted since the
// last sweep, and every zone again every events.ZoneRepeat.
func (a *announcer) announceZones(now time.Time, geofences []gate.Geofence) {
	repeat := now.Sub(a.zoneRepeat) >= events.ZoneRepeat
	if repeat {
		a.zoneRepeat = now
	}
	seen := make(map[string]bool, len(geofences))
	for i := range geofences {
		g := &geofences[i]
		seen[g.ID] = true
		h := zoneHash(g)
		if old, ok := a.zones[g.ID]; ok && old == h && !repeat {
			continue
		}
		a.zones[g.ID] = h
		if a.owns("zone:" + g.ID) {
			a.send("zone", bus.ZoneSubject(g.ID), events.ZoneEvent{Header: a.header(events.TypeZoneUpsert, now), Zone: *g})
		}
	}
	for id := range a.zones {
		if seen[id] {
			continue
		}
		delete(a.zones, id)
		if a.owns("zone:" + id) {
			a.send("zone", bus.ZoneSubject(id), events.ZoneEvent{Header: a.header(events.TypeZoneDeleted, now), Zone: gate.Geofence{ID: id}})
		}
	}
}

// zoneHash is the SHA-256 of a zone's JSON, to notice a change.
func zoneHash(g *gate.Geofence) [32]byte {
	b, _ := json.Marshal(g)
	return sha256.Sum256(b)
}

// threat announces a recorded decision.
func (a *announcer) threat(now time.Time, j *receiptJob) {
	p, k := trackSubject(j.trackID)
	a.send("threat", bus.ThreatSubject(p, k), events.ThreatEvent{Header: a.header(events.TypeThreat, now),
		Reason: j.reason, PreviousDecision: j.previous, Threat: j.threat})
}
