package mqtt

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/internal/mosquittotest"
	"github.com/cuasd/cuasd/internal/natstest"
	"github.com/cuasd/cuasd/output"
)

// haKeys is testdata/homeassistant-discovery-keys.json: the keys Home
// Assistant documents for each MQTT discovery component (sources named in
// the file).
type haKeys struct {
	Deprecated []string `json:"deprecated"`
	Common     []string `json:"common"`
	Device     []string `json:"device"`
	Components map[string]struct {
		Required      []string `json:"required"`
		RequiredOneOf []string `json:"required_one_of"`
		Keys          []string `json:"keys"`
		Attributes    []string `json:"attributes"`
	} `json:"components"`
}

func loadHAKeys(t *testing.T) *haKeys {
	t.Helper()
	b, err := os.ReadFile("testdata/homeassistant-discovery-keys.json")
	if err != nil {
		t.Fatal(err)
	}
	var k haKeys
	if err := json.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	return &k
}

// entityID is Home Assistant's entity id form: <domain>.<lower-case slug>.
var entityID = regexp.MustCompile(`^([a-z_]+)\.[a-z0-9_]+$`)

// haProblems checks one discovery payload published on topic
// (<prefix>/<component>/<node>/<object>/config) against the documented
// keys of its component; it returns what is wrong.
func haProblems(k *haKeys, topic string, payload []byte) (bad []string) {
	parts := strings.Split(topic, "/")
	comp, ok := k.Components[parts[1]]
	if len(parts) != 5 || !ok {
		return []string{"not <prefix>/<component>/<node>/<object>/config of a known component"}
	}
	var cfg map[string]any
	if err := json.Unmarshal(payload, &cfg); err != nil {
		return []string{err.Error()}
	}
	for key := range cfg {
		if slices.Contains(k.Deprecated, key) {
			bad = append(bad, fmt.Sprintf("%q is deprecated by Home Assistant", key))
		} else if !slices.Contains(k.Common, key) && !slices.Contains(comp.Keys, key) {
			bad = append(bad, fmt.Sprintf("%q is not a documented %s key", key, parts[1]))
		}
	}
	for _, key := range comp.Required {
		if _, ok := cfg[key]; !ok {
			bad = append(bad, fmt.Sprintf("required %q missing", key))
		}
	}
	if len(comp.RequiredOneOf) > 0 && !slices.ContainsFunc(comp.RequiredOneOf, func(key string) bool { _, ok := cfg[key]; return ok }) {
		bad = append(bad, fmt.Sprintf("needs one of %v", comp.RequiredOneOf))
	}
	if id, _ := cfg["default_entity_id"].(string); entityID.FindStringSubmatch(id) == nil || !strings.HasPrefix(id, parts[1]+".") {
		bad = append(bad, fmt.Sprintf("default_entity_id %q is not %s.<slug>", id, parts[1]))
	}
	dev, _ := cfg["device"].(map[string]any)
	for key := range dev {
		if !slices.Contains(k.Device, key) {
			bad = append(bad, fmt.Sprintf("device key %q is not documented", key))
		}
	}
	if ids, _ := dev["identifiers"].([]any); len(ids) == 0 {
		bad = append(bad, "the device has no identifiers")
	}
	return bad
}

func trackEvent(typ, id string, protos []string, lat, lon float64) events.TrackEvent {
	acc := 4.5
	return events.TrackEvent{Header: events.Header{V: events.Version, Type: typ, Time: time.Now().UTC()},
		Track: events.Track{TrackID: id, Protocols: protos, Lat: &lat, Lon: &lon, HAccuracyM: &acc, LastSeen: time.Now().UTC()}}
}

func publishTrack(t *testing.T, ns *natstest.Server, proto, key string, ev events.TrackEvent) {
	t.Helper()
	b, _ := json.Marshal(ev)
	if err := ns.Conn.Publish(bus.TrackSubject(proto, key), b); err != nil {
		t.Fatal(err)
	}
}

