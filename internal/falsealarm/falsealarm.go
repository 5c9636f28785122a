// Package falsealarm runs the false-alarm scenarios of issue 33
// (sim.FalseAlarmSet) through cuasd's own pipeline on a simulated clock —
// the decoders, fusion, the continuous gate with its hysteresis, the
// drone-database classifier and the alert engine with a rule file — and
// measures what an operator would live with: decision changes per track,
// pages a human would call false, the time from a breach to its page, and
// breaches never paged. Time is the scenario's: an hour of traffic runs in
// seconds, and no figure depends on the machine's speed.
package falsealarm

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/worker"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/fusion/zones"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/gate/board"
	"github.com/cuasd/cuasd/ledger"
	"github.com/cuasd/cuasd/output/alert"
	"github.com/cuasd/cuasd/reference"
	"github.com/cuasd/cuasd/sim"
)

// READMERule is the README's example alert rule (issue 33): pages on
// drones and unknowns at alert or above in the demo site's zone.
const READMERule = `sinks:
  - {name: hook, webhook: "https://example.org/cuas"}
rules:
  - {name: demo-breach, zones: [demo-site], classes: [drone, unknown], min_decision: alert, cooldown: 60s, sinks: [hook]}
`

// Options tune a run; the zero Options is cuasd's defaults with the
// README's rule.
type Options struct {
	// Policy is the gate's policy (zero: gate.DefaultPolicy).
	Policy gate.Policy
	// Rules is the alert rule file (empty: READMERule).
	Rules string
	// Sensor names the simulated receiver ("demo", as in serve --demo).
	Sensor string
}

// Actor is what the gate and the alert engine made of one actor.
type Actor struct {
	Name    string
	TrackID string
	Expect  sim.Expect
	// Class is the class the gate gave the track last (empty: never
	// evaluated).
	Class string
	// Tracked is how long the track was on the board.
	Tracked time.Duration
	// Changes counts changes of the held decision (the threat events'
	// decision), RawChanges changes of the sweeps' own decision: what the
	// operator would have seen without hysteresis.
	Changes, RawChanges int
	// MaxChangesPerMinute is the most held changes in any 60 s.
	MaxChangesPerMinute int
	// Pages counts alerts opened on the track.
	Pages int
	// Breaches counts entries into the zone (true path, while
	// broadcasting); BreachToPage the time from each to its page (an
	// alert already open counts as 0), Missed those with no page within
	// the breach.
	Breaches     int
	BreachToPage []time.Duration
	Missed       int
	// BreachToRecord is the time from each breach to the gate's receipt
	// saying so (breach_started, or a first evaluation in breach).
	BreachToRecord []time.Duration

	changeTimes []time.Time
	inside      bool
	breachAt    []time.Time
	unrecorded  []time.Time
	rawLast     gate.Decision
	rawSeen     bool
	onBoard     bool
	open        bool
}

// Result is one scenario's run.
type Result struct {
	Scenario string
	Duration time.Duration
	Actors   []*Actor
}

// run is the state of one scenario's run.
type run struct {
	opt     Options
	clk     time.Time
	store   *fusion.Store
	gate    *board.Gate
	engine  *alert.Engine
	events  *capture
	world   *sim.World
	zone    gate.Geofence
	actors  []*Actor
	byTrack map[string]*Actor
	states  []sim.ActorState
	dec     decoders
}

type decoders struct {
	adsb *worker.ADSB
	rid  *worker.RemoteID
	mav  *worker.MAVLink
	obs  []decode.Observation
}

// Run runs one scenario.
func Run(sc sim.Scenario, opt Options) (*Result, error) {
	r, err := newRun(sc, opt)
	if err != nil {
		return nil, err
	}
	start := r.clk
	end := start.Add(sc.Duration)
	const tick, sweep = 100 * time.Millisecond, 500 * time.Millisecond
	out := map[string][][]byte{}
	last := start
	for r.clk.Before(end) {
		r.clk = r.clk.Add(tick)
		for k := range out {
			out[k] = out[k][:0]
		}
		r.world.Step(r.clk, tick, out)
		r.ingest(out)
		r.truth()
		if r.clk.Sub(last) >= sweep {
			last = r.clk
			r.sweep()
		}
	}
	for _, a := range r.actors {
		a.finish()
	}
	return &Result{Scenario: sc.Name, Duration: sc.Duration, Actors: r.actors}, nil
}

