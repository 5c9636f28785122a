package alert

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/gate"
)

// Alert states.
const (
	StateOpen     = "open"
	StateUpdate   = "update"
	StateResolved = "resolved"
)

// Message is one state of an alert: the JSON body a webhook receives and
// the MQTT payload.
type Message struct {
	// ID is the alert's stable id: the same for its open, update and
	// resolved messages and for every retry of each.
	ID    string `json:"id"`
	State string `json:"state"`
	// Seq orders the states of one alert (1 for open).
	Seq           int      `json:"seq"`
	Rule          string   `json:"rule"`
	Zone          Zone     `json:"zone"`
	Track         Track    `json:"track"`
	Lambda        float64  `json:"lambda"`
	Decision      string   `json:"decision"`
	Breach        bool     `json:"breach"`
	HumanDecision bool     `json:"human_decision_required"`
	Receipt       *Receipt `json:"receipt,omitempty"`
	AlertType     string   `json:"alert_type"`
	Severity      string   `json:"severity"`
	Title         string   `json:"title"`
	Message       string   `json:"message"`
	// Reason says why this state was sent (breach_started, decision_changed,
	// breach_ended, below_rule, zone_changed, track_lost).
	Reason    string    `json:"reason"`
	OpenedAt  time.Time `json:"opened_at"`
	Timestamp time.Time `json:"timestamp"`
	// Sinks are where the message goes (not part of the body).
	Sinks []string `json:"-"`
}

// Zone names the geofence of an alert.
type Zone struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// Track is what an alert says about its track: identity claims, not
// proven identities.
type Track struct {
	TrackID   string          `json:"track_id"`
	Protocols []string        `json:"protocols"`
	Identity  events.Identity `json:"identity"`
	Lat       float64         `json:"lat"`
	Lon       float64         `json:"lon"`
	AltM      *float64        `json:"alt_m,omitempty"`
	SpeedMps  *float64        `json:"speed_mps,omitempty"`
	SwarmID   string          `json:"swarm_id,omitempty"`
	// Class is what the track is: aircraft, drone or unknown (issue 33).
	Class string `json:"class,omitempty"`
}

// Receipt points at the signed decision record that raised the alert.
type Receipt struct {
	Index int64 `json:"index"`
	// URL fetches the receipt bundle (GET /v1/receipt/{index}).
	URL string `json:"url"`
	// Verify says how to check it offline.
	Verify string `json:"verify"`
}

// Engine is the alert lifecycle: it reads threat, track-lost and swarm
// events and says which alert messages they cause. It does no I/O and is
// not safe for concurrent use.
type Engine struct {
	rules []Rule
	// ReceiptURL makes the URL of a receipt index.
	receiptURL func(int64) string
	open       map[ruleTrack]*openAlert
	lastOpen   map[ruleTrack]time.Time
	swarms     map[string]int
	// Suppressed counts matches that the cooldown kept from opening.
	Suppressed uint64
}

type ruleTrack struct{ rule, track string }

type openAlert struct {
	msg  Message
	rank gate.Decision
	// restored alerts come from the store after a restart; unconfirmed
	// ones are resolved by ResolveUnconfirmed.
	restored bool
}

// NewEngine returns an engine for the rules of c. receiptURL makes the
// fetch URL of a receipt index.
func NewEngine(c *Config, receiptURL func(int64) string) *Engine {
	if receiptURL == nil {
		receiptURL = func(i int64) string { return "/v1/receipt/" + strconv.FormatInt(i, 10) }
	}
	return &Engine{rules: c.Rules, receiptURL: receiptURL, open: map[ruleTrack]*openAlert{},
		lastOpen: map[ruleTrack]time.Time{}, swarms: map[string]int{}}
}

// Threat applies a recorded gate decision.
func (e *Engine) Threat(ev *events.ThreatEvent) []Message {
	var out []Message
	t := &ev.Threat
	d, _ := ParseDecision(t.Decision)
	for i := range e.rules {
		r := &e.rules[i]
		k := ruleTrack{r.Name, t.TrackID}
		match := e.matches(r, t, d)
		st := e.open[k]
		switch {
		case st != nil && !match:
			out = append(out, e.resolve(k, st, ev.Time, resolveReason(st, t, ev.Reason), t))
		case st != nil && st.msg.Zone.ID != t.Geofence:
			out = append(out, e.resolve(k, st, ev.Time, "zone_changed", t))
		case st != nil && d > st.rank:
			st.rank, st.restored = d, false
			out = append(out, e.next(st, StateUpdate, ev.Reason, ev.Time, t))
		case st != nil:
			st.restored = false // still matching: confirmed
		case st == nil && match:
			// A breach that starts always pages (issue 33: every breach
			// alerts); the gate holds a breach for its dwell after the
			// track leaves, so breach_started cannot repeat faster.
			if last, ok := e.lastOpen[k]; ok && ev.Time.Sub(last) < r.CooldownD && ev.Reason != "breach_started" {
				e.Suppressed++
				continue
			}
			out = append(out, e.openAlert(k, r, d, ev, t))
		}
	}
	return out
}

