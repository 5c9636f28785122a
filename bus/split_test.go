package bus

import (
	"strings"
	"testing"
)

// TestSplitSubjectInvertsTheBuilders: what RawSubject, IntakeSubject and
// TrackSubject build splits back into its protocol and last token.
func TestSplitSubjectInvertsTheBuilders(t *testing.T) {
	for _, tc := range []struct {
		name, prefix, subject, protocol, rest string
		ok                                    bool
	}{
		{"raw", RawPrefix, RawSubject("adsb", "rx.1"), "adsb", "rx_1", true},
		{"intake", IntakePrefix, IntakeSubject("remoteid", "esp-1"), "remoteid", "esp-1", true},
		{"track", TrackPrefix, TrackSubject("adsb", "4CA1FA"), "adsb", "4CA1FA", true},
		{"other prefix", RawPrefix, TrackSubject("adsb", "4CA1FA"), "", "", false},
		{"no token after the protocol", IntakePrefix, "cuas.in.adsb", "adsb", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, r, ok := SplitSubject(tc.prefix, tc.subject)
			if p != tc.protocol || r != tc.rest || ok != tc.ok {
				t.Errorf("SplitSubject(%q, %q) = %q, %q, %v; want %q, %q, %v", tc.prefix, tc.subject, p, r, ok, tc.protocol, tc.rest, tc.ok)
			}
		})
	}
}

// TestSensorName: adapters' derived names fit the one sensor-name rule.
func TestSensorName(t *testing.T) {
	for in, want := range map[string]string{
		"rx1": "rx1", "127.0.0.1:30005": "127_0_0_1_30005", "[::1]:30005": "___1__30005", "": "_",
		`=HYPERLINK("x")`: "_HYPERLINK__x__", strings.Repeat("é", 40): strings.Repeat("_", 64),
	} {
		if got := SensorName(in); got != want || !ValidSensor(got) {
			t.Errorf("SensorName(%q) = %q (valid %v), want %q", in, got, ValidSensor(got), want)
		}
	}
}
