package droneclaim_test

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/decode/remoteid"
	"github.com/cuasd/cuasd/ingest/sensors/droneclaim"
	"github.com/cuasd/cuasd/internal/testshared"
)

// lines reads the shared sample file name, one message per line.
func lines(t *testing.T, name string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(testshared.Path(t, "data", "sensors", name))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
			out = append(out, append([]byte(nil), l...))
		}
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// TestSamples checks every shared sample message against the values
// written in it (read by eye from the files in ../shared/data/sensors).
func TestSamples(t *testing.T) {
	rid := lines(t, "wardragon_rid.jsonl")
	dji := lines(t, "wardragon_dji.jsonl")
	esp := lines(t, "esp32.jsonl")
	tests := []struct {
		name                   string
		msg                    []byte
		kind                   droneclaim.Kind
		id, mac, opID, selfID  string
		rssi, lat, lon, geoAlt float64
		height, speed, vspeed  float64
		dir, opLat, opLon      float64
		hasHome                bool
		freq                   float64
	}{
		{"rid numbers", rid[0], droneclaim.KindRemoteID, "1581F5EXAMPLE001", "AA:BB:CC:11:22:01", "GBR-OP-EXAMPLE1", "inspection",
			-63, 51.47021, -0.45311, 110.5, 80, 11.25, 0.5, 95, 51.46950, -0.45502, true, 0},
		{"rid strings with units, operator_lat", rid[1], droneclaim.KindRemoteID, "1668EXAMPLE00002", "AA:BB:CC:11:22:02", "", "",
			-71, 51.47233, -0.44810, 95, 70, 17.75, -0.5, 310, 51.47301, -0.44702, false, 0},
		{"dji by frequency message", dji[0], droneclaim.KindDJI, "3NZEXAMPLEDJI003", "60:60:1F:11:22:03", "", "DJI Mavic 3",
			-76, 51.46811, -0.46022, 60, 35, 7, 0, 45, 51.46790, -0.46101, true, 2437e6},
		{"esp32 flat message keys", esp[0], droneclaim.KindRemoteID, "ESP32EXAMPLE0004", "AA:BB:CC:11:22:04", "GBR-OP-EXAMPLE4", "",
			-64, 51.47120, -0.45011, 70, 45, 5.5, 0, 180, 51.47100, -0.45050, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := droneclaim.Parse(tc.msg, droneclaim.KindAuto)
			if err != nil {
				t.Fatal(err)
			}
			c := m.Claim
			if m.Kind != tc.kind || c.ID != tc.id || c.MAC != tc.mac || c.OperatorID != tc.opID || c.SelfID != tc.selfID {
				t.Errorf("kind %v id %q mac %q op %q self %q", m.Kind, c.ID, c.MAC, c.OperatorID, c.SelfID)
			}
			if !c.HasRSSI || c.RSSI != tc.rssi || !c.HasPosition || !near(c.Lat, tc.lat) || !near(c.Lon, tc.lon) {
				t.Errorf("rssi %v/%v position %v %v,%v", c.HasRSSI, c.RSSI, c.HasPosition, c.Lat, c.Lon)
			}
			if c.GeoAltM != tc.geoAlt || c.HeightM != tc.height || c.SpeedMps != tc.speed || c.VSpeedMps != tc.vspeed || c.DirDeg != tc.dir {
				t.Errorf("alt %v height %v speed %v vspeed %v dir %v", c.GeoAltM, c.HeightM, c.SpeedMps, c.VSpeedMps, c.DirDeg)
			}
			if !c.HasOperator || !near(c.OperatorLat, tc.opLat) || !near(c.OperatorLon, tc.opLon) || c.HasHome != tc.hasHome {
				t.Errorf("operator %v %v,%v home %v", c.HasOperator, c.OperatorLat, c.OperatorLon, c.HasHome)
			}
			if c.FrequencyHz != tc.freq || c.Status != 2 || c.UAType != 2 || c.IDType != 1 {
				t.Errorf("freq %v status %d ua %d idtype %d", c.FrequencyHz, c.Status, c.UAType, c.IDType)
			}
		})
	}
}

