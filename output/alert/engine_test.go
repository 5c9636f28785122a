package alert

import (
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/events"
)

var t0 = time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)

func testEngine(t *testing.T, yaml string) *Engine {
	t.Helper()
	c, err := Parse("t.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return NewEngine(c, nil)
}

const oneRule = "sinks: [{name: h, webhook: 'http://x/'}]\nrules:\n  - name: r\n    zones: [z]\n    cooldown: 60s\n    sinks: [h]\n"

func threat(at time.Duration, track, zone, decision string, breach bool, receipt int64) *events.ThreatEvent {
	return &events.ThreatEvent{Header: events.Header{V: 1, Type: events.TypeThreat, Time: t0.Add(at)}, Reason: "decision_changed",
		Threat: events.Threat{TrackID: track, Protocols: []string{"remoteid"}, Geofence: zone, GeofenceName: "Zone " + zone,
			Decision: decision, Lambda: 0.7, Breach: breach, ReceiptIndex: &receipt}}
}

func states(ms []Message) (s []string) {
	for _, m := range ms {
		s = append(s, m.State)
	}
	return s
}

func TestEngineLifecycle(t *testing.T) {
	e := testEngine(t, oneRule)
	open := e.Threat(threat(0, "rid:1", "z", "alert", true, 4))
	if len(open) != 1 || open[0].State != StateOpen || open[0].Seq != 1 || !open[0].HumanDecision {
		t.Fatalf("open: %+v", open)
	}
	m := open[0]
	if m.Zone.ID != "z" || m.Zone.Name != "Zone z" || m.Receipt == nil || m.Receipt.Index != 4 || m.Receipt.URL != "/v1/receipt/4" || m.Severity != "warning" || m.Sinks[0] != "h" {
		t.Errorf("open message: %+v", m)
	}
	if got := e.Threat(threat(time.Second, "rid:1", "z", "alert", true, 5)); len(got) != 0 {
		t.Errorf("same decision again: %v", states(got))
	}
	up := e.Threat(threat(2*time.Second, "rid:1", "z", "intercept-recommended", true, 6))
	if len(up) != 1 || up[0].State != StateUpdate || up[0].ID != m.ID || up[0].Seq != 2 || up[0].Severity != "critical" {
		t.Fatalf("update: %+v", up)
	}
	res := e.Threat(threat(3*time.Second, "rid:1", "z", "monitor", false, 7))
	if len(res) != 1 || res[0].State != StateResolved || res[0].ID != m.ID || res[0].Seq != 3 || res[0].Reason != "below_rule" {
		t.Fatalf("resolve: %+v", res)
	}
	if len(e.Open()) != 0 {
		t.Errorf("still open: %v", e.Open())
	}
}

func TestEngineCooldown(t *testing.T) {
	e := testEngine(t, oneRule)
	first := e.Threat(threat(0, "rid:1", "z", "alert", true, 1))
	e.Threat(threat(time.Second, "rid:1", "z", "monitor", false, 2))
	if got := e.Threat(threat(30*time.Second, "rid:1", "z", "alert", true, 3)); len(got) != 0 || e.Suppressed != 1 {
		t.Fatalf("within cooldown: %v (suppressed %d)", states(got), e.Suppressed)
	}
	if got := e.Threat(threat(30*time.Second, "rid:2", "z", "alert", true, 4)); len(got) != 1 {
		t.Fatalf("another track is not cooled down: %v", states(got))
	}
	again := e.Threat(threat(61*time.Second, "rid:1", "z", "alert", true, 5))
	if len(again) != 1 || again[0].State != StateOpen || again[0].ID == first[0].ID {
		t.Fatalf("after cooldown: %+v", again)
	}
}

// TestEngineBreachBypassesCooldown (issue 33): a breach that starts
// within the cooldown of a resolved alert opens one (every breach pages);
// any other match within it stays suppressed.
func TestEngineBreachBypassesCooldown(t *testing.T) {
	e := testEngine(t, oneRule)
	e.Threat(threat(0, "rid:1", "z", "alert", false, 1))
	e.Threat(threat(time.Second, "rid:1", "z", "monitor", false, 2))
	if got := e.Threat(threat(10*time.Second, "rid:1", "z", "alert", false, 3)); len(got) != 0 {
		t.Fatalf("a match without a breach within the cooldown opened: %v", states(got))
	}
	e.Threat(threat(11*time.Second, "rid:1", "z", "monitor", false, 4))
	ev := threat(20*time.Second, "rid:1", "z", "alert", true, 5)
	ev.Reason = "breach_started"
	if got := e.Threat(ev); len(got) != 1 || got[0].State != StateOpen || got[0].Reason != "breach_started" {
		t.Fatalf("a breach within the cooldown: %+v, want it paged", got)
	}
}

func TestEngineTrackLostAndZoneChange(t *testing.T) {
	e := testEngine(t, "sinks: [{name: h, mqtt: true}]\nrules:\n  - {name: a, sinks: [h]}\n  - {name: b, sinks: [h], breach: true}\n")
	if got := e.Threat(threat(0, "rid:1", "z", "alert", false, 1)); len(got) != 1 || got[0].Rule != "a" {
		t.Fatalf("no breach: only rule a: %+v", got)
	}
	if got := e.Threat(threat(time.Second, "rid:1", "z", "alert", true, 2)); len(got) != 1 || got[0].Rule != "b" {
		t.Fatalf("breach opens rule b: %+v", got)
	}
	lost := e.TrackLost("rid:1", t0.Add(2*time.Second))
	if len(lost) != 2 || lost[0].Reason != "track_lost" || lost[1].State != StateResolved || lost[0].Zone.ID != "z" {
		t.Fatalf("lost: %+v", lost)
	}
	e2 := testEngine(t, "sinks: [{name: h, mqtt: true}]\nrules:\n  - {name: a, sinks: [h], cooldown: 1ms}\n")
	e2.Threat(threat(0, "rid:1", "z", "alert", false, 1))
	got := e2.Threat(threat(time.Second, "rid:1", "y", "alert", false, 2))
	if len(got) != 1 || got[0].Reason != "zone_changed" || got[0].Zone.ID != "z" {
		t.Fatalf("zone change: %+v", got)
	}
}

func TestEngineFilters(t *testing.T) {
	e := testEngine(t, "sinks: [{name: h, mqtt: true}]\nrules:\n  - {name: s, sinks: [h], swarm_min: 3, protocols: [remoteid], min_lambda: 0.5}\n")
	th := threat(0, "rid:1", "z", "alert", true, 1)
	th.Threat.SwarmID = "swarm-rid:1"
	if got := e.Threat(th); len(got) != 0 {
		t.Fatalf("unknown swarm matched")
	}
	e.Swarm(&events.SwarmEvent{Header: events.Header{Type: events.TypeSwarmFormed}, Swarm: events.Swarm{ID: "swarm-rid:1", Size: 3}})
	th.Threat.Protocols = []string{"adsb"}
	if got := e.Threat(th); len(got) != 0 {
		t.Fatalf("protocol filter ignored")
	}
	th.Threat.Protocols = []string{"adsb", "remoteid"}
	th.Threat.Lambda = 0.4
	if got := e.Threat(th); len(got) != 0 {
		t.Fatalf("min_lambda ignored")
	}
	th.Threat.Lambda = 0.5
	if got := e.Threat(th); len(got) != 1 || got[0].AlertType != "uas_swarm" {
		t.Fatalf("swarm of 3: %+v", got)
	}
}

// TestEngineVerificationFilter: a rule with verification: [contradicted]
// matches only a threat whose ADS-B claim multilateration contradicted
// (issue 31).
func TestEngineVerificationFilter(t *testing.T) {
	e := testEngine(t, "sinks: [{name: h, mqtt: true}]\nrules:\n  - {name: spoof, sinks: [h], verification: [contradicted]}\n")
	th := threat(0, "adsb:4CA1FA", "z", "alert", false, 1)
	for _, v := range []string{"", "verified", "unverifiable"} {
		th.Threat.Verification = v
		if got := e.Threat(th); len(got) != 0 {
			t.Fatalf("verification %q matched", v)
		}
	}
	th.Threat.Verification = "contradicted"
	if got := e.Threat(th); len(got) != 1 {
		t.Fatalf("contradicted claim: %+v", got)
	}
	if _, err := Parse("f.yaml", []byte("sinks: [{name: h, mqtt: true}]\nrules:\n  - {name: x, sinks: [h], verification: [spoofed]}\n")); err == nil {
		t.Error("verification: [spoofed] accepted")
	}
}

func TestEngineRestore(t *testing.T) {
	e := testEngine(t, oneRule)
	open := e.Threat(threat(0, "rid:1", "z", "alert", true, 1))[0]
	gone := e.Threat(threat(0, "rid:2", "z", "alert", true, 2))[0]
	// A new process with the store's latest states.
	e2 := testEngine(t, oneRule)
	e2.Restore([]Message{open, gone})
	if got := e2.Threat(threat(10*time.Second, "rid:1", "z", "intercept-recommended", true, 3)); len(got) != 1 || got[0].ID != open.ID || got[0].State != StateUpdate || got[0].Seq != 2 || got[0].Sinks[0] != "h" {
		t.Fatalf("restored alert not updated: %+v", got)
	}
	res := e2.ResolveUnconfirmed(t0.Add(2 * time.Minute))
	if len(res) != 1 || res[0].ID != gone.ID || res[0].State != StateResolved || res[0].Reason != "not_seen_after_restart" {
		t.Fatalf("unconfirmed: %+v", res)
	}
	// The cooldown of the resolved one survived the restart.
	if got := e2.Threat(threat(30*time.Second, "rid:2", "z", "alert", true, 4)); len(got) != 0 {
		t.Fatalf("reopened within the cooldown: %+v", got)
	}
	e3 := testEngine(t, "sinks: [{name: h, mqtt: true}]\nrules: [{name: other, sinks: [h]}]\n")
	e3.Restore([]Message{open})
	if len(e3.Open()) != 0 {
		t.Error("an alert of a removed rule was restored")
	}
}

// TestEngineClasses (issue 33): a rule with classes pages only on those
// classes, and the words of the message name the track's class.
func TestEngineClasses(t *testing.T) {
	e := testEngine(t, "sinks: [{name: h, webhook: 'http://x/'}]\nrules:\n  - {name: r, classes: [drone, unknown], sinks: [h]}\n")
	for _, tc := range []struct {
		class, title string
		paged        bool
	}{
		{"aircraft", "", false},
		{"drone", "Drone at Zone z", true},
		{"unknown", "Unknown object at Zone z", true},
		{"", "Unknown object at Zone z", true}, // an event from before classes: unknown
	} {
		ev := threat(0, "track-"+tc.class, "z", "alert", false, 1)
		ev.Threat.Class = tc.class
		got := e.Threat(ev)
		if (len(got) == 1) != tc.paged || (tc.paged && got[0].Title != tc.title) {
			t.Errorf("class %q: %d messages %+v, want paged %v titled %q", tc.class, len(got), got, tc.paged, tc.title)
		}
	}
	// Without classes every class is paged, each in its own words.
	all := testEngine(t, oneRule)
	ev := threat(0, "adsb:4840D6", "z", "alert", false, 1)
	ev.Threat.Class = "aircraft"
	got := all.Threat(ev)
	if len(got) != 1 || got[0].Title != "Aircraft at Zone z" || got[0].Track.Class != "aircraft" || !strings.HasPrefix(got[0].Message, "Aircraft adsb:4840D6 is near") {
		t.Fatalf("aircraft: %+v", got)
	}
}
