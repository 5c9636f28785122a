package httpapi

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// Vectors from decode/remoteid/testdata/remoteid.json (a copy of the shared
// opendroneid-core-c vectors); expected values are the vectors' own.
func ridVectors(t *testing.T) map[string]map[string]any {
	t.Helper()
	b, err := os.ReadFile("../decode/remoteid/testdata/remoteid.json")
	if err != nil {
		t.Fatal(err)
	}
	var vf struct {
		Vectors []map[string]any `json:"vectors"`
	}
	if err := json.Unmarshal(b, &vf); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, v := range vf.Vectors {
		out[v["id"].(string)] = v
	}
	return out
}

func TestRemoteIDDecodeOK(t *testing.T) {
	vs := ridVectors(t)
	h := newTestServer(t, Deps{})
	url := testBase + "/v1/remote-id/decode"
	for _, c := range []struct {
		vector, carrier, wantCarrier, transport string
		count                                   int
	}{
		{"loc_typical_airborne", "", "message", "", 1},
		{"basic_specific_session_id", "message", "message", "", 1},
		{"auth_p0_uas_id_sig", "", "message", "", 1},
		{"selfid_emergency", "", "message", "", 1},
		{"system_swarm_area", "", "message", "", 1},
		{"operator_full_20", "", "message", "", 1},
		{"pack_9_msgs_max", "", "message_pack", "", 9},
		{"wifi_beacon_pack5", "", "wifi_beacon", "wifi_beacon", 5},
		{"wifi_nan_action_pack5", "wifi_nan", "wifi_nan", "wifi_nan", 5},
		{"ble4_ad_location", "ble_adv_data", "ble_adv_data", "bt4", 1},
		{"loc_latitude_out_of_range", "", "message", "", 1},
	} {
		t.Run(c.vector, func(t *testing.T) {
			hx := vs[c.vector]["hex"].(string)
			body := map[string]any{"hex": hx}
			if c.carrier != "" {
				body["carrier"] = c.carrier
			}
			rec := do(t, h, http.MethodPost, url, body)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			var got struct {
				Carrier   string           `json:"carrier"`
				Transport string           `json:"transport"`
				Messages  []map[string]any `json:"messages"`
				Warnings  []map[string]any `json:"warnings"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if got.Carrier != c.wantCarrier || got.Transport != c.transport || len(got.Messages) != c.count {
				t.Errorf("carrier %q transport %q %d messages", got.Carrier, got.Transport, len(got.Messages))
			}
			if exp, ok := vs[c.vector]["expect"].(map[string]any); ok && c.count == 1 && c.transport == "" {
				for _, k := range []string{"latitude_deg", "uas_id_hex", "auth_data_hex", "desc", "area_radius_m", "operator_id"} {
					if ev, ok := exp[k]; ok && strings.TrimSpace(jsonString(ev)) != jsonString(got.Messages[0][k]) {
						t.Errorf("%s = %v, want %v", k, got.Messages[0][k], ev)
					}
				}
			}
			if c.vector == "loc_latitude_out_of_range" && (len(got.Warnings) != 1 || got.Warnings[0]["code"] != "latitude_out_of_range") {
				t.Errorf("warnings %v", got.Warnings)
			}
		})
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestRemoteIDDecodeBase64(t *testing.T) {
	vs := ridVectors(t)
	b, _ := hex.DecodeString(vs["pack_5_msgs"]["hex"].(string))
	rec := do(t, newTestServer(t, Deps{}), http.MethodPost, testBase+"/v1/remote-id/decode",
		map[string]any{"base64": base64.StdEncoding.EncodeToString(b)})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"uas_id":"1596F350A1B2C3D4E5"`) {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
}

func TestRemoteIDDecodeRejects(t *testing.T) {
	vs := ridVectors(t)
	h := newTestServer(t, Deps{})
	url := testBase + "/v1/remote-id/decode"
	for _, c := range []struct {
		name   string
		body   any
		status int
		detail string
	}{
		{"undefined type", map[string]any{"hex": vs["bad_type_nibble_0x6"]["hex"]}, 422, "byte 0: message type 0x6"},
		{"short message", map[string]any{"hex": vs["bad_len_24"]["hex"]}, 422, "byte 24: message length 24"},
		{"pack count 0", map[string]any{"hex": vs["pack_count_zero"]["hex"]}, 422, "byte 2: message pack count 0"},
		{"nested pack", map[string]any{"hex": vs["pack_nested_pack"]["hex"]}, 422, "byte 28:"},
		{"auth last page", map[string]any{"hex": vs["auth_p0_last_page_16"]["hex"]}, 422, "byte 2:"},
		{"version 15", map[string]any{"hex": vs["unknown_protocol_version_15"]["hex"]}, 422, "protocol version 15"},
		{"wrong carrier", map[string]any{"hex": vs["wifi_beacon_pack5"]["hex"], "carrier": "wifi_nan"}, 422, "not an action frame"},
		{"bad hex", map[string]any{"hex": "12zz"}, 422, "not a hex digit"},
		{"odd hex", map[string]any{"hex": "123"}, 422, "odd number"},
		{"bad base64", map[string]any{"base64": "!!!"}, 422, "base64"},
		{"neither", map[string]any{}, 400, "exactly one"},
		{"both", map[string]any{"hex": "00", "base64": "AA=="}, 400, "exactly one"},
		{"unknown carrier", map[string]any{"hex": "00", "carrier": "lora"}, 400, "unknown carrier"},
		{"unknown field", `{"hexx":"00"}`, 400, ""},
		{"wrong type", `{"hex":12}`, 400, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := do(t, h, http.MethodPost, url, c.body)
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, c.status, rec.Body)
			}
			var p Problem
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(p.Detail, c.detail) {
				t.Errorf("detail %q lacks %q", p.Detail, c.detail)
			}
		})
	}
	req := httptest.NewRequest(http.MethodPost, url, strings.NewReader(`{"hex":"00"}`))
	req.Header.Set("Content-Type", "text/plain")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	checkOpenAPI(t, req, rec)
	if rec.Code != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: %d", rec.Code)
	}
}
