package adsbjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/decode/adsb"
)

type vector struct {
	ID      string                    `json:"id"`
	Kind    string                    `json:"kind"`
	Hex     string                    `json:"hex"`
	Even    json.RawMessage           `json:"even"`
	Odd     json.RawMessage           `json:"odd"`
	Newest  string                    `json:"newest"`
	RefLat  *json.Number              `json:"ref_lat"`
	RefLon  *json.Number              `json:"ref_lon"`
	Expect  map[string]any            `json:"expect"`
	Derived map[string]map[string]any `json:"derived_here"`
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	b, err := os.ReadFile("../testdata/adsb.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&vs); err != nil {
		t.Fatal(err)
	}
	return vs
}

func roundTrip(t *testing.T, v any) map[string]any {
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

func ptr[T any](v T) *T { return &v }

// jsonKeys are the vector expect keys whose name and meaning are the same
// in this package's JSON: integers compared exactly, the rest to one unit
// of the last digit the source printed (it rounded).
var jsonKeys = map[string]bool{
	"df": true, "typecode": true, "altitude": true, "cpr_format": true, "cpr_lat": true, "cpr_lon": true,
	"movement_code": true, "vertical_rate": true, "geo_minus_baro": true, "selected_altitude": true,
	"nac_p": true, "sil": true, "nic_baro": true, "version": true, "nic_a": true, "gva": true, "sda": true,
	"nac_v": true, "emergency_state": true, "crc_remainder": true, "ca": true, "cf": true, "iid": true,
	"vs": true, "cc": true, "sl": true, "ri": true, "fs": true, "dr": true,
	"groundspeed": false, "track": false, "baro_pressure_setting": false, "selected_heading": false,
}

// skipKeys are (vector, key) pairs a single frame cannot reproduce or that
// this JSON leaves out on purpose.
var skipKeys = map[string]string{
	"adsbx-1bit-fixed-a48e3a/nac_p":            "dump1090's per-aircraft state, not this frame",
	"adsbx-1bit-fixed-a48e3a/sil":              "dump1090's per-aircraft state, not this frame",
	"deku-df18-adsr-opstatus-surface/nic_baro": "a surface operational status has no NICbaro (bit 53 is TRK/HDG); the JSON omits it rather than print 0",
}

// printedTol is one unit of the last digit of a printed number.
func printedTol(n json.Number) float64 {
	s := string(n)
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return math.Pow(10, -float64(len(s)-i-1))
	}
	return 1
}

func num(x any) float64 {
	f, _ := x.(json.Number).Float64()
	return f
}

var jsonStrings = []string{"icao", "callsign", "squawk", "address", "bds"}

// TestVectorsThroughJSON sends every single-frame vector through the hex
// form and compares the JSON with the vector's published values.
func TestVectorsThroughJSON(t *testing.T) {
	n, checks := 0, 0
	for _, v := range loadVectors(t) {
		if v.Hex == "" || v.Derived["hex"]["crc_ok"] == false {
			continue
		}
		n++
		resp, p := Decode(Request{Hex: &v.Hex})
		if p != nil {
			t.Errorf("%s: %v", v.ID, p)
			continue
		}
		m := roundTrip(t, resp.Messages[0])
		for k, exact := range jsonKeys {
			want, ok := v.Expect[k].(json.Number)
			if !ok || skipKeys[v.ID+"/"+k] != "" {
				continue
			}
			got, ok := m[k].(float64)
			if !ok {
				t.Errorf("%s: %s missing from %v", v.ID, k, m)
				continue
			}
			checks++
			tol := printedTol(want) + 1e-9
			if exact {
				tol = 0
			}
			if w := num(want); math.Abs(got-w) > tol {
				t.Errorf("%s: %s = %v, want %v", v.ID, k, got, w)
			}
		}
		for _, k := range jsonStrings {
			want, ok := v.Expect[k].(string)
			if !ok {
				continue
			}
			checks++
			if got, _ := m[k].(string); !strings.EqualFold(got, want) {
				t.Errorf("%s: %s = %q, want %q", v.ID, k, got, want)
			}
		}
		if c, ok := v.Expect["category"].(string); ok {
			checks++
			if m["category"] != c {
				t.Errorf("%s: category %v, want %s", v.ID, m["category"], c)
			}
		}
	}
	t.Logf("%d vectors, %d field comparisons", n, checks)
}

