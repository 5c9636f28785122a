package board

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/fusion"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/fusion/swarm"
	"github.com/cuasd/cuasd/fusion/zones"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/ledger"
)

// Appender records a gate decision durably and returns its receipt (the
// ledger's Append).
type Appender interface {
	Append(ctx context.Context, subject, predicateType string, record json.RawMessage) (ledger.Receipt, error)
}

// Config wires the board.
type Config struct {
	Store *fusion.Store
	// Zones returns the current geofences and allow-list (nil: none).
	Zones func() *zones.Snapshot
	// Classify returns the drone-database side of a track ("" unknown).
	Classify func(t *fusion.Track) gate.Side
	// Ledger records decision changes; nil records nothing (and the board
	// says so: entries carry no receipt).
	Ledger Appender
	// Owns, when set, says whether this instance records the decisions of
	// a track (see Owners); nil records every track's.
	Owns   func(trackID string) bool
	Policy gate.Policy
	// Interval between evaluation sweeps (default 500 ms).
	Interval time.Duration
	// StaleAfter is the board age (time since the last sweep began) past
	// which the board calls itself stale (default DefaultStaleAfter or
	// four intervals, whichever is longer). An unchanged picture is
	// re-swept every 2 s, so a healthy board is never older than that
	// plus one sweep.
	StaleAfter time.Duration
	// StaleWhile, when not nil, marks the board stale while it returns
	// true, whatever its age: for example while a store is below its
	// free-space low mark, so that decisions cannot be recorded and
	// intake is refused (issue 32).
	StaleWhile func() bool
	// Swarm is the proximity rule of swarm detection.
	Swarm   swarm.Options
	Version string
	// Events receives the JSON events (package events) of what this
	// instance owns; nil publishes none.
	Events Publisher
	// Instance names this instance in events (--instance).
	Instance string
	Log      *slog.Logger
	Now      func() time.Time
}

// Entry is one row of the threat board: a live track evaluated against its
// most severe geofence.
type Entry struct {
	Track       fusion.Track
	Result      gate.Result
	Geofence    gate.Geofence
	HasGeofence bool
	SwarmID     string
	SwarmSize   int
	Allow       gate.AllowStatus
	Side        gate.Side
	// Class is what the track is: aircraft, drone or unknown (classOf).
	Class gate.TrackClass
	// RawDecision and RawBreach are this sweep's own decision and breach.
	// Result.Decision and Result.Breach are the held ones (gate.Held,
	// issue 33): what the board shows, the events say and the receipts
	// record, so a track whose Λ wavers does not flap.
	RawDecision gate.Decision
	RawBreach   bool
	// HeldSince is when the held decision was entered.
	HeldSince time.Time
	// ReceiptIndex is the ledger index of the latest receipt for this
	// track's decision, -1 while none is recorded.
	ReceiptIndex int64
}

// Snapshot is an immutable board, sorted by Λ descending.
type Snapshot struct {
	Entries   []Entry
	Generated time.Time
	Version   uint64
	// Zones is the number of geofences evaluated against.
	Zones int
}

// Gate evaluates every live track against every geofence on a fixed
// cadence, keeps the sorted threat board, and records a receipt whenever a
// track's decision changes or a breach starts or ends.
type Gate struct {
	cfg  Config
	snap atomic.Pointer[Snapshot]

	mu   sync.Mutex
	subs map[chan struct{}]struct{}

	// state per track: the last recorded decision and breach, and the
	// receipt index of that record.
	state map[string]*decisionState
	queue chan receiptJob

	ann *announcer

	evaluations prometheus.Counter
	receipts    *prometheus.CounterVec
	sweep       prometheus.Histogram
	lastSweep   prometheus.Gauge
	overruns    prometheus.Counter
}

// DefaultStaleAfter is the default of Config.StaleAfter.
const DefaultStaleAfter = 5 * time.Second

type decisionState struct {
	// held is the track's decision and breach under the policy's
	// hysteresis; held.Seen() is false until its first evaluation.
	held gate.Held
	// owned is whether this instance recorded the track's decisions at the
	// last evaluation (see Config.Owns).
	owned   bool
	receipt atomic.Int64
}

