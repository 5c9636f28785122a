package mqtt

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/internal/mosquittotest"
	"github.com/cuasd/cuasd/internal/natstest"
	"github.com/cuasd/cuasd/lifecycle"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/output/alert"
)

// subscriber is a second MQTT client that records every message.
type subscriber struct {
	mu   sync.Mutex
	msgs []paho.Message
	note chan struct{}
}

func subscribe(t *testing.T, addr string, id string) *subscriber {
	t.Helper()
	s := &subscriber{note: make(chan struct{}, 1)}
	c := paho.NewClient(paho.NewClientOptions().AddBroker("mqtt://" + addr).SetClientID(id))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("subscriber connect: %v", tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(100) })
	tok := c.SubscribeMultiple(map[string]byte{"cuas/#": 1, "homeassistant/#": 1}, s.record)
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("subscribe: %v", tok.Error())
	}
	return s
}

func (s *subscriber) record(_ paho.Client, m paho.Message) {
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
	select {
	case s.note <- struct{}{}:
	default:
	}
}

// wait returns the first message on topic (after the first skip ones)
// whose payload satisfies ok.
func (s *subscriber) wait(t *testing.T, topic string, ok func(string) bool) paho.Message {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		s.mu.Lock()
		for _, m := range s.msgs {
			if m.Topic() == topic && ok(string(m.Payload())) {
				s.mu.Unlock()
				return m
			}
		}
		s.mu.Unlock()
		select {
		case <-s.note:
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no message on %s as wanted; got %s", topic, s.topics())
		}
	}
}

func (s *subscriber) topics() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, m := range s.msgs {
		fmt.Fprintf(&b, "\n  %s %.80s", m.Topic(), m.Payload())
	}
	return b.String()
}

func is(v string) func(string) bool { return func(s string) bool { return s == v } }

// proxy forwards TCP to addr until cut: cutting drops the output's
// connection without an MQTT DISCONNECT, as a crash or a network loss does.
type proxy struct {
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startProxy(t *testing.T, addr string) *proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l}
	t.Cleanup(func() { l.Close(); p.cut() })
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", addr)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
	return p
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func TestMosquittoStatusDiscoveryAlertsAndWill(t *testing.T) {
	broker := mosquittotest.Start(t, "")
	px := startProxy(t, broker)
	sub := subscribe(t, broker, "watcher")
	ns := natstest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg, store, ev := runRules(ctx, t, ns)
	o, err := New(Config{URL: "mqtt://" + px.l.Addr().String(), Node: "test", Zones: []Zone{{"demo-site", "Schiphol (demo)"}},
		Sinks: cfg.Sinks, Deliverer: alert.Deliverer{JS: ns.JetStream(), Store: store}})
	if err != nil {
		t.Fatal(err)
	}
	octx, ocancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- o.Run(octx, ev, nopReporter{}) }()

	sub.wait(t, "cuas/status", is("online"))
	checkDiscovery(t, sub)
	sub.wait(t, "cuas/zone/demo-site/breach", is("OFF"))
	sub.wait(t, "cuas/threats/active", is("0"))

	publishThreat(t, ns)
	m := sub.wait(t, "cuas/alerts/demo-site", func(string) bool { return true })
	var a alert.Message
	if err := json.Unmarshal(m.Payload(), &a); err != nil || a.State != alert.StateOpen || a.Zone.ID != "demo-site" || !a.HumanDecision || m.Qos() != 1 {
		t.Errorf("alert %s (qos %d, %v)", m.Payload(), m.Qos(), err)
	}
	sub.wait(t, "cuas/zone/demo-site/breach", is("ON"))
	sub.wait(t, "cuas/threats/active", is("1"))
	sub.wait(t, "cuas/threats/max_lambda", is("0.800"))

	// A late subscriber gets the retained discovery configs and states.
	late := subscribe(t, broker, "late")
	if r := checkDiscovery(t, late); !r.Retained() {
		t.Error("discovery config not retained")
	}
	if m := late.wait(t, "cuas/zone/demo-site/breach", is("ON")); !m.Retained() {
		t.Error("breach state not retained")
	}

	ocancel() // clean shutdown: "offline", retained
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	sub.wait(t, "cuas/status", is("offline"))

	// Start again, then lose the connection without DISCONNECT: the broker
	// publishes the last will.
	restarted := subscribe(t, broker, "restarted")
	restarted.wait(t, "cuas/status", is("offline"))
	octx, ocancel = context.WithCancel(ctx)
	defer ocancel()
	go func() { done <- o.Run(octx, ev, nopReporter{}) }()
	restarted.wait(t, "cuas/status", is("online"))
	px.l.Close() // no reconnect through the proxy
	px.cut()
	wills := subscribe(t, broker, "will")
	wills.wait(t, "cuas/status", is("offline"))
}

