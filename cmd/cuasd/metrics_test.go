package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Every failure, drop and reject counter is exposed at 0 for every known
// label combination before any traffic, so that an increase()-based alert
// (CuasdLedgerAppendFailing, CuasdFramesDropped...) sees the very first
// failure instead of a series that appears already at 1 (issue 24, item 2).
func TestMetricsPresentAtZeroBeforeTraffic(t *testing.T) {
	base, _, stop := startServeLines(t, "--beast-listen", "127.0.0.1:0", "--avr-listen", "127.0.0.1:0",
		"--mavlink-udp", "127.0.0.1:0")
	defer stop()
	root := strings.TrimSuffix(base, "/api/cuas")
	resp, body := get(t, root+"/metrics")
	if resp.StatusCode != 200 {
		t.Fatalf("metrics %d", resp.StatusCode)
	}
	have := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		have[line] = true
	}
	want := []string{
		`cuasd_ledger_appends_total{outcome="failed"} 0`,
		`cuasd_ledger_appends_total{outcome="stored"} 0`,
		`cuasd_gate_receipts_total{outcome="failed"} 0`,
		`cuasd_gate_receipts_total{outcome="dropped"} 0`,
		`cuasd_dead_letters_failed_total 0`,
		`cuasd_observations_dropped_total{reason="no_identity"} 0`,
		`cuasd_observations_dropped_total{reason="mode_s_unknown_aircraft"} 0`,
		`cuasd_events_published_total{kind="threat",result="error"} 0`,
		`cuasd_frames_received_total{adapter="beast-listen",protocol="adsb"} 0`,
		`cuasd_frames_received_total{adapter="avr-listen",protocol="adsb"} 0`,
		`cuasd_frames_received_total{adapter="mavlink-udp",protocol="mavlink"} 0`,
		`cuasd_frames_dropped_total{adapter="beast-listen",protocol="adsb",reason="queue_full"} 0`,
		`cuasd_frames_dropped_total{adapter="avr-listen",protocol="adsb",reason="backpressure"} 0`,
		`cuasd_frames_dropped_total{adapter="mavlink-udp",protocol="mavlink",reason="queue_full"} 0`,
	}
	for _, proto := range []string{"adsb", "remoteid", "mavlink"} {
		want = append(want,
			`cuasd_frames_decoded_total{protocol="`+proto+`"} 0`,
			`cuasd_frames_resent_total{protocol="`+proto+`"} 0`,
			`cuasd_frames_resent_live_total{protocol="`+proto+`"} 0`,
			`cuasd_frames_rejected_total{protocol="`+proto+`",reason="framing"} 0`,
			`cuasd_frames_received_total{adapter="http",protocol="`+proto+`"} 0`,
			`cuasd_frames_dropped_total{adapter="http",protocol="`+proto+`",reason="error"} 0`,
			`cuasd_frames_dropped_total{adapter="http-decode",protocol="`+proto+`",reason="publish"} 0`,
			`cuasd_frames_dropped_total{adapter="intake",protocol="`+proto+`",reason="invalid"} 0`)
	}
	want = append(want,
		`cuasd_frames_rejected_total{protocol="adsb",reason="crc"} 0`,
		`cuasd_frames_rejected_total{protocol="mavlink",reason="no_frame"} 0`,
		`cuasd_frames_rejected_total{protocol="remoteid",reason="not_remote_id"} 0`)
	for _, w := range want {
		if !have[w] {
			t.Errorf("missing before any traffic: %s", w)
		}
	}
}

// The failure, drop and reject counters of the inputs and outputs added
// after issue 24 (field sensors, alerts, CoT, history, the readsb outputs,
// the JetStream repair) exist at 0 before any traffic too, so an
// increase()-based alert sees their first event.
func TestLaterCountersPresentAtZeroBeforeTraffic(t *testing.T) {
	rules := filepath.Join(t.TempDir(), "alerts.yaml")
	if err := os.WriteFile(rules, []byte("sinks:\n  - name: hook\n    webhook: http://127.0.0.1:9/hook\n"+
		"rules:\n  - name: any\n    sinks: [hook]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base, _, stop := startServeLines(t, "--json-udp", "127.0.0.1:0", "--zmq-connect", "dji=tcp://127.0.0.1:9",
		"--alerts", rules, "--history", "--cot-udp", "127.0.0.1:9", "--sbs-listen", "127.0.0.1:0")
	defer stop()
	root := strings.TrimSuffix(base, "/api/cuas")
	// The outputs start after the pipeline: scrape once each is up (and
	// so has registered its metrics), still before any traffic.
	body := awaitComponentsUp(t, root, "alert-rules", "webhook hook", "cot-udp 127.0.0.1:9", "history ", "sbs-listen ")
	have := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		if k, v, ok := strings.Cut(line, "} "); ok && v == "0" && strings.HasPrefix(k, "cuasd_output_dropped_total{") {
			if i := strings.LastIndexByte(k, ' '); i > 0 {
				line = k[:i] + `"} 0` // the bound port varies
			}
		}
		have[line] = true
	}
	want := []string{
		`cuasd_alerts_total{rule="any",state="open"} 0`,
		`cuasd_alert_deliveries_total{result="failed",sink="hook"} 0`,
		`cuasd_alert_deliveries_total{result="retry",sink="hook"} 0`,
		`cuasd_cot_events_total{result="failed",sink="cot-udp 127.0.0.1:9"} 0`,
		`cuasd_cot_events_total{result="dropped",sink="cot-udp 127.0.0.1:9"} 0`,
		`cuasd_history_points_total{result="failed"} 0`,
		`cuasd_history_points_total{result="dropped"} 0`,
		`cuasd_output_dropped_total{output="sbs-listen"} 0`,
		`cuasd_output_dropped_total{output="alert-rules"} 0`,
		`cuasd_track_positions_unfed_total 0`,
		`cuasd_track_positions_unannounced_total 0`,
		`cuasd_jetstream_recreated_total{resource="stream CUAS_RAW"} 0`,
		`cuasd_jetstream_recreated_total{resource="bucket CUAS_ZONES"} 0`,
		`cuasd_frames_received_total{adapter="zmq",protocol="dji"} 0`,
		`cuasd_frames_dropped_total{adapter="zmq",protocol="dji",reason="rejected_oversized"} 0`,
		`cuasd_frames_dropped_total{adapter="zmq",protocol="dji",reason="publish"} 0`,
	}
	for _, proto := range []string{"remoteid", "dji"} {
		for _, r := range []string{"rejected_invalid_json", "rejected_no_identity", "rejected_range", "rejected_oversized", "backpressure"} {
			want = append(want, `cuasd_frames_dropped_total{adapter="json-udp",protocol="`+proto+`",reason="`+r+`"} 0`)
		}
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("missing before any traffic: %s", w)
		}
	}
}

// awaitComponentsUp scrapes root/metrics until a component whose name
// starts with each prefix is up, and returns that scrape.
func awaitComponentsUp(t *testing.T, root string, prefixes ...string) []byte {
	t.Helper()
	var body []byte
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		_, body = get(t, root+"/metrics")
		up := 0
		for _, p := range prefixes {
			if regexp.MustCompile(`(?m)^cuasd_component_up\{component="` + regexp.QuoteMeta(p) + `[^"]*"\} 1$`).Match(body) {
				up++
			}
		}
		if up == len(prefixes) {
			return body
		}
	}
	t.Fatalf("components %q not all up:\n%s", prefixes, body)
	return nil
}