func resolveReason(st *openAlert, t *events.Threat, reason string) string {
	switch {
	case reason == "breach_ended":
		return reason
	case t.Geofence != st.msg.Zone.ID:
		return "zone_changed"
	}
	return "below_rule"
}

// matches says whether rule r matches threat t with decision d.
func (e *Engine) matches(r *Rule, t *events.Threat, d gate.Decision) bool {
	if t.Geofence == "" || d < r.Min || t.Lambda < r.MinLambda || (r.Breach && !t.Breach) {
		return false
	}
	if len(r.Zones) > 0 && !slices.Contains(r.Zones, t.Geofence) {
		return false
	}
	if len(r.Protocols) > 0 && !slices.ContainsFunc(t.Protocols, func(p string) bool { return slices.Contains(r.Protocols, p) }) {
		return false
	}
	if r.SwarmMin > 0 && (t.SwarmID == "" || e.swarms[t.SwarmID] < r.SwarmMin) {
		return false
	}
	return matchesClaims(r, t)
}

// matchesClaims applies a rule's class and multilateration filters
// (issues 33 and 31).
func matchesClaims(r *Rule, t *events.Threat) bool {
	if len(r.Classes) > 0 && !slices.Contains(r.Classes, classOf(t)) {
		return false
	}
	return len(r.Verification) == 0 || slices.Contains(r.Verification, t.Verification)
}

// classOf is the threat's class; a threat event from a cuasd before issue
// 33 says none, and is unknown.
func classOf(t *events.Threat) string {
	if t.Class == "" {
		return string(gate.TrackUnknown)
	}
	return t.Class
}

func (e *Engine) openAlert(k ruleTrack, r *Rule, d gate.Decision, ev *events.ThreatEvent, t *events.Threat) Message {
	e.lastOpen[k] = ev.Time
	st := &openAlert{rank: d, msg: Message{
		ID: alertID(r.Name, t.TrackID, ev.Time), Rule: r.Name, Zone: Zone{ID: t.Geofence, Name: t.GeofenceName},
		HumanDecision: true, AlertType: alertType(r), OpenedAt: ev.Time.UTC(), Sinks: r.Sinks,
	}}
	e.open[k] = st
	return e.next(st, StateOpen, ev.Reason, ev.Time, t)
}

// next fills st's message from t as its next state.
func (e *Engine) next(st *openAlert, state, reason string, now time.Time, t *events.Threat) Message {
	m := &st.msg
	m.Seq++
	m.State, m.Reason, m.Timestamp = state, reason, now.UTC()
	if t != nil {
		m.Track = Track{TrackID: t.TrackID, Protocols: t.Protocols, Identity: t.Identity, Lat: t.Lat, Lon: t.Lon,
			AltM: t.AltM, SpeedMps: t.SpeedMps, SwarmID: t.SwarmID, Class: classOf(t)}
		m.Lambda, m.Decision, m.Breach = t.Lambda, t.Decision, t.Breach
		if t.ReceiptIndex != nil {
			m.Receipt = &Receipt{Index: *t.ReceiptIndex, URL: e.receiptURL(*t.ReceiptIndex),
				Verify: "fetch the url and run: cuasd verify BUNDLE.json --pubkey KEY.pem (key: GET /v1/receipt/keys)"}
		}
	}
	m.Severity = severity(st.rank)
	m.Title, m.Message = describe(m)
	out := *m
	out.Track.Protocols = append([]string{}, m.Track.Protocols...)
	return out
}

func (e *Engine) resolve(k ruleTrack, st *openAlert, now time.Time, reason string, t *events.Threat) Message {
	delete(e.open, k)
	if t != nil && t.Geofence != st.msg.Zone.ID {
		t = nil // keep the alert's own zone and last position in the zone
	}
	return e.next(st, StateResolved, reason, now, t)
}

// TrackLost resolves every open alert of a track that is no longer seen.
func (e *Engine) TrackLost(trackID string, now time.Time) []Message {
	var out []Message
	for k, st := range e.open {
		if k.track == trackID {
			out = append(out, e.resolve(k, st, now, "track_lost", nil))
		}
	}
	slices.SortFunc(out, func(a, b Message) int { return strings.Compare(a.Rule, b.Rule) })
	return out
}

