package bus

import "testing"

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
