package remoteid

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// The reference vectors are testdata/remoteid.json, a verbatim copy of
// shared/vectors/remoteid.json: bytes encoded by opendroneid-core-c from known
// inputs, with "expect" = the library's own decode (see its "source").

type vectorFile struct {
	Source         string   `json:"source"`
	EncoderRejects []reject `json:"encoder_rejects"`
	Vectors        []vector `json:"vectors"`
}

type reject struct {
	Input        string `json:"input"`
	EncodeResult string `json:"encode_result"`
}

type vector struct {
	ID              string          `json:"id"`
	Kind            string          `json:"kind"`
	Valid           bool            `json:"valid"`
	Hex             string          `json:"hex"`
	ProtocolVersion *int            `json:"protocol_version"`
	Note            string          `json:"note"`
	Input           map[string]any  `json:"input"`
	Expect          json.RawMessage `json:"expect"`
	LibraryDecoded  map[string]any  `json:"library_decoded"`
	LibraryDecode   string          `json:"library_decodeOpenDroneID"`
}

func loadVectors(t testing.TB) vectorFile {
	t.Helper()
	b, err := os.ReadFile("testdata/remoteid.json")
	if err != nil {
		t.Fatal(err)
	}
	var vf vectorFile
	if err := json.Unmarshal(b, &vf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(vf.Source, "opendroneid-core-c") {
		t.Fatalf("testdata/remoteid.json lost its source line: %q", vf.Source)
	}
	return vf
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// toMap renders a view through encoding/json, as the API does.
func toMap(t testing.TB, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// sentinelToNull maps the library's "unknown" values, which the vectors show
// as numbers, to the null this decoder reports for them (its documented
// policy: unknown is null, the raw value is kept). Only exact sentinel values
// are mapped, per field.
func sentinelToNull(kind string, exp map[string]any) map[string]any {
	out := make(map[string]any, len(exp))
	for k, v := range exp {
		out[k] = v
	}
	num := func(k string) (float64, bool) {
		f, ok := out[k].(float64)
		return f, ok
	}
	nullIf := func(k string, sentinel float64) {
		if f, ok := num(k); ok && f == sentinel {
			out[k] = nil
		}
	}
	switch kind {
	case "location":
		nullIf("direction_deg", 361)
		nullIf("speed_vertical_mps", 63)
		if f, ok := num("speed_horizontal_mps"); ok && f == 255 {
			out["speed_horizontal_mps"] = nil
		}
		for _, k := range []string{"altitude_baro_m", "altitude_geo_m", "height_m"} {
			nullIf(k, -1000)
		}
		nullIf("timestamp_s", 6553.5)
		if la, _ := num("latitude_deg"); la == 0 {
			if lo, _ := num("longitude_deg"); lo == 0 {
				out["latitude_deg"], out["longitude_deg"] = nil, nil
			}
		}
		// Policy: timestamp accuracy 0 means unknown, reported as null; the
		// library reports 0 s, which would claim a perfect clock.
		if a, ok := num("ts_accuracy"); ok && a == 0 {
			nullIf("ts_accuracy_s", 0)
		}
		// Library typo: horizontal accuracy enum 2 is 4 NM = 7408 m, not 7808.
		if f, ok := num("horiz_accuracy_m"); ok && f == 7808 {
			out["horiz_accuracy_m"] = 7408.0
		}
	case "system":
		for _, k := range []string{"area_ceiling_m", "area_floor_m", "operator_altitude_geo_m"} {
			nullIf(k, -1000)
		}
		if la, _ := num("operator_latitude_deg"); la == 0 {
			if lo, _ := num("operator_longitude_deg"); lo == 0 {
				out["operator_latitude_deg"], out["operator_longitude_deg"] = nil, nil
			}
		}
	}
	return out
}

// compareFields checks every expected key against got, numbers to 1e-9.
func compareFields(t *testing.T, where string, exp, got map[string]any) {
	t.Helper()
	for k, ev := range exp {
		gv, ok := got[k]
		if !ok {
			t.Errorf("%s: field %q missing from decode", where, k)
			continue
		}
		if !sameValue(ev, gv) {
			t.Errorf("%s: %s = %v, want %v", where, k, gv, ev)
		}
	}
}

func sameValue(e, g any) bool {
	switch ev := e.(type) {
	case float64:
		gv, ok := g.(float64)
		return ok && math.Abs(ev-gv) <= 1e-9*math.Max(1, math.Abs(ev))
	case map[string]any:
		gm, ok := g.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range ev {
			if !sameValue(v, gm[k]) {
				return false
			}
		}
		return true
	default:
		return fmt.Sprint(e) == fmt.Sprint(g)
	}
}

// expectedWarnings lists the vectors that the library encodes without
// complaint but whose bytes hold a value F3411 reserves, as the vector's own
// note says; every other valid vector must decode without warnings.
var expectedWarnings = map[string]Warnings{
	// note: "operator location type 3 (reserved, 2-bit field accepted by encoder)"
	"system_op_loc_reserved3": 1 << WarnOperatorLocationTypeReserved,
}

var singleKinds = map[string]bool{
	"basic_id": true, "location": true, "auth": true, "self_id": true, "system": true, "operator_id": true,
}

func TestVectorsValidSingleMessages(t *testing.T) {
	vf := loadVectors(t)
	n := 0
	for _, v := range vf.Vectors {
		if !v.Valid || !singleKinds[v.Kind] {
			continue
		}
		n++
		t.Run(v.ID, func(t *testing.T) {
			var m Message
			if err := Decode(mustHex(t, v.Hex), &m); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if m.Type.String() != v.Kind {
				t.Fatalf("type %s, want %s", m.Type, v.Kind)
			}
			if v.ProtocolVersion != nil && int(m.Version) != *v.ProtocolVersion {
				t.Errorf("version %d, want %d", m.Version, *v.ProtocolVersion)
			}
			if m.Warnings != expectedWarnings[v.ID] {
				t.Errorf("valid vector drew warnings %v, want %v", m.Warnings.List(), expectedWarnings[v.ID].List())
			}
			var exp map[string]any
			if err := json.Unmarshal(v.Expect, &exp); err != nil {
				t.Fatal(err)
			}
			compareFields(t, v.ID, sentinelToNull(v.Kind, exp), toMap(t, NewMessageView(&m)))
		})
	}
	if n == 0 {
		t.Fatal("no valid single-message vectors found")
	}
	t.Logf("%d valid single-message vectors", n)
}

type packExpect struct {
	SingleMessageSize int `json:"single_message_size"`
	MessageCount      int `json:"message_count"`
	Messages          []struct {
		Kind   string         `json:"kind"`
		Hex    string         `json:"hex"`
		Expect map[string]any `json:"expect"`
	} `json:"messages"`
}

func TestVectorsValidPacks(t *testing.T) {
	vf := loadVectors(t)
	n := 0
	for _, v := range vf.Vectors {
		if !v.Valid || v.Kind != "message_pack" {
			continue
		}
		n++
		t.Run(v.ID, func(t *testing.T) {
			var pe packExpect
			if err := json.Unmarshal(v.Expect, &pe); err != nil {
				t.Fatal(err)
			}
			var p Pack
			b := mustHex(t, v.Hex)
			if err := DecodePack(b, &p); err != nil {
				t.Fatalf("DecodePack: %v", err)
			}
			if p.Count != pe.MessageCount || int(b[1]) != pe.SingleMessageSize {
				t.Fatalf("count %d size %d, want %d %d", p.Count, b[1], pe.MessageCount, pe.SingleMessageSize)
			}
			if w := p.AllWarnings(); w != 0 {
				t.Errorf("valid pack drew warnings %v", w.List())
			}
			checkPackMessages(t, v.ID, &p, pe)
		})
	}
	if n == 0 {
		t.Fatal("no valid pack vectors")
	}
}

func checkPackMessages(t *testing.T, id string, p *Pack, pe packExpect) {
	t.Helper()
	if p.Count != len(pe.Messages) {
		t.Fatalf("%s: %d messages, want %d", id, p.Count, len(pe.Messages))
	}
	for i, em := range pe.Messages {
		m := &p.Messages[i]
		if m.Type.String() != em.Kind {
			t.Errorf("%s[%d]: type %s, want %s", id, i, m.Type, em.Kind)
			continue
		}
		if em.Hex != "" && hex.EncodeToString(m.Bytes[:]) != em.Hex {
			t.Errorf("%s[%d]: bytes %x, want %s", id, i, m.Bytes, em.Hex)
		}
		compareFields(t, fmt.Sprintf("%s[%d]", id, i), sentinelToNull(em.Kind, em.Expect), toMap(t, NewMessageView(m)))
	}
}

// malformedPolicy is this decoder's documented policy for each malformed
// vector (docs/design/remoteid.md): "error@N" = refused naming byte N, else
// the warning codes it must carry.
var malformedPolicy = map[string]string{
	"basic_idtype_reserved_5":         "id_type_reserved uas_id_empty",
	"bad_len_24":                      "error@24",
	"unknown_protocol_version_15":     "error@0",
	"protocol_version_0_location":     "legacy_protocol_version",
	"loc_status_reserved_7":           "status_reserved",
	"loc_reserved_bit_set":            "reserved_bits_set",
	"loc_direction_out_of_range":      "direction_out_of_range",
	"loc_timestamp_over_hour":         "timestamp_out_of_range",
	"loc_latitude_out_of_range":       "latitude_out_of_range",
	"auth_p0_last_page_16":            "error@2",
	"system_reserved_classification":  "classification_type_reserved reserved_bits_set",
	"system_protocol_v1_no_timestamp": "legacy_protocol_version",
	"pack_count_zero":                 "error@2",
	"pack_count_10":                   "error@2",
	"pack_nested_pack":                "error@28",
	"pack_inner_bad_type":             "error@28",
	"pack_two_locations":              "duplicate_message",
	"bad_type_nibble_0x6":             "error@0",
	"bad_type_nibble_0xA":             "error@0",
	"bad_type_nibble_0xE":             "error@0",
}

// Every malformed vector must give an error or a warning, never a silent
// pass; where the library decoded it, the fields this decoder reports must
// agree with the library's except where the documented policy differs.
func TestVectorsMalformed(t *testing.T) {
	vf := loadVectors(t)
	n := 0
	for _, v := range vf.Vectors {
		if v.Valid {
			continue
		}
		n++
		t.Run(v.ID, func(t *testing.T) {
			if malformedPolicy[v.ID] == "" {
				t.Fatalf("malformed vector %s has no policy entry", v.ID)
			}
			b := mustHex(t, v.Hex)
			var f Frame
			err := DecodeCarrier(CarrierAuto, b, &f)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("error %v is not an *Error", err)
				}
				if e.Offset < 0 || e.Offset > len(b) || e.Reason == "" {
					t.Errorf("error %v: offset/reason not useful", err)
				}
				t.Logf("error: %v", err)
				if want := malformedPolicy[v.ID]; want != fmt.Sprintf("error@%d", e.Offset) {
					t.Errorf("policy: got error@%d, want %s", e.Offset, want)
				}
				return
			}
			w := f.Pack.AllWarnings()
			if w == 0 {
				t.Fatalf("malformed vector passed silently (library: %s)", v.Note)
			}
			t.Logf("warnings: %v", w.List())
			if want := malformedPolicy[v.ID]; !strings.Contains(want, "@") {
				for _, code := range strings.Fields(want) {
					if !strings.Contains(fmt.Sprint(w.List()), code) {
						t.Errorf("policy: warnings %v lack %s", w.List(), code)
					}
				}
			} else {
				t.Errorf("policy: decoded with warnings, want %s", want)
			}
			if v.LibraryDecoded != nil && f.Pack.Count == 1 {
				exp := sentinelToNull(v.Kind, v.LibraryDecoded)
				m := &f.Pack.Messages[0]
				if m.Type == TypeSystem && !m.System.HasTimestamp {
					// Policy: versions before 2 have no System timestamp; the
					// library reads the reserved zeros as 2019-01-01.
					exp["timestamp"], exp["timestamp_unix"] = nil, nil
				}
				compareFields(t, v.ID, exp, toMap(t, NewMessageView(m)))
			}
		})
	}
	t.Logf("%d malformed vectors", n)
}

func TestVectorWiFiBeacon(t *testing.T) {
	v := findVector(t, "wifi_beacon_pack5")
	var exp struct {
		VendorIEOffset int    `json:"vendor_ie_offset"`
		OUI            string `json:"oui"`
		OUIType        int    `json:"oui_type"`
		Counter        int    `json:"message_counter"`
		PackOffset     int    `json:"pack_offset"`
		PackCount      int    `json:"pack_message_count"`
	}
	if err := json.Unmarshal(v.Expect, &exp); err != nil {
		t.Fatal(err)
	}
	b := mustHex(t, v.Hex)
	var f Frame
	if err := DecodeWiFiBeacon(b, &f); err != nil {
		t.Fatal(err)
	}
	if b[exp.VendorIEOffset] != ieVendor || hex.EncodeToString(b[exp.VendorIEOffset+2:exp.VendorIEOffset+5]) != exp.OUI ||
		int(b[exp.VendorIEOffset+5]) != exp.OUIType {
		t.Fatalf("vector's vendor IE offset does not hold the IE")
	}
	if f.Transport != TransportWiFiBeacon || int(f.Counter) != exp.Counter || f.PayloadOffset != exp.PackOffset ||
		f.Pack.Count != exp.PackCount || f.Single {
		t.Errorf("got transport %v counter %d offset %d count %d", f.Transport, f.Counter, f.PayloadOffset, f.Pack.Count)
	}
	// The same pack as pack_5_msgs.
	var pe packExpect
	if err := json.Unmarshal(findVector(t, "pack_5_msgs").Expect, &pe); err != nil {
		t.Fatal(err)
	}
	checkPackMessages(t, v.ID, &f.Pack, pe)
	if FormatMAC(f.Transmitter) != "02:11:22:33:44:55" {
		t.Errorf("transmitter %s", FormatMAC(f.Transmitter))
	}
}

func TestVectorWiFiNAN(t *testing.T) {
	v := findVector(t, "wifi_nan_action_pack5")
	var exp struct {
		SourceMAC string  `json:"source_mac"`
		Lat       float64 `json:"latitude_deg"`
		Lon       float64 `json:"longitude_deg"`
		BasicID0  string  `json:"basic_id_0"`
		Operator  string  `json:"operator_id"`
	}
	if err := json.Unmarshal(v.Expect, &exp); err != nil {
		t.Fatal(err)
	}
	var f Frame
	if err := DecodeCarrier(CarrierAuto, mustHex(t, v.Hex), &f); err != nil {
		t.Fatal(err)
	}
	if f.Transport != TransportWiFiNAN {
		t.Fatalf("transport %v", f.Transport)
	}
	if got := strings.ReplaceAll(FormatMAC(f.Transmitter), ":", ""); got != exp.SourceMAC {
		t.Errorf("source %s, want %s", got, exp.SourceMAC)
	}
	var sawLoc, sawID, sawOp bool
	for i := 0; i < f.Pack.Count; i++ {
		m := &f.Pack.Messages[i]
		switch m.Type {
		case TypeLocation:
			lat, lon, _ := m.Location.Position()
			sawLoc = math.Abs(lat-exp.Lat) < 1e-9 && math.Abs(lon-exp.Lon) < 1e-9
		case TypeBasicID:
			id, _ := m.BasicID.UASID()
			sawID = id == exp.BasicID0
		case TypeOperatorID:
			op, _ := m.OperatorID.Text()
			sawOp = op == exp.Operator
		}
	}
	if !sawLoc || !sawID || !sawOp {
		t.Errorf("location %v basic id %v operator %v", sawLoc, sawID, sawOp)
	}
}

func TestVectorBLE4(t *testing.T) {
	v := findVector(t, "ble4_ad_location")
	var exp struct {
		Counter int `json:"message_counter"`
		Message struct {
			Kind   string         `json:"kind"`
			Expect map[string]any `json:"expect"`
		} `json:"message"`
	}
	if err := json.Unmarshal(v.Expect, &exp); err != nil {
		t.Fatal(err)
	}
	var f Frame
	if err := DecodeCarrier(CarrierAuto, mustHex(t, v.Hex), &f); err != nil {
		t.Fatal(err)
	}
	if f.Transport != TransportBT4 || !f.Single || int(f.Counter) != exp.Counter {
		t.Fatalf("transport %v single %v counter %d", f.Transport, f.Single, f.Counter)
	}
	compareFields(t, v.ID, sentinelToNull(exp.Message.Kind, exp.Message.Expect), toMap(t, NewMessageView(&f.Pack.Messages[0])))
}

func findVector(t testing.TB, id string) vector {
	t.Helper()
	for _, v := range loadVectors(t).Vectors {
		if v.ID == id {
			return v
		}
	}
	t.Fatalf("vector %s not found", id)
	return vector{}
}

// Every vector is covered by one of the tests above.
func TestVectorsAllCovered(t *testing.T) {
	known := map[string]bool{"message_pack": true, "invalid": true, "wifi_beacon_frame": true,
		"wifi_nan_action_frame": true, "ble_legacy_adv_service_data": true}
	for k := range singleKinds {
		known[k] = true
	}
	for _, v := range loadVectors(t).Vectors {
		if !known[v.Kind] {
			t.Errorf("vector %s has kind %q no test handles", v.ID, v.Kind)
		}
		if !v.Valid && len(v.Hex) == 0 {
			t.Errorf("vector %s has no bytes", v.ID)
		}
	}
}
