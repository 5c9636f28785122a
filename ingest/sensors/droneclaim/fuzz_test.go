package droneclaim_test

import (
	"testing"

	"github.com/cuasd/cuasd/decode/remoteid"
	"github.com/cuasd/cuasd/ingest/sensors/droneclaim"
)

// FuzzParse: no input panics; a message Parse accepts as a drone claim
// re-encodes as a pack cuasd's Remote ID decoder reads back with the same
// identity. The seeds are the four shapes of ../shared/data/sensors in
// their variant spellings.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`[{"Basic ID": {"id": "X1", "MAC": "aa:bb", "RSSI": "-70 dBm"}}, {"Location/Vector Message": {"latitude": "51.1", "longitude": -0.1, "speed": "3 m/s"}}]`,
		`{"id": "FLAT1", "lat": 51.1, "lon": -0.2, "pilot_lat": 51.2, "pilot_lon": -0.3}`,
		`{"serial_number": "k", "gps_data": {"latitude": 1, "longitude": 2, "gps_fix": true}}`,
		`[{"Basic ID": {"id": "X1"}}, {"Frequency Message": {"frequency": 2437000000}}, {"System Message": {"latitude": 1, "longitude": 2}}]`,
		// Issue 25: the product claim, as the AntSDR's description and as a product type number.
		`[{"Basic ID": {"id": "X1", "description": "DJI Mavic 3", "product_type": "68"}}, {"Self-ID Message": {"text": "DJI Mavic 3"}}]`,
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, b []byte, hint uint8) {
		m, err := droneclaim.Parse(b, droneclaim.Kind(hint%4))
		if err != nil || m.Kind == droneclaim.KindStatus {
			return
		}
		pack, err := m.Claim.AppendPack(nil)
		if err != nil {
			return // out of F3411's range: refused, counted by the caller
		}
		var fr remoteid.Frame
		if err := remoteid.DecodeCarrier(remoteid.CarrierPack, pack, &fr); err != nil {
			t.Fatalf("own pack does not decode: %v (%q)", err, b)
		}
		o := remoteid.FrameObservation(&fr, 1, "s")
		if o.UASID == "" {
			t.Fatalf("identity lost: %q", b)
		}
		// Issue 25: a printable Self-ID text reaches the observation as the
		// product claim (cut to F3411's 23 bytes).
		if c := m.Claim.SelfID; c != "" && printableASCII(c) && len(c) <= 23 && o.Description != c {
			t.Fatalf("Self-ID %q came back as %q", c, o.Description)
		}
	})
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