// runRules opens the alert store with one mqtt sink and a breach rule for
// demo-site, and runs the rule engine on ns's events until ctx ends.
func runRules(ctx context.Context, t *testing.T, ns *natstest.Server) (*alert.Config, *alert.Store, output.Events) {
	t.Helper()
	cfg, err := alert.Parse("t.yaml", []byte("sinks: [{name: broker, mqtt: true}]\nrules: [{name: breach, zones: [demo-site], sinks: [broker]}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	rules, store, err := alert.Open(ctx, ns.JetStream(), cfg, alert.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ev := output.Conn(ns.Conn)
	go func() { _ = rules.Run(ctx, ev, nopReporter{}) }()
	return cfg, store, ev
}

// checkDiscovery waits for the three discovery configs and checks their
// fields; it returns the zone's.
func checkDiscovery(t *testing.T, s *subscriber) paho.Message {
	t.Helper()
	var zone paho.Message
	for _, tc := range []struct{ topic, state string }{
		{"homeassistant/binary_sensor/test/breach_demo-site/config", "cuas/zone/demo-site/breach"},
		{"homeassistant/sensor/test/active_threats/config", "cuas/threats/active"},
		{"homeassistant/sensor/test/max_lambda/config", "cuas/threats/max_lambda"},
	} {
		m := s.wait(t, tc.topic, func(string) bool { return true })
		var c map[string]any
		if err := json.Unmarshal(m.Payload(), &c); err != nil {
			t.Fatal(err)
		}
		if c["state_topic"] != tc.state || c["availability_topic"] != "cuas/status" || c["unique_id"] == nil || c["device"] == nil {
			t.Errorf("%s: %s", tc.topic, m.Payload())
		}
		if zone == nil {
			zone = m
		}
	}
	return zone
}

func publishThreat(t *testing.T, ns *natstest.Server) {
	t.Helper()
	idx := int64(3)
	ev := events.ThreatEvent{Header: events.Header{V: events.Version, Type: events.TypeThreat, Time: time.Now().UTC()},
		Reason: "breach_started", Threat: events.Threat{TrackID: "remoteid:ABC", Protocols: []string{"remoteid"}, Lambda: 0.8,
			Decision: "alert", HumanDecision: true, Geofence: "demo-site", GeofenceName: "Schiphol (demo)", Breach: true, ReceiptIndex: &idx}}
	b, _ := json.Marshal(ev)
	if err := ns.Conn.Publish(bus.ThreatSubject("remoteid", "ABC"), b); err != nil {
		t.Fatal(err)
	}
}

type nopReporter struct{}

func (nopReporter) Up()            {}
func (nopReporter) Retrying(error) {}

func TestNewRefusesBadConfig(t *testing.T) {
	for _, tc := range []struct{ name, url, prefix string }{
		{"scheme", "tcp://h:1883", ""},
		{"credentials in url", "mqtt://u:p@h:1883", ""},
		{"wildcard prefix", "mqtt://h:1883", "cuas/#"},
		{"no host", "mqtt://", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(Config{URL: tc.url, Prefix: tc.prefix}); err == nil || strings.Contains(err.Error(), "u:p") {
				t.Fatalf("got %v", err)
			}
		})
	}
}

func TestPictureStates(t *testing.T) {
	p := newPicture()
	p.zone("z", "Zone")
	first := p.all()
	if len(first) != 3 || string(first[2].payload) != "OFF" {
		t.Fatalf("initial %v", first)
	}
	b, _ := json.Marshal(events.ThreatEvent{Header: events.Header{V: 1, Type: events.TypeThreat},
		Threat: events.Threat{TrackID: "a", Geofence: "z", Breach: true, Decision: "intercept-recommended", Lambda: 0.91}})
	_, changed := p.apply(b)
	if len(changed) != 3 {
		t.Fatalf("changed %v", changed)
	}
	b, _ = json.Marshal(events.TrackEvent{Header: events.Header{V: 1, Type: events.TypeTrackLost}, Track: events.Track{TrackID: "a"}})
	_, changed = p.apply(b)
	if len(changed) != 3 || string(changed[0].payload) != "0" || string(changed[2].payload) != "OFF" {
		t.Fatalf("after loss %v", changed)
	}
	// Issue 33: an aircraft in the zone does not switch its breach
	// sensor on (it still counts as an active threat at alert).
	b, _ = json.Marshal(events.ThreatEvent{Header: events.Header{V: 1, Type: events.TypeThreat},
		Threat: events.Threat{TrackID: "adsb:1", Geofence: "z", Breach: true, Decision: "alert", Lambda: 0.5, Class: "aircraft"}})
	if _, changed = p.apply(b); len(changed) != 2 || string(changed[0].payload) != "1" || string(p.all()[2].payload) != "OFF" {
		t.Fatalf("aircraft in the zone: changed %v, all %v", changed, p.all())
	}
	b, _ = json.Marshal(events.TrackEvent{Header: events.Header{V: 1, Type: events.TypeTrackLost}, Track: events.Track{TrackID: "adsb:1"}})
	p.apply(b)
	if _, changed = p.apply([]byte("not json")); changed != nil {
		t.Fatal("garbage changed the picture")
	}
	b, _ = json.Marshal(events.ZoneEvent{Header: events.Header{V: 1, Type: events.TypeZoneUpsert}, Zone: gate.Geofence{ID: "z", Name: "Renamed"}})
	if zc, _ := p.apply(b); zc == nil || zc.deleted || zc.Name != "Renamed" {
		t.Fatalf("rename: %+v", zc)
	}
	b, _ = json.Marshal(events.ZoneEvent{Header: events.Header{V: 1, Type: events.TypeZoneDeleted}, Zone: gate.Geofence{ID: "z"}})
	if zc, _ := p.apply(b); zc == nil || !zc.deleted || len(p.zones()) != 0 || len(p.all()) != 2 {
		t.Fatalf("delete: %+v, zones %v", zc, p.zones())
	}
}

func FuzzPictureApply(f *testing.F) {
	for _, e := range []any{
		events.ThreatEvent{Header: events.Header{V: 1, Type: events.TypeThreat}, Threat: events.Threat{TrackID: "a", Geofence: "z", Breach: true, Decision: "alert", Lambda: 0.5}},
		events.TrackEvent{Header: events.Header{V: 1, Type: events.TypeTrackLost}, Track: events.Track{TrackID: "a"}},
		events.ZoneEvent{Header: events.Header{V: 1, Type: events.TypeZoneUpsert}},
	} {
		b, _ := json.Marshal(e)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := newPicture()
		p.apply(b)
		for _, q := range p.all() {
			if strings.ContainsAny(q.topic, "+#") {
				t.Fatalf("topic %q has a wildcard", q.topic)
			}
		}
	})
}