type receiptJob struct {
	st      *decisionState
	record  json.RawMessage
	trackID string
	// reason, previous and threat are what the threat event says once the
	// receipt is recorded.
	reason   string
	previous string
	threat   events.Threat
}

// New returns a board; Run starts it.
func New(cfg Config, reg prometheus.Registerer) *Gate {
	if cfg.Interval <= 0 {
		cfg.Interval = 500 * time.Millisecond
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Policy == (gate.Policy{}) {
		cfg.Policy = gate.DefaultPolicy()
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = max(DefaultStaleAfter, 4*cfg.Interval)
	}
	b := &Gate{
		cfg: cfg, subs: map[chan struct{}]struct{}{}, state: map[string]*decisionState{},
		queue: make(chan receiptJob, 4096),
		evaluations: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cuasd_gate_evaluations_total", Help: "Track-against-geofence evaluations of the continuous gate.",
		}),
		receipts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_gate_receipts_total", Help: "Decision receipts of the continuous gate, by outcome (recorded, failed, dropped).",
		}, []string{"outcome"}),
		sweep: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "cuasd_gate_sweep_seconds", Help: "Time to evaluate every live track against every geofence once.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}),
	}
	for _, o := range []string{"recorded", "failed", "dropped"} {
		b.receipts.WithLabelValues(o) // present at 0: increase() alerts see the first failure
	}
	b.registerSweepMetrics(reg)
	b.snap.Store(&Snapshot{Generated: cfg.Now()})
	if cfg.Events != nil {
		b.ann = newAnnouncer(cfg.Events, cfg.Instance, cfg.Owns, cfg.Log, reg)
	}
	return b
}

// registerSweepMetrics creates the sweep's health metrics and registers
// them with the others: duration, lag and overruns are what show a gate
// falling behind while the board still answers.
func (b *Gate) registerSweepMetrics(reg prometheus.Registerer) {
	b.lastSweep = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "cuasd_gate_sweep_last_seconds", Help: "Duration of the latest sweep of the continuous gate.",
	})
	b.overruns = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "cuasd_gate_sweep_overruns_total", Help: "Sweeps that took longer than the evaluation interval.",
	})
	lag := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "cuasd_gate_sweep_lag_seconds",
		Help: "Age of the threat board: time since the latest published sweep began.",
	}, func() float64 { return b.Lag().Seconds() })
	stale := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "cuasd_gate_board_stale", Help: "1 while the threat board is older than its stale threshold.",
	}, func() float64 {
		if b.Stale() {
			return 1
		}
		return 0
	})
	if reg != nil {
		reg.MustRegister(b.evaluations, b.receipts, b.sweep, b.lastSweep, b.overruns, lag, stale)
	}
}

// Lag is the age of the board: how long ago the latest published sweep
// began.
func (b *Gate) Lag() time.Duration { return max(0, b.cfg.Now().Sub(b.Snapshot().Generated)) }

// Stale reports whether the board is older than Config.StaleAfter (or
// Config.StaleWhile holds).
func (b *Gate) Stale() bool { _, stale := b.Staleness(); return stale }

// Staleness is Lag and Stale at once, for the API's answer.
func (b *Gate) Staleness() (time.Duration, bool) {
	lag := b.Lag()
	return lag, lag > b.cfg.StaleAfter || (b.cfg.StaleWhile != nil && b.cfg.StaleWhile())
}

// StaleAfter is the threshold Stale uses.
func (b *Gate) StaleAfter() time.Duration { return b.cfg.StaleAfter }

// Snapshot returns the current board.
func (b *Gate) Snapshot() *Snapshot { return b.snap.Load() }

// Subscribe returns a channel that receives a signal after every sweep
// that changed the board, and a function to unsubscribe.
func (b *Gate) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	b.subs[ch] = struct{}{}
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		delete(b.subs, ch)
		b.mu.Unlock()
	}
}

// Run sweeps until ctx ends.
func (b *Gate) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.recordLoop(ctx)
	}()
	t := time.NewTicker(b.cfg.Interval)
	defer t.Stop()
	var last uint64
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return nil
		case <-t.C:
		}
		// Re-evaluate when the tracks changed, and at least every 2 s
		// because freshness changes with time alone.
		v := b.cfg.Store.Version()
		if v == last && time.Since(b.Snapshot().Generated) < 2*time.Second {
			continue
		}
		last = v
		b.Sweep(ctx)
	}
}

