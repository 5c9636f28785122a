package httpapi

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// mavVector is one case of the MAVLink C library vectors
// (shared/vectors/mavlink.json, copied into decode/mavlink/testdata).
type mavVector struct {
	ID            string `json:"id"`
	Hex           string `json:"hex"`
	SigningKeyHex string `json:"signing_key_hex"`
	CParser       struct {
		Frames []struct {
			MsgID  uint32         `json:"msgid"`
			Name   string         `json:"name"`
			Seq    uint8          `json:"seq"`
			Fields map[string]any `json:"fields"`
		} `json:"frames"`
		BadCRC int `json:"bad_crc"`
	} `json:"c_parser"`
}

func mavVectors(t *testing.T) map[string]mavVector {
	t.Helper()
	b, err := os.ReadFile("../decode/mavlink/testdata/mavlink.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []mavVector
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	m := map[string]mavVector{}
	for _, v := range vs {
		m[v.ID] = v
	}
	return m
}

type mavResult struct {
	Frames []struct {
		Version   int             `json:"version"`
		Seq       int             `json:"seq"`
		SysID     int             `json:"sysid"`
		CompID    int             `json:"compid"`
		MsgID     uint32          `json:"msgid"`
		Name      string          `json:"name"`
		CRCOK     bool            `json:"crc_ok"`
		Signed    bool            `json:"signed"`
		Signature *map[string]any `json:"signature"`
		Fields    map[string]any  `json:"fields"`
		Offset    int             `json:"offset"`
		TlogUsec  *int64          `json:"tlog_usec"`
	} `json:"frames"`
	Stats struct {
		Frames          int  `json:"frames"`
		BadCRC          int  `json:"bad_crc"`
		BadSignature    int  `json:"bad_signature"`
		HeaderErrors    int  `json:"header_errors"`
		SkippedBytes    int  `json:"skipped_bytes"`
		IncompleteAtEnd bool `json:"incomplete_at_end"`
	} `json:"stats"`
	ByName map[string]int `json:"by_name"`
}

const mavPath = testBase + "/v1/mavlink/parse"

func TestMAVLinkParse(t *testing.T) {
	vs := mavVectors(t)
	h := newTestServer(t, Deps{})

	t.Run("hex heartbeat", func(t *testing.T) {
		v := vs["HEARTBEAT_v1"]
		rec := do(t, h, http.MethodPost, mavPath, map[string]any{"hex": v.Hex})
		if rec.Code != http.StatusOK {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		var res mavResult
		if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		want := v.CParser.Frames[0]
		if len(res.Frames) != 1 || res.Frames[0].Name != want.Name || res.Frames[0].Seq != int(want.Seq) || !res.Frames[0].CRCOK {
			t.Fatalf("%s", rec.Body)
		}
		for k, wv := range want.Fields {
			if res.Frames[0].Fields[k] != wv {
				t.Errorf("field %s = %v, want %v", k, res.Frames[0].Fields[k], wv)
			}
		}
		if res.ByName["HEARTBEAT"] != 1 || res.Stats.Frames != 1 {
			t.Errorf("%s", rec.Body)
		}
	})

	t.Run("base64 mixed stream with garbage", func(t *testing.T) {
		var in []byte
		ids := []string{"HEARTBEAT_v1", "GLOBAL_POSITION_INT_v2", "STATUSTEXT_50chars_v2", "bad_crc_v1_heartbeat", "OPEN_DRONE_ID_LOCATION_v2"}
		for _, id := range ids {
			b, _ := hex.DecodeString(vs[id].Hex)
			in = append(in, b...)
			in = append(in, 0x00, 0x11)
		}
		rec := do(t, h, http.MethodPost, mavPath, map[string]any{"base64": base64.StdEncoding.EncodeToString(in)})
		if rec.Code != http.StatusOK {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		var res mavResult
		json.Unmarshal(rec.Body.Bytes(), &res)
		if res.Stats.Frames != 4 || res.Stats.BadCRC != 1 || res.Stats.SkippedBytes != 10+17 ||
			res.ByName["STATUSTEXT"] != 1 || res.ByName["OPEN_DRONE_ID_LOCATION"] != 1 {
			t.Errorf("%+v %v", res.Stats, res.ByName)
		}
		if got := res.Frames[2].Fields["text"]; got != "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwx" {
			t.Errorf("text %v", got)
		}
	})

	t.Run("signed with key", func(t *testing.T) {
		v := vs["HEARTBEAT_v2_signed"]
		rec := do(t, h, http.MethodPost, mavPath, map[string]any{"hex": v.Hex, "signing_key_hex": v.SigningKeyHex})
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"signature_valid":true`) ||
			!strings.Contains(rec.Body.String(), `"sig":"0fe1a9594672"`) {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		bad := vs["HEARTBEAT_v2_signed_bad_signature"]
		rec = do(t, h, http.MethodPost, mavPath, map[string]any{"hex": bad.Hex, "signing_key_hex": bad.SigningKeyHex})
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "bad signature at offset 0") {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		// Without a key the tampered frame passes, unverified.
		rec = do(t, h, http.MethodPost, mavPath, map[string]any{"hex": bad.Hex})
		if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "signature_valid") {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		// The service key (--mavlink-key) applies when the request has none.
		key, _ := hex.DecodeString(bad.SigningKeyHex)
		hk := newTestServer(t, Deps{MAVLinkKey: key})
		rec = do(t, hk, http.MethodPost, mavPath, map[string]any{"hex": bad.Hex})
		if rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("service key: %d %s", rec.Code, rec.Body)
		}
	})

	t.Run("tlog", func(t *testing.T) {
		var in []byte
		for i, id := range []string{"HEARTBEAT_v1", "GPS_RAW_INT_v1", "VFR_HUD_v2"} {
			b, _ := hex.DecodeString(vs[id].Hex)
			in = binary.BigEndian.AppendUint64(in, uint64(1_700_000_000_000_000+i))
			in = append(in, b...)
		}
		rec := do(t, h, http.MethodPost, mavPath, map[string]any{"hex": hex.EncodeToString(in), "format": "tlog"})
		if rec.Code != http.StatusOK {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		var res mavResult
		json.Unmarshal(rec.Body.Bytes(), &res)
		if len(res.Frames) != 3 || res.Frames[2].TlogUsec == nil || *res.Frames[2].TlogUsec != 1_700_000_000_000_002 || res.Frames[0].Offset != 8 {
			t.Fatalf("%s", rec.Body)
		}
		rec = do(t, h, http.MethodPost, mavPath, map[string]any{"hex": hex.EncodeToString(in), "format": "tlog", "summary": true})
		if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `"frames":[`) || !strings.Contains(rec.Body.String(), `"GPS_RAW_INT":1`) {
			t.Fatalf("summary: %d %s", rec.Code, rec.Body)
		}
	})

	t.Run("unknown id", func(t *testing.T) {
		rec := do(t, h, http.MethodPost, mavPath, map[string]any{"hex": "fd03000007010 1efcdab aabbcc 1234"})
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"name":"unknown"`) ||
			!strings.Contains(rec.Body.String(), `"payload_hex":"aabbcc"`) || !strings.Contains(rec.Body.String(), `"crc_ok":false`) {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
	})

	for _, tc := range []struct {
		name   string
		body   any
		status int
		detail string
	}{
		{"bad CRC", map[string]any{"hex": vs["bad_crc_v1_heartbeat"].Hex}, 422, "bad CRC at offset 0 (v1 msgid 0 HEARTBEAT"},
		{"unknown incompat flag", map[string]any{"hex": vs["v2_unknown_incompat_flag"].Hex}, 422, "unknown incompatibility flags 0x02 at offset 0"},
		{"truncated", map[string]any{"hex": vs["truncated_v1"].Hex}, 422, "incomplete frame at offset 0"},
		{"zeros", map[string]any{"hex": vs["all_zero_bytes"].Hex}, 422, "no frame start byte"},
		{"empty", map[string]any{"hex": ""}, 422, "the input is empty"},
		{"not hex", map[string]any{"hex": "fe0g"}, 422, "hex: not hexadecimal"},
		{"not base64", map[string]any{"base64": "@@@"}, 422, "base64: not base64"},
		{"neither", map[string]any{"format": "raw"}, 400, "exactly one of hex or base64"},
		{"both", map[string]any{"hex": "00", "base64": "AA=="}, 400, "exactly one of hex or base64"},
		{"bad format", map[string]any{"hex": "00", "format": "pcap"}, 400, "format must be"},
		{"short key", map[string]any{"hex": "00", "signing_key_hex": "0011"}, 400, "signing_key_hex must be 64 hex digits"},
		{"unknown field", map[string]any{"hex": "00", "frames": 1}, 400, "unknown field"},
		{"too long", map[string]any{"hex": strings.Repeat("00", 1<<20+1)}, 413, "limit is 1048576"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(t, h, http.MethodPost, mavPath, tc.body)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.detail) {
				t.Errorf("%d %s; want %d with %q", rec.Code, rec.Body, tc.status, tc.detail)
			}
		})
	}

	t.Run("content type", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodPost, mavPath, strings.NewReader(`{"hex":"00"}`))
		req.Header.Set("Content-Type", "text/plain")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkOpenAPI(t, req, rec)
		if rec.Code != http.StatusUnsupportedMediaType {
			t.Errorf("%d", rec.Code)
		}
	})
}