// TestHomeAssistantDiscoveryAndTrackers runs the output against Debian's
// mosquitto: every discovery payload it publishes uses only the keys Home
// Assistant documents for its component, names its entity with
// default_entity_id (not the deprecated object_id); a live drone and an
// aircraft inside the configured circle become device trackers whose
// attributes carry latitude, longitude and gps_accuracy; an aircraft
// outside stays off the map; a track that ends is removed (empty retained
// config and attributes).
func TestHomeAssistantDiscoveryAndTrackers(t *testing.T) {
	keys := loadHAKeys(t)
	broker := mosquittotest.Start(t, "")
	sub := subscribe(t, broker, "ha")
	ns := natstest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o, err := New(Config{URL: "mqtt://" + broker, Node: "test", Zones: []Zone{{"demo-site", "Schiphol (demo)"}},
		Aircraft: &Circle{Lat: 52.31, Lon: 4.76, RadiusM: 20_000}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = o.Run(ctx, output.Conn(ns.Conn), nopReporter{}) }()
	sub.wait(t, "cuas/status", is("online"))

	drone := "homeassistant/device_tracker/test/track_rid_SIM-1/config"
	near := "homeassistant/device_tracker/test/track_adsb_4840D6/config"
	publishTrack(t, ns, "adsb", "ABCDEF", trackEvent(events.TypeTrackUpdate, "adsb:ABCDEF", []string{"adsb"}, 51.47, -0.45)) // Heathrow: outside
	publishTrack(t, ns, "remoteid", "SIM-1", trackEvent(events.TypeTrackUpdate, "rid:SIM-1", []string{"remoteid"}, 52.32, 4.77))
	publishTrack(t, ns, "adsb", "4840D6", trackEvent(events.TypeTrackUpdate, "adsb:4840D6", []string{"adsb"}, 52.30, 4.75))
	sub.wait(t, drone, func(p string) bool { return p != "" })
	sub.wait(t, near, func(p string) bool { return p != "" })
	attrs := sub.wait(t, "cuas/tracker/rid_SIM-1/attributes", func(p string) bool { return p != "" })
	var a map[string]any
	if err := json.Unmarshal(attrs.Payload(), &a); err != nil || a["latitude"] != 52.32 || a["longitude"] != 4.77 || a["gps_accuracy"] != 4.5 {
		t.Fatalf("drone attributes %s (%v)", attrs.Payload(), err)
	}
	if m := subscribe(t, broker, "late").wait(t, drone, func(p string) bool { return p != "" }); !m.Retained() {
		t.Error("the drone's discovery config is not retained")
	}

	sub.mu.Lock()
	var configs []paho.Message
	for _, m := range sub.msgs {
		if strings.HasPrefix(m.Topic(), "homeassistant/") && len(m.Payload()) > 0 {
			configs = append(configs, m)
		}
		if strings.Contains(m.Topic(), "ABCDEF") {
			t.Errorf("the aircraft outside the circle was published: %s", m.Topic())
		}
	}
	sub.mu.Unlock()
	comps := map[string]bool{}
	for _, m := range configs {
		for _, p := range haProblems(keys, m.Topic(), m.Payload()) {
			t.Errorf("%s: %s", m.Topic(), p)
		}
		comps[strings.Split(m.Topic(), "/")[1]] = true
	}
	if !comps["sensor"] || !comps["binary_sensor"] || !comps["device_tracker"] {
		t.Fatalf("checked components %v, want sensor, binary_sensor and device_tracker", comps)
	}

	publishTrack(t, ns, "remoteid", "SIM-1", trackEvent(events.TypeTrackLost, "rid:SIM-1", []string{"remoteid"}, 52.32, 4.77))
	publishTrack(t, ns, "adsb", "4840D6", trackEvent(events.TypeTrackUpdate, "adsb:4840D6", []string{"adsb"}, 53.5, 4.75)) // left the circle
	sub.wait(t, drone, is(""))
	sub.wait(t, "cuas/tracker/rid_SIM-1/attributes", is(""))
	sub.wait(t, near, is(""))
}

// TestDiscoveryKeyCheckCanFail: the check rejects what Home Assistant
// deprecates or does not document.
func TestDiscoveryKeyCheckCanFail(t *testing.T) {
	keys := loadHAKeys(t)
	for _, bad := range []string{
		`{"state_topic":"s","object_id":"cuasd_x","default_entity_id":"sensor.cuasd_x","device":{"identifiers":["a"]}}`,
		`{"state_topic":"s","default_entity_id":"sensor.cuasd_x","latitude_topic":"l","device":{"identifiers":["a"]}}`,
		`{"state_topic":"s","default_entity_id":"binary_sensor.cuasd_x","device":{"identifiers":["a"]}}`,
		`{"state_topic":"s","default_entity_id":"sensor.cuasd_x","device":{"identifiers":["a"],"serial":"1"}}`,
	} {
		if len(haProblems(keys, "homeassistant/sensor/n/x/config", []byte(bad))) == 0 {
			t.Errorf("accepted %s", bad)
		}
	}
}
