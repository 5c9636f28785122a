package reference

import (
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/cuasd/cuasd/decode/mavlink"
)

// checkMAVLinkSample re-parses a MAVLink sample with mavlink.Parse, the
// function behind POST /v1/mavlink/parse, and compares it with what the
// sample states: the expected frame, and what the MAVLink C library's parser
// did with the same bytes (its frames, field by field, and its bad_crc,
// bad_signature, header_errors and incomplete_at_end counters), without the
// signing key and, where the sample gives one, with it.
func checkMAVLinkSample(t *testing.T, c *sampleCheck) {
	h, ok := c.s.Input["hex"].(string)
	if !ok {
		t.Fatalf("input has no hex: %v", c.s.Input)
	}
	raw, err := hex.DecodeString(h)
	if err != nil {
		t.Fatalf("hex: %v", err)
	}
	var key []byte
	if kh, ok := c.s.Input["signing_key_hex"]; ok {
		if key, err = hex.DecodeString(fmt.Sprint(kh)); err != nil || len(key) != mavlink.KeyLen {
			t.Fatalf("signing_key_hex: %d bytes, %v", len(key), err)
		}
	}
	parse := func(key []byte) map[string]any {
		res, err := mavlink.Parse(raw, mavlink.Options{Key: key})
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		return asJSON(t, res).(map[string]any)
	}
	plain := parse(nil)
	keyed := plain
	if key != nil {
		keyed = parse(key)
	}

	// The expected decode is what a receiver holding the sample's key (if
	// any) gets: exactly that one frame, or, for expect null, no frame.
	frames, _ := keyed["frames"].([]any)
	if c.null {
		if c.s.Valid {
			t.Fatalf("valid sample without an expected decode")
		}
		if len(frames) != 0 {
			t.Errorf("invalid sample gave %d frames: %v", len(frames), frames)
		}
	} else {
		if !c.s.Valid {
			t.Fatalf("invalid sample with an expected decode")
		}
		if len(frames) != 1 {
			t.Fatalf("parsed %d frames, want 1", len(frames))
		}
		checkMAVLinkFrame(t, "expect", frames[0], c.expect)
		for k := range c.expect {
			c.used[k] = true
		}
	}

	ref := c.reference(t)
	cp, ok := ref["c_parser"].(map[string]any)
	if !ok || len(ref) != 1 {
		t.Fatalf("reference_behaviour must hold c_parser only: %v", ref)
	}
	checkMAVLinkParse(t, "c_parser", plain, cp, false)
	if wk, ok := cp["with_key"].(map[string]any); ok {
		if key == nil {
			t.Fatalf("c_parser.with_key but no signing_key_hex")
		}
		checkMAVLinkParse(t, "c_parser.with_key", keyed, wk, true)
	} else if key != nil {
		t.Errorf("a signing key without the C parser's keyed result")
	}
}

// checkMAVLinkParse compares one Parse result with the C parser's.
func checkMAVLinkParse(t *testing.T, path string, got, want map[string]any, keyed bool) {
	t.Helper()
	stats, _ := got["stats"].(map[string]any)
	frames, _ := got["frames"].([]any)
	for k, w := range want {
		switch k {
		case "frames":
			wf, _ := w.([]any)
			if len(frames) != len(wf) {
				t.Errorf("%s.frames: parsed %d, the C parser %d", path, len(frames), len(wf))
				continue
			}
			for i := range wf {
				checkMAVLinkFrame(t, fmt.Sprintf("%s.frames[%d]", path, i), frames[i], wf[i].(map[string]any))
			}
		case "bad_crc", "bad_signature", "header_errors", "incomplete_at_end":
			for _, d := range jsonDiff(path+"."+k, stats[k], w, false) {
				t.Error(d)
			}
		case "signing_status":
			switch w {
			case "OK":
				// Every frame verified with the key.
				for i, f := range frames {
					sig, _ := f.(map[string]any)["signature"].(map[string]any)
					if sig["signature_valid"] != true {
						t.Errorf("%s: frame %d signature %v, want verified", path, i, sig)
					}
				}
			case "BAD_SIGNATURE":
				if n := stats["bad_signature"]; fmt.Sprint(n) == "0" || len(frames) != 0 {
					t.Errorf("%s: bad signature counted %v, %d frames; want the frame dropped", path, n, len(frames))
				}
			default:
				t.Errorf("%s.signing_status %v: unknown", path, w)
			}
		case "with_key":
			if keyed {
				t.Errorf("%s: nested with_key", path)
			}
		default:
			t.Errorf("%s.%s: not compared", path, k)
		}
	}
}

// checkMAVLinkFrame compares one parsed frame (FrameResult as JSON) with a
// frame the C parser reported. Every stated key must match; the fields
// object must match key for key, with no field missing or extra. Both
// frames are at most checksum-verified claims: crc_ok must be true.
func checkMAVLinkFrame(t *testing.T, path string, got any, want map[string]any) {
	t.Helper()
	g, _ := got.(map[string]any)
	if g["crc_ok"] != true {
		t.Errorf("%s: crc_ok %v", path, g["crc_ok"])
	}
	if _, signed := want["signature"]; g["signed"] != signed {
		t.Errorf("%s: signed %v, the reference reports a signature: %v", path, g["signed"], signed)
	}
	for k, w := range want {
		exact := k == "fields"
		for _, d := range jsonDiff(path+"."+k, g[k], w, exact) {
			t.Error(d)
		}
	}
}
