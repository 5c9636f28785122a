package main

import (
	"strings"
	"testing"
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