func TestStatusSample(t *testing.T) {
	b, err := os.ReadFile(testshared.Path(t, "data", "sensors", "wardragon_status.json"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := droneclaim.Parse(b, droneclaim.KindAuto)
	if err != nil {
		t.Fatal(err)
	}
	s := m.Status
	if m.Kind != droneclaim.KindStatus || s.Serial != "wardragon-example-kit" || !s.HasPosition ||
		s.Lat != 51.47001 || s.Lon != -0.45401 || s.AltM != 24 || !s.GPSFix || s.CPUPercent != 17 || s.TempC != 51 {
		t.Errorf("status %+v", m)
	}
}

// TestPackDecodes re-encodes each sample as F3411 and decodes it with
// cuasd's own Remote ID decoder: the identity, position and operator
// survive, within F3411's resolution.
func TestPackDecodes(t *testing.T) {
	msgs := append(lines(t, "wardragon_rid.jsonl"), lines(t, "esp32.jsonl")...)
	msgs = append(msgs, lines(t, "wardragon_dji.jsonl")...)
	for _, b := range msgs {
		m, err := droneclaim.Parse(b, droneclaim.KindAuto)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(m.Claim.ID, func(t *testing.T) {
			pack, err := m.Claim.AppendPack(nil)
			if err != nil {
				t.Fatal(err)
			}
			var f remoteid.Frame
			if err := remoteid.DecodeCarrier(remoteid.CarrierPack, pack, &f); err != nil {
				t.Fatal(err)
			}
			o := remoteid.FrameObservation(&f, 1, "s")
			c := m.Claim
			if o.Key != c.ID || o.UASID != c.ID || !o.HasPosition || math.Abs(o.Lat-c.Lat) > 1e-7 || math.Abs(o.Lon-c.Lon) > 1e-7 {
				t.Errorf("observation %+v", o)
			}
			if !o.HasOperatorPosition || math.Abs(o.OperatorLat-c.OperatorLat) > 1e-7 || o.OperatorID != c.OperatorID {
				t.Errorf("operator %+v", o)
			}
			if !o.HasVelocity || math.Abs(o.SpeedMps-c.SpeedMps) > 0.25 || !o.HasAltitude || math.Abs(o.AltM-c.GeoAltM) > 0.5 {
				t.Errorf("kinematics %+v", o)
			}
		})
	}
}

// TestBadInput: every kind of bad input the feeds produce is refused with
// its reason, never accepted and never a panic.
func TestBadInput(t *testing.T) {
	tests := []struct{ name, msg, reason string }{
		{"empty", "  ", "empty"},
		{"not json", "hello", "invalid_json"},
		{"unescaped string", `[{"Self-ID Message": {"text": "say "hi""}}]`, "invalid_json"},
		{"truncated", `[{"Basic ID": {"id": "ABC", "MAC": "AA:BB`, "invalid_json"},
		{"scalar", `42`, "shape"},
		{"list of strings", `["Basic ID"]`, "no_identity"},
		{"message not object", `[{"Basic ID": "ABC"}]`, "type"},
		{"latitude 91", `[{"Basic ID": {"id": "X1"}}, {"Location/Vector Message": {"latitude": 91, "longitude": 0.1}}]`, "range"},
		{"speed fast", `[{"Basic ID": {"id": "X1"}}, {"Location/Vector Message": {"latitude": 51, "longitude": 0.1, "speed": "fast"}}]`, "type"},
		{"speed in knots", `{"id": "X1", "lat": 51, "lon": 0.1, "speed": "12 kt"}`, "type"},
		{"negative speed", `{"id": "X1", "lat": 51, "lon": 0.1, "speed": -3}`, "range"},
		{"id is object", `{"id": {"a": 1}, "lat": 51, "lon": 0.1}`, "type"},
		{"no id", `[{"Location/Vector Message": {"latitude": 51, "longitude": 0.1}}]`, "no_identity"},
		{"id too long", `{"id": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "lat": 51, "lon": 0.1}`, "range"},
		{"ua_type 99", `[{"Basic ID": {"id": "X1", "ua_type": 99}}]`, "range"},
		{"status without serial", `{"gps_data": {"latitude": 51, "longitude": 0}}`, "no_identity"},
		{"status latitude string", `{"serial_number": "k", "gps_data": {"latitude": "north", "longitude": 0}}`, "type"},
		{"oversized", `{"id": "` + strings.Repeat("A", droneclaim.MaxMessageBytes) + `"}`, "oversized"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := droneclaim.Parse([]byte(tc.msg), droneclaim.KindAuto)
			if got := droneclaim.ReasonOf(err); err == nil || got != tc.reason {
				t.Errorf("reason %q (err %v), want %q", got, err, tc.reason)
			}
		})
	}
}

// TestVariants: the other spellings found in the public producers and
// consumers of these feeds.
func TestVariants(t *testing.T) {
	tests := []struct {
		name, msg string
		hint      droneclaim.Kind
		check     func(droneclaim.Message) bool
	}{
		{"mac and rssi at item level", `[{"MAC": "aa:bb:cc:00:00:01", "RSSI": -50}, {"Basic ID": {"id": "X1"}}]`, droneclaim.KindAuto,
			func(m droneclaim.Message) bool { return m.Claim.MAC == "AA:BB:CC:00:00:01" && m.Claim.RSSI == -50 }},
		{"ua_type by name", `[{"Basic ID": {"id": "X1", "ua_type": "Helicopter (or Multirotor)"}}]`, droneclaim.KindAuto,
			func(m droneclaim.Message) bool { return m.Claim.UAType == 2 }},
		{"dji by hint", `[{"Basic ID": {"id": "X1"}}]`, droneclaim.KindDJI,
			func(m droneclaim.Message) bool { return m.Kind == droneclaim.KindDJI }},
		{"frequency_mhz", `[{"Basic ID": {"id": "X1", "frequency_mhz": 5745.0}}]`, droneclaim.KindAuto,
			func(m droneclaim.Message) bool { return m.Claim.FrequencyHz == 5745e6 }},
		{"serial beats caa", `[{"Basic ID": {"id": "SER1", "id_type": "Serial Number (ANSI/CTA-2063-A)"}}, {"Basic ID": {"id": "CAA1", "id_type": "CAA Assigned Registration ID"}}]`,
			droneclaim.KindAuto, func(m droneclaim.Message) bool { return m.Claim.ID == "SER1" && m.Claim.IDType == 1 }},
		{"flat forwarder", `{"mac": "aa:bb:cc:00:00:02", "rssi": "-80 dBm", "channel": 6, "id": "FLAT1", "lat": 51.1, "lon": -0.2, "alt": 100, "speed": 4, "heading": 90, "pilot_lat": 51.2, "pilot_lon": -0.3}`,
			droneclaim.KindAuto, func(m droneclaim.Message) bool {
				c := m.Claim
				return c.ID == "FLAT1" && c.RSSI == -80 && c.Lat == 51.1 && c.GeoAltM == 100 && c.DirDeg == 90 && c.OperatorLat == 51.2
			}},
		{"zero position is unknown", `[{"Basic ID": {"id": "X1"}}, {"Location/Vector Message": {"latitude": 0.0, "longitude": 0.0}}]`, droneclaim.KindAuto,
			func(m droneclaim.Message) bool { return !m.Claim.HasPosition }},
		// The fixtures of DragonSync's tests/test_telemetry_parser.py.
		{"opendroneid ua_type names", `{"Basic ID": {"id": "CAA-XYZ", "id_type": "CAA Assigned Registration ID", "ua_type": "Other type", "MAC": "CC:DD", "RSSI": -70}, "Location/Vector Message": {"latitude": 1.0, "longitude": 2.0}}`,
			droneclaim.KindAuto, func(m droneclaim.Message) bool {
				return m.Claim.UAType == 15 && m.Claim.IDType == 2 && m.Claim.ID == "CAA-XYZ"
			}},
		{"fixed wing name", `[{"Basic ID": {"id": "FW1", "ua_type": "Aeroplane/Airplane (Fixed wing)"}}]`, droneclaim.KindAuto,
			func(m droneclaim.Message) bool { return m.Claim.UAType == 1 }},
		{"unknown label is unknown", `[{"Basic ID": {"id": "U1", "ua_type": "Flying saucer"}}, {"Location/Vector Message": {"latitude": 1, "longitude": 2, "op_status": "Hovering"}}]`,
			droneclaim.KindAuto, func(m droneclaim.Message) bool {
				return m.Claim.UAType == 0 && m.Claim.Status == 0 && m.Claim.HasPosition
			}},
		{"invalid list items skipped", `["invalid item", {"Basic ID": {"id": "MIXED_TEST"}}, null, {"Location/Vector Message": {"latitude": 1.0, "longitude": 2.0}}]`,
			droneclaim.KindAuto, func(m droneclaim.Message) bool { return m.Claim.ID == "MIXED_TEST" && m.Claim.Lat == 1 }},
		{"nulls and accuracy texts", `[{"Basic ID": {"id": "NONE_TEST", "ua_type": null, "MAC": null}}, {"Location/Vector Message": {"latitude": 1.0, "longitude": 2.0, "direction": null, "speed": null, "horizontal_accuracy": "< 10 m", "timestamp": "3600.5", "timestamp_accuracy": "0.1s", "ew_dir_segment": "East"}}]`,
			droneclaim.KindAuto, func(m droneclaim.Message) bool { return !m.Claim.HasSpeed && !m.Claim.HasDir && !m.Claim.HasTimestamp }},
		// Shapes of DragonSync's scenario generator and the AntSDR bridge.
		{"ble items with AUX_ADV_IND", `[{"Basic ID": {"id": "BLE1"}, "AUX_ADV_IND": {"rssi": -77}, "aext": {"AdvA": "aa:bb:cc:dd:ee:ff 00:11:22:33:44:55"}}, {"Location/Vector Message": {"latitude": 1, "longitude": 2}, "AUX_ADV_IND": {"rssi": -77}}]`,
			droneclaim.KindAuto, func(m droneclaim.Message) bool { return m.Claim.RSSI == -77 && m.Claim.MAC == "AA:BB:CC:DD:EE:FF" }},
		{"one item holding everything, frequency in MHz", `[{"MAC": "AA:BB:CC:DD:EE:FF", "RSSI": -65, "Basic ID": {"id": "ABC123DEF456", "ua_type": 2}, "Location/Vector Message": {"latitude": 40.7128, "longitude": -74.006, "timestamp": "0.0 seconds past the hour"}, "System Message": {"latitude": 40.713, "longitude": -74.0055}}, {"Frequency Message": {"frequency": 2437.0}}]`,
			droneclaim.KindAuto, func(m droneclaim.Message) bool {
				return m.Kind == droneclaim.KindDJI && m.Claim.FrequencyHz == 2437e6 && m.Claim.OperatorLat == 40.713 && m.Claim.RSSI == -65
			}},
		{"frequency null", `[{"Basic ID": {"id": "D1"}}, {"Frequency Message": {"frequency": null}}]`, droneclaim.KindAuto,
			func(m droneclaim.Message) bool { return m.Kind == droneclaim.KindDJI && !m.Claim.HasFrequency }},
		{"location with only a MAC", `{"MAC": "aa:bb:cc:00:00:07", "RSSI": -80, "Location/Vector Message": {"latitude": 51, "longitude": 0.1}}`,
			droneclaim.KindAuto, func(m droneclaim.Message) bool {
				return m.Claim.ID == "" && m.Claim.MAC == "AA:BB:CC:00:00:07" && m.Claim.HasPosition
			}},
		{"gps_fix as gpsd mode", `{"serial_number": "k", "gps_data": {"latitude": 1, "longitude": 2, "gps_fix": 3}}`, droneclaim.KindAuto,
			func(m droneclaim.Message) bool { return m.Kind == droneclaim.KindStatus && m.Status.GPSFix }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := droneclaim.Parse([]byte(tc.msg), tc.hint)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(m) {
				t.Errorf("got %+v", m)
			}
		})
	}
}