// Restore takes up the alerts a previous process left open (the latest
// state of each alert in the store): they stay open, keep their ids and
// cooldowns, and are updated or resolved like any other. An alert whose
// track the new process never confirms (the gate records a decision for
// every notable track when it first sees it) is resolved by
// ResolveUnconfirmed. Alerts of rules no longer in the file are ignored.
func (e *Engine) Restore(latest []Message) {
	for _, m := range latest {
		r := e.rule(m.Rule)
		if r == nil {
			continue
		}
		k := ruleTrack{m.Rule, m.Track.TrackID}
		if last, ok := e.lastOpen[k]; !ok || m.OpenedAt.After(last) {
			e.lastOpen[k] = m.OpenedAt
		}
		if m.State == StateResolved {
			continue
		}
		d, _ := ParseDecision(m.Decision)
		m.Sinks = r.Sinks
		e.open[k] = &openAlert{msg: m, rank: d, restored: true}
	}
}

// ResolveUnconfirmed resolves the restored alerts that no threat event
// has confirmed since Restore (reason "not_seen_after_restart").
func (e *Engine) ResolveUnconfirmed(now time.Time) []Message {
	var out []Message
	for k, st := range e.open {
		if st.restored {
			out = append(out, e.resolve(k, st, now, "not_seen_after_restart", nil))
		}
	}
	slices.SortFunc(out, func(a, b Message) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Swarm notes a swarm's size (for swarm_min).
func (e *Engine) Swarm(ev *events.SwarmEvent) {
	if ev.Type == events.TypeSwarmGone {
		delete(e.swarms, ev.Swarm.ID)
		return
	}
	e.swarms[ev.Swarm.ID] = ev.Swarm.Size
}

// Prune forgets cooldowns that ended before now, so the engine's memory is
// bounded by the alerts of the last cooldown.
func (e *Engine) Prune(now time.Time) {
	for k, t := range e.lastOpen {
		if r := e.rule(k.rule); r == nil || now.Sub(t) >= r.CooldownD {
			if _, open := e.open[k]; !open {
				delete(e.lastOpen, k)
			}
		}
	}
}

func (e *Engine) rule(name string) *Rule {
	for i := range e.rules {
		if e.rules[i].Name == name {
			return &e.rules[i]
		}
	}
	return nil
}

// Open returns the open alerts' latest messages.
func (e *Engine) Open() []Message {
	out := make([]Message, 0, len(e.open))
	for _, st := range e.open {
		out = append(out, st.msg)
	}
	slices.SortFunc(out, func(a, b Message) int { return a.OpenedAt.Compare(b.OpenedAt) })
	return out
}

// alertID is stable for a rule, track and opening time, so that several
// instances that see the same event name the alert alike (and JetStream
// de-duplicates what they publish).
func alertID(rule, track string, t time.Time) string {
	h := sha256.Sum256([]byte(rule + "\x00" + track + "\x00" + strconv.FormatInt(t.UnixNano(), 10)))
	return "al-" + hex.EncodeToString(h[:10])
}

func alertType(r *Rule) string {
	if r.SwarmMin > 0 {
		return "uas_swarm"
	}
	if r.Breach {
		return "uas_zone_breach"
	}
	return "uas_threat"
}

func severity(d gate.Decision) string {
	switch d {
	case gate.InterceptRecommended:
		return "critical"
	case gate.Alert:
		return "warning"
	}
	return "info"
}

// describe writes the title and the one human sentence of a message.
func describe(m *Message) (title, sentence string) {
	zone := m.Zone.Name
	if zone == "" {
		zone = m.Zone.ID
	}
	who := m.Track.TrackID
	if id := m.Track.Identity; id.UASID != "" {
		who += " (UAS " + id.UASID + ")"
	} else if id.Callsign != "" {
		who += " (" + id.Callsign + ")"
	}
	where := "near"
	if m.Breach {
		where = "inside"
	}
	// The track's class names it (issue 33): an airliner on its approach
	// is an aircraft, not a drone.
	class := gate.TrackClass(m.Track.Class)
	if _, ok := gate.ParseTrackClass(m.Track.Class); !ok {
		class = gate.TrackUnknown
	}
	noun := class.Noun()
	switch m.State {
	case StateResolved:
		return "Resolved: " + noun + " at " + zone, fmt.Sprintf("Alert %s on %s resolved (%s).", m.ID, who, strings.ReplaceAll(m.Reason, "_", " "))
	case StateUpdate:
		title = "Escalated: " + noun + " at " + zone
	default:
		title = upperFirst(noun) + " at " + zone
	}
	alt := ""
	if m.Track.AltM != nil {
		alt = fmt.Sprintf(" at %.0f m", *m.Track.AltM)
	}
	return title, fmt.Sprintf("%s %s is %s %s%s; Λ %.2f, decision %s; a human decides what to do.",
		upperFirst(noun), who, where, zone, alt, m.Lambda, m.Decision)
}

// upperFirst capitalises the first letter of an ASCII word.
func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