// TestAlertSinkSurvivesConsumerLoss: when a sink's JetStream subscription
// ends (here its durable consumer is deleted and recreated, as after a
// lost stream leader or a consumer that missed its heartbeats), the sink's
// delivery loop is restarted and the next alert still reaches the broker.
// Before the supervisor, the loop ended for good ("mqtt alert sink
// stopped") while the output stayed up.
func TestAlertSinkSurvivesConsumerLoss(t *testing.T) {
	broker := mosquittotest.Start(t, "")
	sub := subscribe(t, broker, "watcher")
	ns := natstest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg, store, ev := runRules(ctx, t, ns)
	reps := &sinkReporters{}
	o, err := New(Config{URL: "mqtt://" + broker, Node: "test", Zones: []Zone{{"demo-site", "Schiphol (demo)"}},
		Sinks: cfg.Sinks, Deliverer: alert.Deliverer{JS: ns.JetStream(), Store: store}, SinkReporter: reps.get})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = o.Run(ctx, ev, nopReporter{}) }()
	sub.wait(t, "cuas/status", is("online"))

	recreateConsumers(ctx, t, ns)
	reps.waitRestart(t, "broker")
	publishThreat(t, ns)
	sub.wait(t, "cuas/alerts/demo-site", func(string) bool { return true })
}