// Sweep evaluates every live track once, publishes the new board and
// announces what changed (package events).
func (b *Gate) Sweep(ctx context.Context) {
	start := time.Now()
	now := b.cfg.Now()
	tracks := b.cfg.Store.ListWithHistory(fusion.Filter{})
	var zs *zones.Snapshot
	if b.cfg.Zones != nil {
		zs = b.cfg.Zones()
	}
	var geofences []gate.Geofence
	var allow *gate.AllowIndex
	if zs != nil {
		geofences, allow = zs.Geofences, zs.Allow
	}
	swarmOf := b.swarms(tracks)
	idx := newZoneIndex(zoneBoxes(geofences))
	entries := make([]Entry, 0, len(tracks))
	for i := range tracks {
		if !tracks[i].HasPosition {
			continue
		}
		// Evaluated in its place in entries (cap len(tracks)): an Entry is
		// kilobytes (the track, its result and zone), and one evaluated
		// aside and handed to track by pointer was a heap copy of each,
		// every sweep (half the sweep's allocations).
		entries = entries[:len(entries)+1]
		e := &entries[len(entries)-1]
		b.evaluate(e, &tracks[i], swarmOf[i], geofences, idx, allow, now)
		e.ReceiptIndex = b.track(ctx, e, now)
	}
	b.forgetExpired(entries)
	sort.Slice(entries, func(i, j int) bool {
		a, c := &entries[i], &entries[j]
		if a.Result.Lambda.Score != c.Result.Lambda.Score {
			return a.Result.Lambda.Score > c.Result.Lambda.Score
		}
		return a.Track.ID < c.Track.ID
	})
	prev := b.Snapshot()
	snap := &Snapshot{Entries: entries, Generated: now, Version: prev.Version + 1, Zones: len(geofences)}
	b.snap.Store(snap)
	took := time.Since(start)
	b.sweep.Observe(took.Seconds())
	b.lastSweep.Set(took.Seconds())
	if took > b.cfg.Interval {
		b.overruns.Inc()
	}
	b.notify()
	if b.ann != nil {
		b.ann.sweep(now, tracks, snap, geofences)
	}
}

// swarmMembership is a track's swarm: the size of its proximity component,
// and the swarm's id when the component is large enough to be a swarm.
type swarmMembership struct {
	id   string
	size int
}

// swarms groups the positioned tracks into components of the proximity
// graph (swarm.Groups: grid + union-find). The result is indexed like
// tracks; unpositioned tracks stay zero. A swarm's id is "swarm-" and its
// smallest member id, so that it stays the same from sweep to sweep while
// that member stays in it.
func (b *Gate) swarms(tracks []fusion.Track) []swarmMembership {
	st := make([]swarm.Track, 0, len(tracks))
	idx := make([]int, 0, len(tracks))
	for i := range tracks {
		if tracks[i].HasPosition {
			st = append(st, tracks[i].SwarmTrack())
			idx = append(idx, i)
		}
	}
	groups := swarm.Groups(st, b.cfg.Swarm, nil)
	minSize := b.cfg.Swarm.MinSize
	if minSize <= 0 {
		minSize = 3
	}
	smallest := make(map[int32]string)
	for k := range st {
		c := groups.Comp[k]
		if int(groups.Size[k]) >= minSize && (smallest[c] == "" || st[k].ID < smallest[c]) {
			smallest[c] = st[k].ID
		}
	}
	out := make([]swarmMembership, len(tracks))
	for k, i := range idx {
		out[i].size = int(groups.Size[k])
		if id := smallest[groups.Comp[k]]; id != "" {
			out[i].id = "swarm-" + id
		}
	}
	return out
}