func newRun(sc sim.Scenario, opt Options) (*run, error) {
	if opt.Rules == "" {
		opt.Rules = READMERule
	}
	if opt.Sensor == "" {
		opt.Sensor = "demo"
	}
	rules, err := alert.Parse("rules.yaml", []byte(opt.Rules))
	if err != nil {
		return nil, err
	}
	db, err := reference.Default()
	if err != nil {
		return nil, err
	}
	mav, err := worker.NewMAVLink(nil)
	if err != nil {
		return nil, err
	}
	r := &run{opt: opt, clk: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC), events: &capture{},
		engine: alert.NewEngine(rules, nil), byTrack: map[string]*Actor{},
		dec: decoders{adsb: &worker.ADSB{}, rid: worker.NewRemoteID(), mav: mav}}
	now := func() time.Time { return r.clk }
	cfg := sc.Config
	if cfg.ZoneRadiusM <= 0 {
		cfg.ZoneRadiusM = 1500
	}
	lat, lon := cfg.CenterLat, cfg.CenterLon
	if lat == 0 && lon == 0 {
		lat, lon = sim.DemoSite[0], sim.DemoSite[1]
	}
	// The zone serve --demo protects (cmd/cuasd demoGeofences).
	r.zone = gate.Geofence{ID: "demo-site", Name: "Schiphol (demo)", Class: gate.ClassAirport, Center: []float64{lat, lon}, RadiusM: cfg.ZoneRadiusM}
	snap := &zones.Snapshot{Geofences: []gate.Geofence{r.zone}, Allow: gate.NewAllowIndex(gate.AllowList{})}
	r.store = fusion.NewStore(fusion.Config{Now: now})
	r.gate = board.New(board.Config{Store: r.store, Zones: func() *zones.Snapshot { return snap }, Classify: board.Classifier(db),
		Ledger: &nullLedger{}, Policy: opt.Policy, Events: r.events, Now: now,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, nil)
	r.world = sim.NewWorld(cfg, r.clk)
	r.states = r.world.Actors()
	for i := range r.states {
		s := &r.states[i]
		a := &Actor{Name: s.Actor.Name, TrackID: s.TrackID(opt.Sensor), Expect: s.Actor.Expect}
		r.actors = append(r.actors, a)
		r.byTrack[a.TrackID] = a
	}
	return r, nil
}

// ingest decodes one tick's frames into the store, as the decoder stage
// does.
func (r *run) ingest(out map[string][][]byte) {
	meta := worker.Meta{Sensor: r.opt.Sensor, RecvUnixNano: r.clk.UnixNano(), IngestUnixNano: r.clk.UnixNano()}
	d := &r.dec
	d.obs = d.obs[:0]
	for p, frames := range out {
		var fd worker.FrameDecoder
		switch p {
		case "adsb":
			fd = d.adsb
		case "remoteid":
			fd = d.rid
		case "mavlink":
			fd = d.mav
		default:
			continue
		}
		for _, f := range frames {
			n := len(d.obs)
			var err error
			if d.obs, err = fd.Decode(f, meta, d.obs); err != nil {
				d.obs = d.obs[:n]
				continue
			}
			worker.Stamp(d.obs[n:], fd.Protocol(), meta)
		}
	}
	r.store.ApplyBatch(d.obs)
}

// truth notes when each actor enters the zone, by its true path.
func (r *run) truth() {
	r.states = r.world.Actors()
	c := gate.Point{Lat: r.zone.Center[0], Lon: r.zone.Center[1]}
	for i := range r.states {
		s, a := &r.states[i], r.actors[i]
		in := s.OnAir && gate.Distance(c, gate.Point{Lat: s.Lat, Lon: s.Lon}) <= r.zone.RadiusM
		if in && !a.inside {
			a.Breaches++
			a.unrecorded = append(a.unrecorded, r.clk)
			a.breachAt = append(a.breachAt, r.clk)
			if a.open {
				a.BreachToPage = append(a.BreachToPage, 0)
				a.breachAt = a.breachAt[:len(a.breachAt)-1]
			}
		}
		if !in && a.inside {
			a.Missed += len(a.breachAt) // the breach ended before any page
			a.breachAt = nil
		}
		a.inside = in
	}
}

// sweep runs the gate once, records its receipts and feeds its events to
// the alert engine.
func (r *run) sweep() {
	ctx := context.Background()
	r.store.Expire()
	r.gate.Sweep(ctx)
	r.gate.RecordQueued(ctx)
	for _, a := range r.actors {
		a.onBoard = false
	}
	for _, e := range r.gate.Snapshot().Entries {
		a := r.byTrack[e.Track.ID]
		if a == nil {
			continue
		}
		a.onBoard, a.Class = true, string(e.Class)
		a.Tracked += 500 * time.Millisecond
		if a.rawSeen && e.RawDecision != a.rawLast {
			a.RawChanges++
		}
		a.rawLast, a.rawSeen = e.RawDecision, true
	}
	for _, m := range r.events.drain() {
		r.event(m)
	}
}