// TestPairsThroughJSON sends the pair vectors through the pair form.
func TestPairsThroughJSON(t *testing.T) {
	n := 0
	for _, v := range loadVectors(t) {
		if len(v.Even) == 0 || v.Even[0] != '"' {
			continue
		}
		var e, o string
		_ = json.Unmarshal(v.Even, &e)
		_ = json.Unmarshal(v.Odd, &o)
		req := Request{Even: &e, Odd: &o, Newest: v.Newest}
		if v.RefLat != nil {
			lat, _ := v.RefLat.Float64()
			lon, _ := v.RefLon.Float64()
			req.Reference = &Reference{Lat: &lat, Lon: &lon}
		}
		if v.Derived["even"]["crc_ok"] == false {
			// Zeroed parity: the endpoint refuses to decode it.
			if _, p := Decode(req); p == nil || p.Status != 422 || !strings.Contains(p.Detail, "CRC") {
				t.Errorf("%s: want a 422 CRC problem, got %v", v.ID, p)
			}
			continue
		}
		n++
		resp, p := Decode(req)
		switch v.Kind {
		case "cpr_global_airborne_reject":
			if p == nil || p.Status != 422 || !strings.Contains(p.Detail, "airborne and the other a surface") {
				t.Errorf("%s: want a 422, got %v %+v", v.ID, p, resp.Position)
			}
			continue
		case "cpr_pathological":
			// The pair alone resolves (to where pyModeS put it); with the
			// reporter's reference, Dublin airport, it must be refused.
			if p != nil {
				t.Errorf("%s: %v", v.ID, p)
			}
			req.Reference = &Reference{Lat: ptr(53.4214), Lon: ptr(-6.2701)}
			if _, p := Decode(req); p == nil || p.Status != 422 || p.Field != "reference" {
				t.Errorf("%s: with the Dublin reference want a 422, got %v", v.ID, p)
			}
			continue
		}
		if p != nil {
			t.Errorf("%s: %v", v.ID, p)
			continue
		}
		wl, wo := num(v.Expect["lat"]), num(v.Expect["lon"])
		tolLat, tolLon := printedTol(v.Expect["lat"].(json.Number)), printedTol(v.Expect["lon"].(json.Number))
		if x, ok := v.Expect["tolerance_deg"]; ok {
			tolLat, tolLon = num(x), num(x)
		}
		if x, ok := v.Expect["tolerance_rel"]; ok {
			tolLat, tolLon = num(x)*math.Abs(wl), num(x)*math.Abs(wo)
		}
		if x, ok := v.Expect["decimals"]; ok {
			tolLat = math.Pow(10, -num(x))
			tolLon = tolLat
		}
		if math.Abs(resp.Position.Lat-wl) > tolLat+1e-12 || math.Abs(resp.Position.Lon-wo) > tolLon+1e-12 {
			t.Errorf("%s: position %+v, want (%v, %v)", v.ID, resp.Position, wl, wo)
		}
		newest := resp.Messages[0]
		if v.Newest == "odd" {
			newest = resp.Messages[1]
		}
		if newest.Lat == nil || *newest.Lat != resp.Position.Lat {
			t.Errorf("%s: the newest message does not carry the position", v.ID)
		}
		wantMethod := "cpr_global_airborne"
		if strings.Contains(v.Kind, "surface") {
			wantMethod = "cpr_global_surface"
		}
		if resp.Position.Method != wantMethod {
			t.Errorf("%s: method %s, want %s", v.ID, resp.Position.Method, wantMethod)
		}
	}
	if n < 15 {
		t.Errorf("only %d pair vectors", n)
	}
}