// evaluate scores one positioned track against the zones that can matter
// to it and writes its board entry into e (most severe zone first: a breach,
// then the higher Λ).
func (b *Gate) evaluate(e *Entry, t *fusion.Track, sw swarmMembership, geofences []gate.Geofence, idx *zoneIndex, allow *gate.AllowIndex, now time.Time) {
	samples := samplesOf(t)
	in := b.input(t, samples, now)
	if allow != nil && in.HasIdentity {
		in.Allow, _ = allow.Match(in.Identity)
	}
	in.SwarmSize, in.HasSwarm = sw.size, true
	*e = Entry{Track: *t, SwarmID: sw.id, SwarmSize: sw.size, Allow: in.Allow, Side: in.Side, ReceiptIndex: -1}
	var res gate.Result
	for _, z := range idx.candidates(t.Lat, t.Lon) {
		g := &geofences[z]
		bx := &idx.boxes[z]
		in.Behaviour.DwellNearS = gate.DwellNearWithin(samples, g, 0.5*bx.scale, bx.centre, bx.scale)
		gate.EvaluateInto(&res, &in, g, &b.cfg.Policy)
		b.evaluations.Inc()
		if !e.HasGeofence || better(&res, &e.Result) {
			e.Result, e.Geofence, e.HasGeofence = res, *g, true
		}
	}
	if !e.HasGeofence {
		// No zone configured: there is nothing to protect, so the track is
		// listed without a score rather than scored against an invented
		// zone (which could recommend an intercept).
		e.Result = gate.Result{Decision: gate.Monitor, HumanDecisionRequired: true}
	}
	e.Class = classOf(t, &e.Result, &b.cfg.Policy)
}

// classOf is what the track is (gate.TrackClass): a track whose signal
// integrity is known and below the policy's min_integrity is unknown,
// whatever it claims (a spoofer claims what it likes); otherwise Remote
// ID, DJI DroneID and MAVLink are drones, as is an ADS-B emitter of
// category B6 (unmanned aerial vehicle); any other ADS-B track is an
// aircraft, and a track with none of these claims is unknown.
func classOf(t *fusion.Track, r *gate.Result, policy *gate.Policy) gate.TrackClass {
	integ := &r.Lambda.Axes[gate.AxisSignalIntegrity]
	minInteg := policy.MinIntegrity
	if minInteg == 0 {
		minInteg = gate.DefaultPolicy().MinIntegrity
	}
	if integ.Known && integ.Value < minInteg {
		return gate.TrackUnknown
	}
	adsb := false
	for _, p := range t.Protocols {
		switch decode.Protocol(p) {
		case decode.RemoteID, decode.DJI, decode.MAVLink:
			return gate.TrackDrone
		case decode.ADSB:
			adsb = true
		}
	}
	switch {
	case adsb && t.CategoryKind == decode.CategoryEmitter && t.Category == "B6":
		return gate.TrackDrone
	case adsb:
		return gate.TrackAircraft
	}
	return gate.TrackUnknown
}

// forgetExpired drops the decision state of tracks no longer on the board.
func (b *Gate) forgetExpired(entries []Entry) {
	live := make(map[string]bool, len(entries))
	for i := range entries {
		live[entries[i].Track.ID] = true
	}
	for id := range b.state {
		if !live[id] {
			delete(b.state, id)
		}
	}
}

// notify signals the subscribers that the board changed.
func (b *Gate) notify() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// better reports whether r is more severe than cur: a breach beats no
// breach, then the higher Λ.
func better(r, cur *gate.Result) bool {
	if r.Breach != cur.Breach {
		return r.Breach
	}
	return r.Lambda.Score > cur.Lambda.Score
}

func samplesOf(t *fusion.Track) []gate.Sample {
	out := make([]gate.Sample, len(t.History))
	for i, p := range t.History {
		out[i] = gate.Sample{UnixNano: p.T, Lat: p.Lat, Lon: p.Lon}
	}
	return out
}

