package reference

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/cuasd/cuasd/decode/remoteid"
)

// checkRemoteIDSample re-decodes a Remote ID sample (one 25-byte message or
// a message pack) with remoteid.DecodeResult, the function behind the
// decode endpoint, and compares the JSON it serves with every value the
// sample expects. The vector file states no tolerances for Remote ID, so
// every number is compared exactly (as the same float64). Where the view
// serves null for F3411's "unknown" sentinel and the reference library
// states the sentinel (-1000 m), the decoder's own value is compared
// instead (see ridUnknown).
//
// Each sample is decoded twice: with its carrier named (message or pack,
// from the sample's kind) and with carrier detection, as the endpoint does
// when the request names none; both must give the same answer.
func checkRemoteIDSample(t *testing.T, c *sampleCheck) {
	h, ok := c.s.Input["hex"].(string)
	if !ok {
		t.Fatalf("input has no hex: %v", c.s.Input)
	}
	raw, err := hex.DecodeString(h)
	if err != nil {
		t.Fatalf("hex: %v", err)
	}
	carrier := remoteid.CarrierMessage
	if c.s.Kind == "message_pack" {
		carrier = remoteid.CarrierPack
	}
	res, err := remoteid.DecodeResult(carrier, raw)
	auto, autoErr := remoteid.DecodeResult(remoteid.CarrierAuto, raw)

	if !c.s.Valid {
		if !c.null {
			t.Fatalf("invalid sample with an expected decode")
		}
		if err == nil {
			t.Errorf("decoded as %s without error: %+v", carrier, res.FrameView)
		}
		if autoErr == nil {
			t.Errorf("decoded as %s (detected) without error: %+v", auto.Carrier, auto.FrameView)
		}
		checkRemoteIDReference(t, c)
		return
	}
	if err != nil {
		t.Fatalf("DecodeResult(%s): %v", carrier, err)
	}
	if autoErr != nil {
		t.Fatalf("DecodeResult(auto): %v", autoErr)
	}
	if auto.Carrier != carrier.String() {
		t.Errorf("carrier detected as %q, want %q", auto.Carrier, carrier)
	}
	got := asJSON(t, res.FrameView)
	if d := jsonDiff("auto", asJSON(t, auto.FrameView), got, true); len(d) > 0 {
		t.Errorf("detected carrier decodes differently: %v", d)
	}
	if c.null {
		t.Fatalf("valid sample without an expected decode")
	}
	frame := got.(map[string]any)
	msgs, _ := frame["messages"].([]any)

	if carrier == remoteid.CarrierPack {
		if frame["message_pack"] != true {
			t.Errorf("message_pack = %v, want true", frame["message_pack"])
		}
		if x, ok := c.exp("message_count"); ok && number(t, "message_count", x) != float64(len(msgs)) {
			t.Errorf("message_count: decoded %d messages, want %v", len(msgs), x)
		}
		if x, ok := c.exp("single_message_size"); ok {
			// The decoder accepts only packs of 25-byte messages, and it
			// accepted this one.
			if number(t, "single_message_size", x) != remoteid.MessageSize {
				t.Errorf("single_message_size %v, the decoder reads %d-byte messages", x, remoteid.MessageSize)
			}
		}
		x, ok := c.exp("messages")
		want, isList := x.([]any)
		if !ok || !isList || len(want) != len(msgs) {
			t.Fatalf("messages: decoded %d, want %v", len(msgs), x)
		}
		for i, w := range want {
			w := w.(map[string]any)
			g, _ := msgs[i].(map[string]any)
			for k := range w {
				switch k {
				case "kind":
					if g["type"] != w[k] {
						t.Errorf("messages[%d].kind: decoded type %v, want %v", i, g["type"], w[k])
					}
				case "hex":
					if g["hex"] != w[k] {
						t.Errorf("messages[%d].hex: decoded %v, want %v", i, g["hex"], w[k])
					}
				case "expect":
					var p remoteid.Pack
					if err := remoteid.DecodePack(raw, &p); err != nil || p.Count != len(msgs) {
						t.Fatalf("DecodePack: %d messages, %v", p.Count, err)
					}
					want, _ := w[k].(map[string]any)
					compareRIDMessage(t, fmt.Sprintf("messages[%d].", i), g, want, &p.Messages[i])
				default:
					t.Errorf("messages[%d].%s: key not compared", i, k)
				}
			}
		}
	} else {
		if frame["message_pack"] != false || len(msgs) != 1 {
			t.Fatalf("a single message decoded as pack %v with %d messages", frame["message_pack"], len(msgs))
		}
		g := msgs[0].(map[string]any)
		if g["type"] != c.s.Kind {
			t.Errorf("message type %v, sample kind %q", g["type"], c.s.Kind)
		}
		if g["hex"] != h {
			t.Errorf("message hex %v, want the input %s", g["hex"], h)
		}
		var m remoteid.Message
		if err := remoteid.Decode(raw, &m); err != nil {
			t.Fatalf("Decode: %v", err)
		}
		for k := range c.expect {
			c.used[k] = true
		}
		compareRIDMessage(t, "", g, c.expect, &m)
	}
	checkRemoteIDReference(t, c)
}

