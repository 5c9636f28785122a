package httpapi

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The values expected below come from the shared vectors (decode/adsb/
// testdata/adsb.json): pyModeS, the 1090 MHz Riddle and dump1090.

func adsbPost(t *testing.T, body any) *httptest.ResponseRecorder {
	t.Helper()
	return do(t, newTestServer(t, Deps{}), http.MethodPost, testBase+"/v1/ads-b/decode", body)
}

func decodeBody(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("body %q: %v", rec.Body.String(), err)
	}
	return m
}

func TestADSBDecodeSingle(t *testing.T) {
	rec := adsbPost(t, `{"hex": " 8d406b90 2015A678D4D220AA4BDA "}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	body := decodeBody(t, rec)
	msgs := body["messages"].([]any)
	m := msgs[0].(map[string]any)
	// pms-ident-ezy85mh
	for k, want := range map[string]any{"df": 17.0, "icao": "406B90", "typecode": 4.0, "callsign": "EZY85MH",
		"category": "A0", "crc_valid": true, "crc_remainder": 0.0, "bds": "0,8"} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	if !strings.Contains(body["notice"].(string), "claim") {
		t.Errorf("notice %v", body["notice"])
	}
}

func TestADSBDecodePair(t *testing.T) {
	// book-cpr-global-52n: the 1090 MHz Riddle's worked example.
	rec := adsbPost(t, map[string]any{"even": "8D40621D58C382D690C8AC2863A7", "odd": "8D40621D58C386435CC412692AD6", "newest": "even"})
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	pos := decodeBody(t, rec)["position"].(map[string]any)
	if math.Abs(pos["lat"].(float64)-52.2572021484375) > 1e-9 || math.Abs(pos["lon"].(float64)-3.91937255859375) > 1e-9 || pos["method"] != "cpr_global_airborne" {
		t.Errorf("position %v", pos)
	}

	// pms-surf-lfbo-pair-odd-newest: surface pair with the receiver's position.
	rec = adsbPost(t, map[string]any{"even": "903a23ff426a38565950432ebf95", "odd": "903a23ff426a4e65f7487a775d17", "newest": "odd",
		"reference": map[string]float64{"lat": 43.63, "lon": 1.37}})
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	pos = decodeBody(t, rec)["position"].(map[string]any)
	if math.Abs(pos["lat"].(float64)-43.62646) > 1e-3 || math.Abs(pos["lon"].(float64)-1.37476) > 1e-3 || pos["method"] != "cpr_global_surface" {
		t.Errorf("surface position %v", pos)
	}
}

func TestADSBDecodeFrames(t *testing.T) {
	rec := adsbPost(t, map[string]any{"frames": []string{
		"8D406B902015A678D4D220AA4BDA", "zz", "8d4ca251204994b1c36e60a5343d", "5dab3d17d4ba29", "A0001839CA3800315800007448D9",
	}})
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	msgs := decodeBody(t, rec)["messages"].([]any)
	if len(msgs) != 5 {
		t.Fatalf("%d results", len(msgs))
	}
	get := func(i int, k string) any { return msgs[i].(map[string]any)[k] }
	if get(0, "callsign") != "EZY85MH" || get(1, "error") == nil || get(2, "crc_remainder") != 16.0 || get(2, "error") == nil {
		t.Errorf("results %v", msgs)
	}
	// deku-df11-ab3d17 and pms-icao-from-crc-400940.
	if get(3, "icao") != "AB3D17" || get(3, "iid") != 1.0 || get(4, "icao") != "400940" || get(4, "address_from_parity") != true {
		t.Errorf("results %v", msgs[3:])
	}
}

func TestADSBDecodeFix(t *testing.T) {
	bad := "8D406B902015A678D4D220AA4BDB"
	if rec := adsbPost(t, map[string]any{"hex": bad}); rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("corrupt frame without fix: %d", rec.Code)
	}
	rec := adsbPost(t, map[string]any{"hex": bad, "fix": true})
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	m := decodeBody(t, rec)["messages"].([]any)[0].(map[string]any)
	if m["bit_errors_fixed"] != 1.0 || m["callsign"] != "EZY85MH" {
		t.Errorf("%v", m)
	}
}

func TestADSBDecodeProblems(t *testing.T) {
	h := newTestServer(t, Deps{})
	url := testBase + "/v1/ads-b/decode"
	for _, c := range []struct {
		name   string
		body   any
		status int
		field  string
		detail string
	}{
		{"not hex", `{"hex": "8D40XX"}`, 422, "hex", "not hexadecimal"},
		{"wrong length", `{"hex": "8D406B902015"}`, 422, "hex", "6 bytes"},
		{"bad CRC", `{"hex": "8d4ca251204994b1c36e60a5343d"}`, 422, "hex", "CRC"},
		{"zone mismatch", `{"even": "8d4ca541580953cf23c531144f9b", "odd": "8d4ca5415809670448d60d2fc835", "newest": "even", "reference": {"lat": 53.4214, "lon": -6.2701}}`, 422, "reference", "corrupt or spoofed"},
		{"mixed", `{"even": "8f485a33397c737a27d1b18072cd", "odd": "8d485a33581d663872e86a3bbfff", "newest": "odd"}`, 422, "", "surface"},
		{"surface without reference", `{"even": "903a23ff426a38565950432ebf95", "odd": "903a23ff426a4e65f7487a775d17", "newest": "odd"}`, 422, "", "reference"},
		{"unknown field", `{"hex": "8D406B902015A678D4D220AA4BDA", "color": 1}`, 400, "color", "unknown"},
		{"wrong type", `{"hex": 17}`, 400, "hex", "string"},
		{"no form", `{}`, 400, "", "exactly one"},
		{"two forms", `{"hex": "5dab3d17d4ba29", "frames": ["5dab3d17d4ba29"]}`, 400, "", "exactly one"},
		{"newest", `{"even": "5dab3d17d4ba29", "odd": "5dab3d17d4ba29", "newest": "last"}`, 400, "newest", "newest"},
		{"too many", map[string]any{"frames": make([]string, 1001)}, 400, "frames", "1000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := do(t, h, http.MethodPost, url, c.body)
			if rec.Code != c.status {
				t.Errorf("%s: status %d, want %d: %s", c.name, rec.Code, c.status, rec.Body)
				return
			}
			p := decodeBody(t, rec)
			if !strings.Contains(p["detail"].(string), c.detail) {
				t.Errorf("%s: detail %q lacks %q", c.name, p["detail"], c.detail)
			}
			if c.field != "" {
				errs, _ := p["errors"].([]any)
				if len(errs) == 0 || errs[0].(map[string]any)["field"] != c.field {
					t.Errorf("%s: errors %v, want field %q", c.name, p["errors"], c.field)
				}
			}
		})
	}
}

func TestADSBDecodeTransport(t *testing.T) {
	h := newTestServer(t, Deps{})
	url := testBase + "/v1/ads-b/decode"
	req := httptest.NewRequest(http.MethodPost, url, strings.NewReader(`{"hex": "5dab3d17d4ba29"}`))
	req.Header.Set("Content-Type", "text/plain")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	checkOpenAPI(t, req, rec)
	if rec.Code != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: %d", rec.Code)
	}
	big := `{"frames": ["` + strings.Repeat("8D406B902015A678D4D220AA4BDA", 5000) + `"]}`
	if rec := do(t, h, http.MethodPost, url, big); rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d", rec.Code)
	}
}

// TestADSBDecodeCommB posts pyModeS's Comm-B vectors (tests/test_bds_commb.py
// @ a49921bb, lines 50-821; expected values in decode/adsb/commb_test.go)
// as one batch with the meteorological registers and a known state; every
// register's object must validate against the OpenAPI document.
func TestADSBDecodeCommB(t *testing.T) {
	frames := []string{"A800178D10010080F50000D5893C", "A0000638FA81C10000000081A92F", "A000083E202CC371C31DE0AA1CCF",
		"A000029C85E42F313000007047D3", "A0001692185BD5CF400000DFC696", "A00004190001FB80000000000000",
		"A000139381951536E024D4CCF6B5", "A00004128F39F91A7E27C46ADC21", "A0000000FFBAA11E2004724B6A3D"}
	rec := adsbPost(t, map[string]any{"frames": frames, "meteo": true, "known": map[string]any{"altitude": 35000}})
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	msgs := decodeBody(t, rec)["messages"].([]any)
	want := []string{"1,0", "1,7", "2,0", "4,0", "4,4", "4,5", "5,0", "6,0", "5,0"}
	for i, w := range want {
		m := msgs[i].(map[string]any)
		cb, _ := m["comm_b"].(map[string]any)
		if key := "bds" + strings.ReplaceAll(w, ",", ""); cb[key] == nil {
			t.Errorf("%s: no %s in %v", frames[i], key, m)
		}
		if i != 4 && i != 5 && m["bds"] != w { // 4,4 and 4,5 share their payloads with other registers
			t.Errorf("%s: bds %v, want %s", frames[i], m["bds"], w)
		}
	}
	// At FL350 the ambiguous payload's 6,0 reading (336 kt IAS, Mach 0.48)
	// is inconsistent: rejected.
	if cb := msgs[8].(map[string]any)["comm_b"].(map[string]any); cb["rejected"] == nil {
		t.Errorf("ambiguous payload at FL350: %v", cb)
	}
	rec = adsbPost(t, map[string]any{"hex": frames[0], "known": map[string]any{"groundspeed": -1}})
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "known.groundspeed") {
		t.Errorf("negative known ground speed: %d %s", rec.Code, rec.Body)
	}
}
