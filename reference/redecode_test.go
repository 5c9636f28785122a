package reference

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/decode/adsb"
)

// TestADSBSamplesRedecode decodes every single-frame ADS-B sample with the
// real decoder and compares the fields the sample states. CPR pairs are
// checked by decode/adsb's own vector tests; see docs/design/reference.md.
func TestADSBSamplesRedecode(t *testing.T) {
	samples, err := Samples()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range samples {
		h, ok := s.Input["hex"].(string)
		if s.Protocol != "adsb" || !ok {
			continue
		}
		raw, err := hex.DecodeString(h)
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		var m adsb.Message
		derr := adsb.Decode(raw, &m)
		var exp map[string]any
		_ = json.Unmarshal(s.Expect, &exp)
		if !s.Valid {
			if derr == nil {
				t.Errorf("%s: invalid sample decoded without error", s.ID)
			}
			n++
			continue
		}
		if derr != nil {
			t.Errorf("%s: %v", s.ID, derr)
			continue
		}
		for k, v := range exp {
			var got, want string
			switch k {
			case "df":
				got, want = fmt.Sprint(m.DF), fmt.Sprint(v)
			case "icao":
				got, want = fmt.Sprintf("%06X", m.Address), strings.ToUpper(fmt.Sprint(v))
			case "typecode":
				got, want = fmt.Sprint(m.TypeCode), fmt.Sprint(v)
			case "callsign":
				got, want = strings.TrimRight(string(m.Callsign[:]), " "), fmt.Sprint(v)
			case "altitude":
				got, want = fmt.Sprint(m.Altitude), fmt.Sprint(v)
			case "crc_remainder":
				got, want = fmt.Sprint(m.CRCRemainder), fmt.Sprint(v)
			default:
				continue // fields this test does not map are checked by decode/adsb
			}
			if got != want {
				t.Errorf("%s: %s = %s, want %s", s.ID, k, got, want)
			}
		}
		n++
	}
	t.Logf("ADS-B single-frame samples re-decoded: %d", n)
}
