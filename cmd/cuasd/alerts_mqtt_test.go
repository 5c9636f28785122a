package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/cuasd/cuasd/internal/mosquittotest"
)

// mqttWatcher records every message under cuas/# and homeassistant/#.
type mqttWatcher struct {
	mu   sync.Mutex
	msgs []paho.Message
}

func watchMQTT(t *testing.T, addr string) *mqttWatcher {
	t.Helper()
	w := &mqttWatcher{}
	c := paho.NewClient(paho.NewClientOptions().AddBroker("mqtt://" + addr).SetClientID("serve-watcher"))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("connect: %v", tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(100) })
	tok := c.SubscribeMultiple(map[string]byte{"cuas/#": 1, "homeassistant/#": 1}, func(_ paho.Client, m paho.Message) {
		w.mu.Lock()
		w.msgs = append(w.msgs, m)
		w.mu.Unlock()
	})
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("subscribe: %v", tok.Error())
	}
	return w
}

// wait returns the first message on topic with a payload ok accepts.
func (w *mqttWatcher) wait(t *testing.T, topic string, ok func([]byte) bool) []byte {
	t.Helper()
	for deadline := time.Now().Add(150 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		w.mu.Lock()
		for _, m := range w.msgs {
			if m.Topic() == topic && ok(m.Payload()) {
				w.mu.Unlock()
				return m.Payload()
			}
		}
		w.mu.Unlock()
	}
	t.Fatalf("nothing wanted on %s", topic)
	return nil
}

func payload(s string) func([]byte) bool { return func(b []byte) bool { return string(b) == s } }

// TestServeDemoMQTT: cuasd serve --demo --mqtt-url against Debian's
// mosquitto: status online, Home Assistant discovery for the demo site,
// the alert on cuas/alerts/demo-site, and offline after the shutdown.
func TestServeDemoMQTT(t *testing.T) {
	broker := mosquittotest.Start(t, "")
	w := watchMQTT(t, broker)
	rules := filepath.Join(t.TempDir(), "alerts.yaml")
	if err := os.WriteFile(rules, []byte("sinks: [{name: broker, mqtt: true}]\nrules: [{name: demo, zones: [demo-site], sinks: [broker]}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop := startServe(t, "--demo", "--alerts", rules, "--mqtt-url", "mqtt://"+broker, "--instance", "site1")
	w.wait(t, "cuas/status", payload("online"))
	// What the MQTT output's queue drops, and the sink's failures, are
	// series from the start (issue 24).
	_, metrics := get(t, strings.TrimSuffix(base, "/api/cuas")+"/metrics")
	for _, want := range []string{`cuasd_output_dropped_total{output="mqtt ` + broker + `"} 0`,
		`cuasd_alert_deliveries_total{result="failed",sink="broker"} 0`} {
		if !strings.Contains(string(metrics), want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	cfg := w.wait(t, "homeassistant/binary_sensor/site1/breach_demo-site/config", func([]byte) bool { return true })
	var c map[string]any
	if err := json.Unmarshal(cfg, &c); err != nil || c["state_topic"] != "cuas/zone/demo-site/breach" || c["name"] != "Drone or unknown object in Schiphol (demo)" {
		t.Errorf("discovery %s", cfg)
	}
	a := w.wait(t, "cuas/alerts/demo-site", func([]byte) bool { return true })
	var m struct {
		ID, State, Rule string
		Human           bool `json:"human_decision_required"`
	}
	if err := json.Unmarshal(a, &m); err != nil || m.State != "open" || m.Rule != "demo" || !m.Human {
		t.Errorf("alert %s", a)
	}
	stop()
	w.wait(t, "cuas/status", payload("offline"))
}
