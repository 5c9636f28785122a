package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cuasd/cuasd/output/webhook"
)

// hookReceiver is a real HTTP receiver that answers 500 to the first two
// requests of each alert state and 200 afterwards.
type hookReceiver struct {
	mu    sync.Mutex
	all   []hookRequest
	tries map[string]int
	ok    chan hookRequest
}

type hookRequest struct {
	id, state, sig string
	body           []byte
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	q := hookRequest{r.Header.Get(webhook.HeaderID), r.Header.Get(webhook.HeaderState), r.Header.Get(webhook.HeaderSignature), b}
	h.mu.Lock()
	h.all = append(h.all, q)
	k := q.id + "/" + q.state
	h.tries[k]++
	n := h.tries[k]
	h.mu.Unlock()
	if n <= 2 {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	select {
	case h.ok <- q:
	default:
	}
}

func (h *hookReceiver) requests() []hookRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookRequest(nil), h.all...)
}

func writeAlertRules(t *testing.T, hookURL string) (rules, secret string) {
	t.Helper()
	dir := t.TempDir()
	secret = "demo-secret-for-tests"
	if err := os.WriteFile(filepath.Join(dir, "hook.secret"), []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rules = filepath.Join(dir, "alerts.yaml")
	y := "sinks:\n  - name: hook\n    webhook: " + hookURL + "\n    secret_file: " + filepath.Join(dir, "hook.secret") +
		"\nrules:\n  - name: demo-breach\n    zones: [demo-site]\n    classes: [drone, unknown]\n    min_decision: alert\n    cooldown: 10m\n    sinks: [hook]\n"
	if err := os.WriteFile(rules, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	return rules, secret
}

// TestDemoBreachAlertsASignedRetriedWebhook: with --demo a drone breaches
// the demo site; a receiver that fails twice gets the alert on the third
// try with the same id and a valid signature; the receipt in the body
// exists and names the track; and a track never has two alerts of the
// rule within the cooldown.
func TestDemoBreachAlertsASignedRetriedWebhook(t *testing.T) {
	rc := &hookReceiver{tries: map[string]int{}, ok: make(chan hookRequest, 1)}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	rules, secret := writeAlertRules(t, srv.URL+"/hook")
	base, stop := startServe(t, "--demo", "--alerts", rules)
	defer stop()

	var got hookRequest
	select {
	case got = <-rc.ok:
	case <-time.After(150 * time.Second):
		t.Fatalf("no alert accepted; receiver saw %d requests", len(rc.requests()))
	}
	same := 0
	for _, r := range rc.requests() {
		if r.id == got.id && r.state == got.state {
			same++
			if string(r.body) != string(got.body) || !webhook.Verify([]byte(secret), r.body, r.sig) {
				t.Errorf("a retry of %s differs or is badly signed", r.id)
			}
		}
	}
	if same != 3 {
		t.Errorf("%d requests for %s/%s, want 2 failures and the success", same, got.id, got.state)
	}
	var a struct {
		ID    string `json:"id"`
		State string `json:"state"`
		Track struct {
			TrackID string `json:"track_id"`
		} `json:"track"`
		Receipt struct {
			Index int64  `json:"index"`
			URL   string `json:"url"`
		} `json:"receipt"`
		Human bool `json:"human_decision_required"`
	}
	if err := json.Unmarshal(got.body, &a); err != nil || a.ID != got.id || a.State != "open" || !a.Human || a.Receipt.URL == "" {
		t.Fatalf("body %s (%v)", got.body, err)
	}
	u, _ := url.Parse(base)
	resp, body := get(t, u.Scheme+"://"+u.Host+a.Receipt.URL)
	var bundle struct {
		Index    int64 `json:"index"`
		Envelope struct {
			Payload []byte `json:"payload"` // base64 in JSON
		} `json:"envelope"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &bundle) != nil || bundle.Index != a.Receipt.Index {
		t.Fatalf("receipt %s: %d %.300s", a.Receipt.URL, resp.StatusCode, body)
	}
	if !strings.Contains(string(bundle.Envelope.Payload), `"name":"track:`+a.Track.TrackID+`"`) {
		t.Errorf("receipt %d does not name track %s: %.300s", a.Receipt.Index, a.Track.TrackID, bundle.Envelope.Payload)
	}
	resp, body = get(t, base+"/v1/alerts/"+a.ID)
	var rec struct {
		Deliveries []struct {
			Sink, Status string
			Attempts     int
		}
	}
	if json.Unmarshal(body, &rec) != nil || resp.StatusCode != 200 || len(rec.Deliveries) != 1 || rec.Deliveries[0].Sink != "hook" {
		t.Errorf("GET /v1/alerts/%s: %d %s", a.ID, resp.StatusCode, body)
	}
	// Cooldown: every open alert the receiver saw is of another track.
	opens := map[string]string{}
	for _, r := range rc.requests() {
		if r.state != "open" {
			continue
		}
		var m struct {
			ID    string `json:"id"`
			Track struct {
				TrackID string `json:"track_id"`
			} `json:"track"`
		}
		_ = json.Unmarshal(r.body, &m)
		if prev, ok := opens[m.Track.TrackID]; ok && prev != m.ID {
			t.Errorf("track %s opened %s and %s within the cooldown", m.Track.TrackID, prev, m.ID)
		}
		opens[m.Track.TrackID] = m.ID
	}
}

func TestServeRefusesBadAlertRules(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "alerts.yaml")
	for _, tc := range []struct{ name, yaml, want string }{
		{"unknown key", "sinks: [{name: h, webhook: 'http://x/'}]\nrules:\n  - name: r\n    sinks: [h]\n    zone: [demo-site]\n", f + `:5: rules[0].zone: unknown key "zone"`},
		{"unknown zone", "sinks: [{name: h, webhook: 'http://x/'}]\nrules:\n  - {name: r, sinks: [h], zones: [nowhere]}\n", `rules[0].zones: unknown zone "nowhere"`},
		{"secret file", "sinks: [{name: h, webhook: 'http://x/', secret_file: /nonexistent}]\nrules:\n  - {name: r, sinks: [h]}\n", "sinks[0].secret_file: cannot read"},
		{"mqtt without broker", "sinks: [{name: b, mqtt: true}]\nrules:\n  - {name: r, sinks: [b]}\n", "--mqtt-url is not set"},
		{"unknown class", "sinks: [{name: h, webhook: 'http://x/'}]\nrules:\n  - name: r\n    sinks: [h]\n    classes: [drone, airliner]\n", f + `:5: rules[0].classes[1]: unknown class "airliner" (known: aircraft, drone, unknown)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(f, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			err := run(context.Background(), []string{"serve", "--demo", "--data-dir", dir, "--alerts", f}, func(string) string { return "" }, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// downThenUp is a receiver that answers 503 until up is set.
type downThenUp struct {
	up   atomic.Bool
	mu   sync.Mutex
	seen []string // alert id/state of every request
	ok   chan string
}

func (d *downThenUp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k := r.Header.Get(webhook.HeaderID) + "/" + r.Header.Get(webhook.HeaderState)
	d.mu.Lock()
	d.seen = append(d.seen, k)
	d.mu.Unlock()
	if !d.up.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	select {
	case d.ok <- k:
	default:
	}
}

func (d *downThenUp) first() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.seen) == 0 {
		return ""
	}
	return d.seen[0]
}

// TestSIGKILLWithPendingAlertDeliversAfterRestart: the receiver is down
// while an alert is raised; cuasd is SIGKILLed with the alert pending and
// restarted (without the simulator, so nothing new is raised) while the
// receiver is up: the pending alert arrives, with its id.
func TestSIGKILLWithPendingAlertDeliversAfterRestart(t *testing.T) {
	rc := &downThenUp{ok: make(chan string, 64)}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	rules, _ := writeAlertRules(t, srv.URL+"/hook")
	dir := t.TempDir()
	c := startChild(t, dir, "--demo", "--alerts", rules)
	var pending string
	for deadline := time.Now().Add(150 * time.Second); pending == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			c.cmd.Process.Kill()
			t.Fatal("no alert attempted within 150 s")
		}
		pending = rc.first()
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = c.cmd.Wait()
	rc.up.Store(true)
	c2 := startChild(t, dir, "--alerts", rules)
	defer func() {
		c2.cmd.Process.Signal(syscall.SIGTERM)
		c2.cmd.Wait()
	}()
	deadline := time.After(90 * time.Second)
	for {
		select {
		case k := <-rc.ok:
			if k == pending {
				return
			}
		case <-deadline:
			t.Fatalf("pending alert %s not delivered after the restart", pending)
		}
	}
}

func TestAlertsInlineInConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "cuasd.yaml")
	good := "demo: true\nmqtt-url: mqtt://127.0.0.1:1883\nalerts:\n  sinks:\n    - {name: b, mqtt: true}\n  rules:\n    - name: r\n      zones: [demo-site]\n      sinks: [b]\n"
	if err := os.WriteFile(cfgFile, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := parseConfig([]string{"--config", cfgFile}, func(string) string { return "" }, io.Discard)
	if err != nil || c.rules == nil || c.rules.Rules[0].Name != "r" {
		t.Fatalf("inline rules: %v", err)
	}
	bad := strings.Replace(good, "      sinks: [b]\n", "      sinks: [b]\n      cooldow: 5s\n", 1)
	if err := os.WriteFile(cfgFile, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = parseConfig([]string{"--config", cfgFile}, func(string) string { return "" }, io.Discard)
	if want := cfgFile + ` (alerts:):10: rules[0].cooldow: unknown key`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
	// CUAS_ALERTS names a file, like --alerts.
	rules, _ := writeAlertRules(t, "http://127.0.0.1:9/")
	c, err = parseConfig([]string{"--demo"}, func(k string) string {
		if k == "CUAS_ALERTS" {
			return rules
		}
		return ""
	}, io.Discard)
	if err != nil || c.rules == nil || len(c.rules.Sinks[0].Secret) == 0 {
		t.Fatalf("CUAS_ALERTS: %v", err)
	}
}