func TestLocalThroughJSON(t *testing.T) {
	for _, v := range loadVectors(t) {
		if (v.Kind != "cpr_local_airborne" && v.Kind != "cpr_local_surface") || v.Derived["hex"]["crc_ok"] == false {
			continue
		}
		lat, _ := v.RefLat.Float64()
		lon, _ := v.RefLon.Float64()
		resp, p := Decode(Request{Hex: &v.Hex, Reference: &Reference{Lat: &lat, Lon: &lon}})
		if p != nil {
			t.Fatalf("%s: %v", v.ID, p)
		}
		tol := printedTol(v.Expect["lat"].(json.Number))
		if x, ok := v.Expect["tolerance_deg"]; ok {
			tol = num(x)
		}
		if resp.Position == nil || math.Abs(resp.Position.Lat-num(v.Expect["lat"])) > tol || math.Abs(resp.Position.Lon-num(v.Expect["lon"])) > tol {
			t.Errorf("%s: %+v, want %v %v", v.ID, resp.Position, v.Expect["lat"], v.Expect["lon"])
		}
		if !strings.HasPrefix(resp.Position.Method, "cpr_local_") || resp.Messages[0].Lat == nil {
			t.Errorf("%s: %+v", v.ID, resp)
		}
	}
}

func TestProblems(t *testing.T) {
	good := "8D406B902015A678D4D220AA4BDA"
	for _, c := range []struct {
		name   string
		req    Request
		status int
		field  string
		has    string
	}{
		{"no form", Request{}, 400, "", "exactly one"},
		{"two forms", Request{Hex: &good, Frames: []string{good}}, 400, "", "exactly one"},
		{"not hex", Request{Hex: ptr("8D40ZZ")}, 422, "hex", "not hexadecimal"},
		{"odd digits", Request{Hex: ptr("8D406")}, 422, "hex", "not hexadecimal"},
		{"empty", Request{Hex: ptr("  ")}, 422, "hex", "empty"},
		{"wrong length", Request{Hex: ptr("8D406B902015A678D4D220AA")}, 422, "hex", "12 bytes"},
		{"too long", Request{Hex: ptr(good + "00")}, 422, "hex", "longer than 14"},
		{"bad CRC", Request{Hex: ptr("8d4ca251204994b1c36e60a5343d")}, 422, "hex", "remainder 000010"},
		{"empty frames", Request{Frames: []string{}}, 400, "frames", "empty"},
		{"too many frames", Request{Frames: make([]string, MaxFrames+1)}, 400, "frames", "at most 1000"},
		{"pair without odd", Request{Even: &good}, 400, "", "both even and odd"},
		{"pair newest", Request{Even: &good, Odd: &good}, 400, "newest", "newest"},
		{"pair not position", Request{Even: &good, Odd: &good, Newest: "odd"}, 422, "even", "not a position"},
		{"pair swapped", Request{Even: ptr("8D40058B58C904A87F402D3B8C59"), Odd: ptr("8D40058B58C901375147EFD09357"), Newest: "odd"}, 422, "even", "F=1"},
		{"pair addresses", Request{Even: ptr("8D40058B58C901375147EFD09357"), Odd: ptr("8D40621D58C386435CC412692AD6"), Newest: "odd"}, 422, "", "different addresses"},
		{"surface without reference", Request{Even: ptr("903a23ff426a38565950432ebf95"), Odd: ptr("903a23ff426a4e65f7487a775d17"), Newest: "odd"}, 422, "", "needs a reference"},
		{"reference half", Request{Hex: &good, Reference: &Reference{Lat: ptr(1.0)}}, 400, "reference", "both"},
		{"reference range", Request{Hex: &good, Reference: &Reference{Lat: ptr(91.0), Lon: ptr(0.0)}}, 400, "reference.lat", "between"},
	} {
		_, p := Decode(c.req)
		if p == nil || p.Status != c.status || p.Field != c.field || !strings.Contains(p.Detail, c.has) {
			t.Errorf("%s: got %+v, want %d %q containing %q", c.name, p, c.status, c.field, c.has)
		}
	}
}