// input translates a track into the gate's input.
func (b *Gate) input(t *fusion.Track, samples []gate.Sample, now time.Time) gate.Input {
	in := gate.Input{ID: t.ID, Lat: t.Lat, Lon: t.Lon}
	if t.HasAltitude {
		in.AltM, in.HasAlt = t.AltM, true
	}
	if t.HasVelocity {
		in.SpeedMps, in.HasSpeed = t.SpeedMps, true
		in.HeadingDeg, in.HasHeading = t.HeadingDeg, true
		in.VRateMps, in.HasVRate = t.VRateMps, true
	}
	in.Identity = gate.Identity{UASID: t.UASID, ICAO: t.ICAO, OperatorID: t.OperatorID}
	in.HasIdentity = t.UASID != "" || t.ICAO != "" || t.OperatorID != ""
	if b.cfg.Classify != nil {
		in.Side = b.cfg.Classify(t)
	}
	if len(samples) >= 2 {
		in.Behaviour, in.HasBehaviour = gate.Features(samples), true
	}
	in.Sensors, in.Protocols, in.HasCorroboration = len(t.Sensors), len(t.Protocols), true
	in.Compliance = gate.Compliance{RemoteID: slices.Contains(t.Protocols, "remoteid"), OperatorLocation: t.HasOperator,
		Emergency: t.Emergency != "" && t.Emergency != "none" && t.Emergency != "no_emergency"}
	in.HasCompliance = true
	in.Integrity, in.HasIntegrity = gate.Integrity{Warnings: t.Warnings, CrossProtocolDisagreementM: t.DisagreementM}, true
	if v := t.Verification; v != nil && v.Status == "contradicted" {
		in.Integrity.MLATContradictionM, in.Integrity.MLATResidualM = v.DistanceM, v.ResidualM
	}
	age := now.Sub(t.LastSeen).Seconds()
	if age < 0 {
		age = 0
	}
	in.EvidenceAgeS, in.HasEvidenceAge = age, true
	return in
}

// track compares an entry with the track's last recorded decision and
// queues a receipt when the decision changed or a breach started or ended.
// It returns the receipt index to show (-1: none yet).
func (b *Gate) track(ctx context.Context, e *Entry, now time.Time) int64 {
	id := e.Track.ID
	st := b.state[id]
	owns := b.cfg.Owns == nil || b.cfg.Owns(id)
	reason := ""
	if st == nil {
		st = &decisionState{}
		st.receipt.Store(-1)
		b.state[id] = st
	}
	before := st.held
	e.RawDecision, e.RawBreach = e.Result.Decision, e.Result.Breach
	st.held.Update(&e.Result, now.UnixNano(), &b.cfg.Policy)
	e.Result.Decision, e.Result.Breach = st.held.Decision, st.held.Breach
	e.HeldSince = time.Unix(0, st.held.Since)
	reason = recordReason(&before, e, owns, st.owned)
	st.owned = owns
	prev := before.Decision
	if reason == "" || b.cfg.Ledger == nil || !e.HasGeofence || !owns {
		return st.receipt.Load()
	}
	rec, err := b.record(e, reason, prev, now)
	if err != nil {
		b.cfg.Log.Error("board: encode decision record", "track", id, "err", err)
		return st.receipt.Load()
	}
	select {
	case b.queue <- receiptJob{st: st, record: rec, trackID: id, reason: reason, previous: prev.String(), threat: e.Threat(true)}:
	default:
		b.receipts.WithLabelValues("dropped").Inc()
		b.cfg.Log.Error("board: receipt queue full; decision not recorded", "track", id, "reason", reason)
	}
	return st.receipt.Load()
}

// recordReason says why the entry's held decision must be recorded, or ""
// when nothing changed since the last record (before is the track's held
// state then, owned whether this instance recorded it): a first evaluation above
// monitor, a breach that started or ended, a new decision, or a track this
// instance has just taken over (its partition's previous owner died or a
// hand-over is under way, so the state found is the new owner's starting
// point).
func recordReason(before *gate.Held, e *Entry, owns, owned bool) string {
	notable := e.Result.Decision != gate.Monitor || e.Result.Breach
	switch {
	case !before.Seen():
		if notable {
			return "first_evaluation"
		}
	case e.Result.Breach != before.Breach:
		if e.Result.Breach {
			return "breach_started"
		}
		return "breach_ended"
	case e.Result.Decision != before.Decision:
		return "decision_changed"
	}
	if owns && !owned && notable && before.Seen() {
		return "ownership_acquired"
	}
	return ""
}