// recreateConsumers deletes every consumer of the alert stream and creates
// it again with the same configuration.
func recreateConsumers(ctx context.Context, t *testing.T, ns *natstest.Server) {
	t.Helper()
	s, err := ns.JS.Stream(ctx, bus.StreamAlerts)
	if err != nil {
		t.Fatal(err)
	}
	var cfgs []jetstream.ConsumerConfig
	for info := range s.ListConsumers(ctx).Info() {
		cfgs = append(cfgs, info.Config)
	}
	if len(cfgs) == 0 {
		t.Fatal("no alert consumers")
	}
	for _, c := range cfgs {
		if err := s.DeleteConsumer(ctx, c.Durable); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateConsumer(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
}

// sinkReporters records each sink's restarts.
type sinkReporters struct {
	mu       sync.Mutex
	restarts map[string]int
}

func (r *sinkReporters) get(name string) lifecycle.Reporter { return &sinkReporter{r, name} }

func (r *sinkReporters) waitRestart(t *testing.T, name string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		r.mu.Lock()
		n := r.restarts[name]
		r.mu.Unlock()
		if n > 0 {
			return
		}
	}
	t.Fatalf("sink %s was not restarted", name)
}

type sinkReporter struct {
	r    *sinkReporters
	name string
}

func (s *sinkReporter) Up()            {}
func (s *sinkReporter) Retrying(error) {}
func (s *sinkReporter) Restarting(error) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	if s.r.restarts == nil {
		s.r.restarts = map[string]int{}
	}
	s.r.restarts[s.name]++
}

// TestAlertAcknowledgedAfterItsDeadline: an alert published as its
// deadline passes (what a process stopped for longer than the deadline,
// SIGSTOP in the fault suite, sees on resuming) is delivered once and
// counts as delivered when Debian's mosquitto acknowledges it within the
// grace, so it is not sent again (issue 32). Without the grace Send
// returned "broker did not acknowledge" and the retry delivered it twice.
func TestAlertAcknowledgedAfterItsDeadline(t *testing.T) {
	broker := mosquittotest.Start(t, "")
	sub := subscribe(t, broker, "watcher")
	c := paho.NewClient(paho.NewClientOptions().AddBroker("mqtt://" + broker).SetClientID("sender"))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("connect: %v", tok.Error())
	}
	defer c.Disconnect(100)
	s := &sink{o: &Output{cfg: Config{Prefix: "cuas"}}, c: c}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	<-ctx.Done()
	if err := s.Send(ctx, &alert.Message{ID: "al-late", Zone: alert.Zone{ID: "demo-site"}}, []byte(`{"id":"al-late"}`)); err != nil {
		t.Fatalf("an alert the broker acknowledged just after its deadline: %v", err)
	}
	sub.wait(t, "cuas/alerts/demo-site", is(`{"id":"al-late"}`))
	time.Sleep(200 * time.Millisecond)
	sub.mu.Lock()
	defer sub.mu.Unlock()
	n := 0
	for _, m := range sub.msgs {
		if m.Topic() == "cuas/alerts/demo-site" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the alert reached the broker %d times, want once", n)
	}
}