func TestFramesForm(t *testing.T) {
	frames := []string{
		"8D406B902015A678D4D220AA4BDA",
		"nonsense",
		"8d4ca251204994b1c36e60a5343d", // bad CRC
		"A0001839CA3800315800007448D9", // DF20, address from parity
		"8D40058B58C901375147EFD09357",
	}
	resp, p := Decode(Request{Frames: frames, Reference: &Reference{Lat: ptr(49.0), Lon: ptr(6.0)}})
	if p != nil {
		t.Fatal(p)
	}
	if len(resp.Messages) != len(frames) {
		t.Fatalf("%d results for %d frames", len(resp.Messages), len(frames))
	}
	for i, m := range resp.Messages {
		if m.Index == nil || *m.Index != i {
			t.Errorf("result %d has index %v", i, m.Index)
		}
	}
	if resp.Messages[0].Callsign != "EZY85MH" || resp.Messages[0].Error != "" {
		t.Errorf("frame 0: %+v", resp.Messages[0])
	}
	if resp.Messages[1].Error == "" || resp.Messages[1].Input != "nonsense" {
		t.Errorf("frame 1: %+v", resp.Messages[1])
	}
	if e := resp.Messages[2]; !strings.Contains(e.Error, "CRC") || *e.CRCRemainder != 16 || *e.DF != 17 {
		t.Errorf("frame 2: %+v", e)
	}
	if m := resp.Messages[3]; m.ICAO != "400940" || !m.AddressParity || m.CRCValid != nil {
		t.Errorf("frame 3: %+v", m)
	}
	// pyModeS's local decode of this frame with reference (49, 6).
	if m := resp.Messages[4]; m.Lat == nil || math.Abs(*m.Lat-49.8241) > 1e-3 || math.Abs(*m.Lon-6.06785) > 1e-3 {
		t.Errorf("frame 4: %+v", m)
	}
	if resp.Position != nil {
		t.Errorf("a batch has no single position")
	}
	if resp.Notice == "" {
		t.Errorf("no notice")
	}
}

func TestFix(t *testing.T) {
	bad := "8D406B902015A678D4D220AA4BDB"
	if _, p := Decode(Request{Hex: &bad}); p == nil || !strings.Contains(p.Detail, `"fix": true`) {
		t.Fatalf("without fix: %v", p)
	}
	resp, p := Decode(Request{Hex: &bad, Fix: true})
	if p != nil {
		t.Fatal(p)
	}
	m := resp.Messages[0]
	if m.BitErrorsFixed == nil || *m.BitErrorsFixed != 1 || m.Hex != "8D406B902015A678D4D220AA4BDA" || *m.CRCRemainder != 1 {
		t.Errorf("%+v", m)
	}
}

func TestJSONShape(t *testing.T) {
	// Field presence by kind: absent means "not in the frame".
	for hx, want := range map[string][]string{
		"8D406B902015A678D4D220AA4BDA": {"df", "icao", "typecode", "callsign", "category", "crc_valid", "crc_remainder", "bds"},
		"8D40058B58C901375147EFD09357": {"altitude", "altitude_source", "cpr_format", "cpr_lat", "cpr_lon", "nuc_p"},
		"8D485020994409940838175B284F": {"groundspeed", "track", "vertical_rate", "vr_source", "geo_minus_baro", "subtype", "nac_v"},
		"8d4400cd9b0000b4f87000e71a10": {"airspeed", "airspeed_type"},
		"8DA2C1B6E112B600000000760759": {"squawk", "emergency_state", "emergency"},
		"8DA05629EA21485CBF3F8CADAEEB": {"selected_altitude", "baro_pressure_setting", "selected_heading", "autopilot", "tcas_operational"},
		"8d0d097ef8230007005ab8547268": {"version", "nic_a", "nac_p", "sil", "gva", "sda", "capability", "operational_mode", "hrd"},
		"96A082FB213B1CF2113820D6EDDF": {"address", "address_type", "cf"},
		"972ae8d6d73e298fcaa6bec4c338": {"unsupported", "address_type"},
	} {
		resp, p := Decode(Request{Hex: &hx})
		if p != nil {
			t.Fatalf("%s: %v", hx, p)
		}
		m := roundTrip(t, resp.Messages[0])
		for _, k := range want {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: no %q in %v", hx, k, m)
			}
		}
		for _, k := range []string{"error", "lat", "lon", "index"} {
			if _, ok := m[k]; ok {
				t.Errorf("%s: unexpected %q", hx, k)
			}
		}
	}
	b, _ := json.Marshal(Response{Messages: []Message{}})
	if !bytes.Contains(b, []byte(`"messages":[]`)) {
		t.Errorf("empty messages encode as %s", b)
	}
}