// TestProductClaim (issue 25): the AntSDR's shape (the product name as the
// Basic ID description, no Self-ID) and a relayed product type number are
// kept; a product type that is not a byte is refused.
func TestProductClaim(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		text      string
		code      uint16
		reason    string
	}{
		{"antsdr description", `[{"Basic ID": {"id_type": "Serial Number (ANSI/CTA-2063-A)", "id": "3NZEXAMPLEDJI003", "description": "Mavic 3 Classic", "RSSI": -70}}, {"Frequency Message": {"frequency": 2437000000}}]`, "Mavic 3 Classic", 0, ""},
		{"self-id wins over description", `[{"Self-ID Message": {"text": "DJI Mavic 3"}}, {"Basic ID": {"id": "3NZEXAMPLEDJI003", "description": "DJI Drone"}}]`, "DJI Mavic 3", 0, ""},
		{"product type number", `[{"Basic ID": {"id": "3NZEXAMPLEDJI003", "product_type": 68}}]`, "", 68, ""},
		{"product type as a string", `{"id": "3NZEXAMPLEDJI003", "product_type": "67", "lat": 51.4, "lon": -0.4}`, "", 67, ""},
		{"product type not whole", `[{"Basic ID": {"id": "3NZEXAMPLEDJI003", "product_type": 68.5}}]`, "", 0, "type"},
		{"product type over a byte", `[{"Basic ID": {"id": "3NZEXAMPLEDJI003", "product_type": 300}}]`, "", 0, "range"},
		{"product type a word", `[{"Basic ID": {"id": "3NZEXAMPLEDJI003", "product_type": "Mavic"}}]`, "", 0, "type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := droneclaim.Parse([]byte(tc.msg), droneclaim.KindDJI)
			if tc.reason != "" {
				if droneclaim.ReasonOf(err) != tc.reason {
					t.Fatalf("err %v, want reason %s", err, tc.reason)
				}
				return
			}
			if err != nil || m.Claim.SelfID != tc.text || m.Claim.ProductType != tc.code {
				t.Fatalf("%v: self %q product type %d", err, m.Claim.SelfID, m.Claim.ProductType)
			}
		})
	}
}