func (b *Gate) recordLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			// Record what is already queued: these decisions were made.
			b.RecordQueued(context.Background())
			return
		case j := <-b.queue:
			b.append(ctx, j)
		}
	}
}

// RecordQueued records every receipt the sweeps have queued and announces
// their threat events, on the caller's goroutine. It is for a caller that
// sweeps the gate on a clock of its own instead of calling Run (the
// false-alarm scenarios run hours of traffic in seconds), so that each
// sweep's decisions are recorded, in order, before the next sweep.
func (b *Gate) RecordQueued(ctx context.Context) {
	for {
		select {
		case j := <-b.queue:
			b.append(ctx, j)
		default:
			return
		}
	}
}

func (b *Gate) append(ctx context.Context, j receiptJob) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, err := b.cfg.Ledger.Append(ctx, "track:"+j.trackID, ledger.PredicateTypeGateDecision, j.record)
	if err != nil {
		b.receipts.WithLabelValues("failed").Inc()
		b.cfg.Log.Error("board: ledger append failed", "track", j.trackID, "err", err)
		if b.ann != nil {
			// The decision stands though its receipt failed: announce it
			// without a receipt index rather than stay silent.
			b.ann.threat(b.cfg.Now(), &j)
		}
		return
	}
	b.receipts.WithLabelValues("recorded").Inc()
	j.st.receipt.Store(int64(r.Index))
	if b.ann != nil {
		j.threat.ReceiptIndex = fusion.Ptr(int64(r.Index))
		b.ann.threat(b.cfg.Now(), &j)
	}
}

// record is the decision record of a continuous evaluation (the same
// gate.DecisionRecord as a requested evaluation's): the claims it rested
// on, the zone by reference, the result with its 13 axes and caps, and why
// it was recorded.
func (b *Gate) record(e *Entry, reason string, prev gate.Decision, now time.Time) (json.RawMessage, error) {
	rec := gate.NewDecisionRecord(gate.RecordContinuous, &e.Result, b.cfg.Version, now)
	rec.Reason, rec.PreviousDecision = reason, prev.String()
	rec.RawDecision, rec.RawBreach = &e.RawDecision, &e.RawBreach
	rec.HeldSince = e.HeldSince.UTC().Format(time.RFC3339Nano)
	rec.Class = string(e.Class)
	rec.Track = recordTrackOf(e)
	rec.Geofence = refOf(&e.Geofence)
	return json.Marshal(rec)
}

// recordTrack is what a continuous decision rested on: the live track's
// claims, its swarm and the drone database's side.
type recordTrack struct {
	ID         string    `json:"id"`
	Protocols  []string  `json:"protocols"`
	ICAO       string    `json:"icao,omitempty"`
	UASID      string    `json:"uas_id,omitempty"`
	OperatorID string    `json:"operator_id,omitempty"`
	Lat        float64   `json:"lat"`
	Lon        float64   `json:"lon"`
	AltM       *float64  `json:"alt_m,omitempty"`
	SpeedMps   float64   `json:"speed_mps"`
	HeadingDeg float64   `json:"heading_deg"`
	Sensors    []string  `json:"sensors"`
	LastSeen   time.Time `json:"last_seen"`
	Warnings   []string  `json:"warnings,omitempty"`
	SwarmSize  int       `json:"swarm_size"`
	Side       string    `json:"side"`
}

func recordTrackOf(e *Entry) recordTrack {
	t := &e.Track
	r := recordTrack{ID: t.ID, Protocols: t.Protocols, ICAO: t.ICAO, UASID: t.UASID, OperatorID: t.OperatorID,
		Lat: t.Lat, Lon: t.Lon, SpeedMps: t.SpeedMps, HeadingDeg: t.HeadingDeg, Sensors: t.Sensors,
		LastSeen: t.LastSeen, Warnings: t.Warnings, SwarmSize: e.SwarmSize, Side: string(e.Side)}
	if t.HasAltitude {
		r.AltM = fusion.Ptr(t.AltM)
	}
	return r
}

// zoneRef names the zone of a decision record by id and content digest
// rather than embedding it: a polygon can be large (a record must stay
// under the ledger's 64 KiB), and fusion/zones keeps every version under
// its digest, so the record stays verifiable against the exact zone.
type zoneRef struct {
	ID     string     `json:"id"`
	Name   string     `json:"name,omitempty"`
	Class  gate.Class `json:"class,omitempty"`
	SHA256 string     `json:"sha256"`
}