// checkRemoteIDReference checks what the sample says the reference library
// did: which message type decodeOpenDroneID returned and whether
// decodeMessagePack succeeded, against the decoder's own answer.
func checkRemoteIDReference(t *testing.T, c *sampleCheck) {
	t.Helper()
	ref := c.reference(t)
	raw, _ := hex.DecodeString(c.s.Input["hex"].(string))
	for k, v := range ref {
		switch k {
		case "library_decodeOpenDroneID":
			// The library's names for the message types; INVALID is its
			// rejection. It reads the type nibble of the first byte.
			want := map[any]string{"BASIC_ID": "basic_id", "LOCATION": "location", "AUTH": "auth",
				"SELF_ID": "self_id", "SYSTEM": "system", "OPERATOR_ID": "operator_id", "INVALID": ""}
			name, known := want[v]
			if !known {
				t.Errorf("reference %s = %v: unknown library type", k, v)
				continue
			}
			var m remoteid.Message
			err := remoteid.Decode(raw[:min(len(raw), remoteid.MessageSize)], &m)
			if raw[0]>>4 == byte(remoteid.TypePack) {
				// A pack is refused by Decode by design; the library's
				// INVALID for it is the pack-level refusal checked above.
				if name != "" {
					t.Errorf("reference %s = %v for a pack", k, v)
				}
				continue
			}
			switch {
			case name == "" && err == nil:
				t.Errorf("library rejected the message (%v), Decode accepted it as %v", v, m.Type)
			case name != "" && err != nil:
				t.Errorf("library decoded %v, Decode: %v", v, err)
			case name != "" && m.Type.String() != name:
				t.Errorf("library decoded %v, Decode gave %v", v, m.Type)
			}
		case "library_decodeMessagePack":
			var p remoteid.Pack
			err := remoteid.DecodePack(raw, &p)
			switch v {
			case "ODID_SUCCESS":
				if err != nil {
					t.Errorf("library decoded the pack, DecodePack: %v", err)
				}
			case "ODID_FAIL":
				if err == nil {
					t.Errorf("library refused the pack, DecodePack accepted %d messages", p.Count)
				}
			default:
				t.Errorf("reference %s = %v: unknown result", k, v)
			}
		case "library_behaviour":
			// Prose; what it describes is the expected rejection above.
		default:
			t.Errorf("reference_behaviour.%s: not compared", k)
		}
	}
}

// ridUnknown reads the values that the JSON view serves as null when they
// hold F3411's "unknown" sentinel. The reference library returns the
// sentinel itself (-1000 m, 361°, ...), so for a null in the view the
// decoder's own value is compared with the sample, and it must be flagged
// unknown.
var ridUnknown = map[string]func(*remoteid.Message) (float64, bool){
	"direction_deg":           func(m *remoteid.Message) (float64, bool) { return m.Location.Direction() },
	"speed_horizontal_mps":    func(m *remoteid.Message) (float64, bool) { return m.Location.SpeedHorizontal() },
	"speed_vertical_mps":      func(m *remoteid.Message) (float64, bool) { return m.Location.SpeedVertical() },
	"altitude_baro_m":         func(m *remoteid.Message) (float64, bool) { return m.Location.AltitudeBaro() },
	"altitude_geo_m":          func(m *remoteid.Message) (float64, bool) { return m.Location.AltitudeGeo() },
	"height_m":                func(m *remoteid.Message) (float64, bool) { return m.Location.Height() },
	"timestamp_s":             func(m *remoteid.Message) (float64, bool) { return m.Location.Timestamp() },
	"area_ceiling_m":          func(m *remoteid.Message) (float64, bool) { return m.System.AreaCeiling() },
	"area_floor_m":            func(m *remoteid.Message) (float64, bool) { return m.System.AreaFloor() },
	"operator_altitude_geo_m": func(m *remoteid.Message) (float64, bool) { return m.System.OperatorAltitudeGeo() },
}

// compareRIDMessage compares every expected key of one message with its
// decoded JSON view g (and, for values the view serves as null, with the
// decoded message m).
func compareRIDMessage(t *testing.T, prefix string, g, want map[string]any, m *remoteid.Message) {
	t.Helper()
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		x := want[k]
		gv, ok := g[k]
		if !ok {
			t.Errorf("%s%s: not in the decoded view (want %v)", prefix, k, x)
			continue
		}
		if acc, sentinel := ridUnknown[k]; sentinel && gv == nil && x != nil {
			v, known := acc(m)
			n, isNum := x.(json.Number)
			if known || !isNum || !sameNumber(json.Number(strconv.FormatFloat(v, 'g', -1, 64)), n) {
				t.Errorf("%s%s: the view has null, decoded value %v (known %v), want %v", prefix, k, v, known, x)
			}
			continue
		}
		for _, d := range jsonDiff(prefix+k, gv, x, false) {
			t.Error(d)
		}
	}
}