// event applies one published event.
func (r *run) event(data []byte) {
	h, err := events.Peek(data)
	if err != nil {
		return
	}
	var msgs []alert.Message
	switch h.Type {
	case events.TypeThreat:
		var ev events.ThreatEvent
		if json.Unmarshal(data, &ev) != nil {
			return
		}
		if a := r.byTrack[ev.Threat.TrackID]; a != nil {
			a.threat(&ev, r.clk)
		}
		msgs = r.engine.Threat(&ev)
	case events.TypeTrackLost:
		var ev events.TrackEvent
		if json.Unmarshal(data, &ev) != nil {
			return
		}
		msgs = r.engine.TrackLost(ev.Track.TrackID, ev.Time)
	case events.TypeSwarmFormed, events.TypeSwarmChanged, events.TypeSwarmGone:
		var ev events.SwarmEvent
		if json.Unmarshal(data, &ev) == nil {
			r.engine.Swarm(&ev)
		}
	}
	for i := range msgs {
		r.alert(&msgs[i])
	}
}

// threat notes a recorded decision of the actor's track at now: a change
// of the held decision, and a breach recorded.
func (a *Actor) threat(ev *events.ThreatEvent, now time.Time) {
	if ev.Reason != "first_evaluation" && ev.Threat.Decision != ev.PreviousDecision {
		a.Changes++
		a.changeTimes = append(a.changeTimes, ev.Time)
	}
	if ev.Threat.Breach && (ev.Reason == "breach_started" || ev.Reason == "first_evaluation") {
		for _, b := range a.unrecorded {
			a.BreachToRecord = append(a.BreachToRecord, now.Sub(b))
		}
		a.unrecorded = nil
	}
}

// alert notes an alert message: an opening is a page.
func (r *run) alert(m *alert.Message) {
	a := r.byTrack[m.Track.TrackID]
	if a == nil {
		return
	}
	switch m.State {
	case alert.StateOpen:
		a.Pages++
		a.open = true
		for _, b := range a.breachAt {
			a.BreachToPage = append(a.BreachToPage, r.clk.Sub(b))
		}
		a.breachAt = nil
	case alert.StateResolved:
		a.open = false
	}
}

// finish counts breaches still unpaged at the end and the densest minute
// of changes.
func (a *Actor) finish() {
	a.Missed += len(a.breachAt)
	for i := range a.changeTimes {
		n := 0
		for j := i; j < len(a.changeTimes) && a.changeTimes[j].Sub(a.changeTimes[i]) < time.Minute; j++ {
			n++
		}
		a.MaxChangesPerMinute = max(a.MaxChangesPerMinute, n)
	}
}

// capture keeps the events the gate publishes until the run reads them.
type capture struct{ msgs [][]byte }

func (c *capture) Publish(_ string, data []byte) error {
	c.msgs = append(c.msgs, append([]byte(nil), data...))
	return nil
}

func (c *capture) drain() [][]byte {
	m := c.msgs
	c.msgs = nil
	return m
}

// nullLedger numbers receipts without keeping them.
type nullLedger struct{ n uint64 }

func (l *nullLedger) Append(context.Context, string, string, json.RawMessage) (ledger.Receipt, error) {
	l.n++
	return ledger.Receipt{Index: l.n - 1}, nil
}

// PreIssueRule is the README's rule before issue 33: no classes, so
// aircraft page too.
const PreIssueRule = `sinks:
  - {name: hook, webhook: "https://example.org/cuas"}
rules:
  - {name: demo-breach, zones: [demo-site], min_decision: alert, cooldown: 60s, sinks: [hook]}
`

// NoHysteresis is the default policy with the margins and the dwell
// turned off: the gate as it was before issue 33.
func NoHysteresis() gate.Policy {
	p := gate.DefaultPolicy()
	p.AlertFallMargin, p.InterceptFallMargin, p.MinHoldS = 1e-9, 1e-9, 1e-9
	return p
}

// RunSet runs every scenario of sim.FalseAlarmSet(seed) and summarises
// each.
func RunSet(seed uint64, opt Options) ([]Summary, []*Result, error) {
	var ss []Summary
	var rs []*Result
	for _, sc := range sim.FalseAlarmSet(seed) {
		r, err := Run(sc, opt)
		if err != nil {
			return nil, nil, err
		}
		ss = append(ss, r.Summarize())
		rs = append(rs, r)
	}
	return ss, rs, nil
}