func refOf(g *gate.Geofence) zoneRef {
	return zoneRef{ID: g.ID, Name: g.Name, Class: g.Class, SHA256: g.Digest()}
}

// zoneBox is a geofence's bounding box widened by the distance beyond which
// it cannot be the most severe zone for a track: max(20 km, 20 × the zone's
// proximity scale), in degrees.
type zoneBox struct {
	s, w, n, e float64
	// centre and scale are the zone's Centre and ScaleM, computed once a
	// sweep: for a polygon each costs a pass over its positions.
	centre gate.Point
	scale  float64
	cv     [3]float64 // centre as a unit vector
}

func zoneBoxes(zs []gate.Geofence) []zoneBox {
	out := make([]zoneBox, len(zs))
	for i := range zs {
		s, w, n, e := zs[i].Bounds()
		m := math.Max(20000, 20*zs[i].ScaleM())
		dLat := m / 111_320
		lat := math.Max(math.Abs(s), math.Abs(n))
		dLon := 360.0
		if c := math.Cos(math.Min(lat+dLat, 89.9) * math.Pi / 180); c > 0 {
			dLon = math.Min(360, dLat/c)
		}
		c := zs[i].Centre()
		x, y, z := unitVec(c.Lat, c.Lon)
		out[i] = zoneBox{s - dLat, w - dLon, n + dLat, e + dLon, c, zs[i].ScaleM(), [3]float64{x, y, z}}
	}
	return out
}

// candidateZones is the spatial prefilter of the continuous gate by a
// linear scan: the zones whose widened box holds the track, or, when none
// does, the zone with the nearest centre (every track is still scored
// against one zone). The sweep uses zoneIndex, which answers the same
// without visiting every zone; this is its reference.
func candidateZones(boxes []zoneBox, zs []gate.Geofence, lat, lon float64) []int {
	var out []int
	for i := range boxes {
		if boxes[i].contains(lat, lon) {
			out = append(out, i)
		}
	}
	if len(out) > 0 || len(zs) == 0 {
		return out
	}
	return []int{nearestCentre(boxes, lat, lon)}
}

// contains reports whether the widened box holds (lat, lon).
func (b *zoneBox) contains(lat, lon float64) bool {
	inLon := (b.w <= lon && lon <= b.e) || b.e-b.w >= 360 || (b.w < -180 && lon >= b.w+360) || (b.e > 180 && lon <= b.e-360)
	return lat >= b.s && lat <= b.n && inLon
}

// nearestCentre is the index of the box whose zone centre is nearest:
// the largest dot product of unit vectors, three multiplications a zone
// instead of a haversine (a track far from every zone visits them all).
func nearestCentre(boxes []zoneBox, lat, lon float64) int {
	px, py, pz := unitVec(lat, lon)
	best, bestDot := 0, math.Inf(-1)
	for i := range boxes {
		c := &boxes[i].cv
		if d := px*c[0] + py*c[1] + pz*c[2]; d > bestDot {
			best, bestDot = i, d
		}
	}
	return best
}

func unitVec(lat, lon float64) (x, y, z float64) {
	sφ, cφ := math.Sincos(lat * math.Pi / 180)
	sλ, cλ := math.Sincos(lon * math.Pi / 180)
	return cφ * cλ, cφ * sλ, sφ
}

// ErrNoEvents is returned by FeedTracks of a gate that announces no events
// (Config.Events nil).
var ErrNoEvents = errors.New("board: the gate announces no events")

// FeedTracks calls fn, on the sweep's goroutine, with every track event
// the gate builds (output.TrackFeed): those it publishes on NATS and, while
// a feed listens, those of the tracks another instance owns, which it
// follows at the same cadence without publishing them. fn must not keep
// ev.
func (b *Gate) FeedTracks(fn func(subject string, ev *events.TrackEvent)) (stop func(), err error) {
	if b.ann == nil {
		return nil, ErrNoEvents
	}
	return b.ann.addFeed(fn), nil
}