// TestCommBJSON: pyModeS's vectors (tests/test_bds_commb.py and
// test_infer.py @ a49921bb, see decode/adsb/commb_test.go) through the
// endpoint's JSON, with pyModeS's field names.
func TestCommBJSON(t *testing.T) {
	one := func(t *testing.T, req Request) map[string]any {
		t.Helper()
		resp, p := Decode(req)
		if p != nil {
			t.Fatal(p)
		}
		return roundTrip(t, resp.Messages[0])
	}
	hx := "A000139381951536E024D4CCF6B5"
	m := one(t, Request{Hex: &hx})
	cb, _ := m["comm_b"].(map[string]any)
	b50, _ := cb["bds50"].(map[string]any)
	if m["bds"] != "5,0" || b50["groundspeed"] != 438.0 || b50["true_airspeed"] != 424.0 || cb["mb"] != "81951536E024D4" {
		t.Errorf("5,0: %v", m)
	}
	hx = "A0001692185BD5CF400000DFC696"
	m = one(t, Request{Hex: &hx, Meteo: true})
	cb, _ = m["comm_b"].(map[string]any)
	if b44, _ := cb["bds44"].(map[string]any); b44["wind_speed"] != 22.0 || b44["static_air_temperature"] != -48.75 {
		t.Errorf("4,4 with meteo: %v", m)
	}
	// The 5,0/6,0 ambiguous payload in a DF20 frame of altitude 0 (AC 0,
	// absent) with the CRC of address 000000.
	amb := "A0000000FFBAA11E200472" + commBParity(t, "A0000000FFBAA11E200472")
	m = one(t, Request{Hex: &amb})
	if c, _ := m["bds_candidates"].([]any); len(c) != 2 || m["bds"] != "5,0" || m["comm_b"].(map[string]any)["ambiguous"] != true {
		t.Errorf("ambiguous: %v", m)
	}
	trk := 355.0
	m = one(t, Request{Hex: &amb, Known: &Known{Track: &trk}})
	if _, ok := m["bds_candidates"]; ok || m["bds"] != "6,0" {
		t.Errorf("known track 355: %v", m)
	}
	bad := 400.0
	if _, p := Decode(Request{Hex: &amb, Known: &Known{Track: &bad}}); p == nil || p.Status != 400 || p.Field != "known.track" {
		t.Errorf("track 400: %v", p)
	}
}

// TestCommBBatchState: in a batch, a DF20/21 reply is checked against the
// state the batch's earlier DF17 frames gave its address.
func TestCommBBatchState(t *testing.T) {
	amb := "A0000000FFBAA11E200472" + commBParity(t, "A0000000FFBAA11E200472")
	// The ME of pyModeS's velocity example 8D485020994409940838175B284F
	// (159 kt, track 182.9°) sent by address 000000.
	vel := "8D00000099440994083817" + commBParity(t, "8D00000099440994083817")
	resp, p := Decode(Request{Frames: []string{amb, vel, amb}})
	if p != nil {
		t.Fatal(p)
	}
	first, last := resp.Messages[0], resp.Messages[2]
	if k := first.CommB.AddressKnown; k == nil || *k || first.BDSCandidates == nil {
		t.Errorf("before the squitter: address_known %v, candidates %v", k, first.BDSCandidates)
	}
	// 6,0's heading 359° is 176° from the track: rejected; 5,0 (240 kt,
	// 239°) is within the limits and stays.
	if k := last.CommB.AddressKnown; k == nil || !*k || last.BDS != "5,0" || last.BDSCandidates != nil ||
		len(last.CommB.Rejected) != 1 || last.CommB.Rejected[0] != "6,0" {
		t.Errorf("after the squitter: %+v %+v", last, last.CommB)
	}
}

// commBParity returns the parity field that makes a frame's remainder
// zero (address 000000), for synthetic Comm-B frames.
func commBParity(t *testing.T, data string) string {
	t.Helper()
	var f [14]byte
	if _, err := adsb.ParseHex(&f, data+"000000"); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%06X", adsb.Syndrome(f[:]))
}
