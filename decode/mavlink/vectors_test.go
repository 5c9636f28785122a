package mavlink

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/bluenviron/gomavlib/v3/pkg/dialect"
	"github.com/bluenviron/gomavlib/v3/pkg/dialects/ardupilotmega"
	gmframe "github.com/bluenviron/gomavlib/v3/pkg/frame"
)

// vector is one case of testdata/mavlink.json, a copy of
// shared/vectors/mavlink.json: frames packed with MAVLink's C library
// (c_library_v2) and what its parser accepted.
type vector struct {
	ID            string        `json:"id"`
	Version       int           `json:"version"`
	Valid         bool          `json:"valid"`
	Hex           string        `json:"hex"`
	Note          string        `json:"note"`
	SigningKeyHex string        `json:"signing_key_hex"`
	Expect        *vectorFrame  `json:"expect"`
	CParser       vectorOutcome `json:"c_parser"`
}

type vectorOutcome struct {
	Frames          []vectorFrame  `json:"frames"`
	BadCRC          int            `json:"bad_crc"`
	BadSignature    int            `json:"bad_signature"`
	HeaderErrors    int            `json:"header_errors"`
	IncompleteAtEnd bool           `json:"incomplete_at_end"`
	WithKey         *vectorOutcome `json:"with_key"`
	SigningStatus   string         `json:"signing_status"`
}

type vectorFrame struct {
	MsgID         uint32                     `json:"msgid"`
	Name          string                     `json:"name"`
	Version       uint8                      `json:"version"`
	SysID         uint8                      `json:"sysid"`
	CompID        uint8                      `json:"compid"`
	Seq           uint8                      `json:"seq"`
	PayloadLen    int                        `json:"payload_len"`
	IncompatFlags uint8                      `json:"incompat_flags"`
	CompatFlags   uint8                      `json:"compat_flags"`
	Signature     *vectorSignature           `json:"signature"`
	Fields        map[string]json.RawMessage `json:"fields"`
}

type vectorSignature struct {
	LinkID    uint8  `json:"link_id"`
	Timestamp uint64 `json:"timestamp"`
	Sig       string `json:"sig"`
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	b, err := os.ReadFile("testdata/mavlink.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 {
		t.Fatal("no vectors")
	}
	return vs
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVectors runs every vector through Parse and compares with what the C
// parser accepted (c_parser, and c_parser.with_key when the vector has a
// signing key) and with the vector's expected decode. The parser must do at
// least as well as the C parser: every frame the C parser returned must be
// found, with the same header and fields; a frame the C parser missed (it
// does not rescan after a false start) is allowed only if gomavlib, an
// independent parser, accepts its bytes on their own.
func TestVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.ID, func(t *testing.T) {
			in := mustHex(t, v.Hex)
			res, err := Parse(in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkOutcome(t, in, res, &v.CParser)
			if v.CParser.WithKey != nil {
				key := mustHex(t, v.SigningKeyHex)
				res, err := Parse(in, Options{Key: key})
				if err != nil {
					t.Fatal(err)
				}
				checkOutcome(t, in, res, v.CParser.WithKey)
				for _, f := range res.Frames {
					if f.Signature == nil || f.Signature.SignatureValid == nil || !*f.Signature.SignatureValid {
						t.Errorf("with key: frame %s signature_valid not true: %+v", f.Name, f.Signature)
					}
				}
			}
			if v.Expect != nil {
				if len(res.Frames) == 0 {
					t.Fatalf("expected a frame, got none (stats %+v)", res.Stats)
				}
				compareFrame(t, &res.Frames[0], v.Expect)
			}
			// "valid" marks a well-formed frame that a strict parser accepts:
			// exactly one frame and nothing rejected. (The permissive cases
			// a C parser also accepts, short v1 or long v2 payloads, are
			// "valid": false and are covered by c_parser above.)
			if v.Valid && (len(res.Frames) != 1 || res.Stats.BadCRC+res.Stats.HeaderErrors+res.Stats.BadSignature != 0) {
				t.Errorf("valid vector: got %d frames, stats %+v", len(res.Frames), res.Stats)
			}
		})
	}
}

func checkOutcome(t *testing.T, in []byte, res *Result, want *vectorOutcome) {
	t.Helper()
	// Every C frame, in order, must be among ours.
	j := 0
	var extra []FrameResult
	for _, w := range want.Frames {
		for j < len(res.Frames) && !sameHeader(&res.Frames[j], &w) {
			extra = append(extra, res.Frames[j])
			j++
		}
		if j == len(res.Frames) {
			t.Fatalf("C parser frame %s (seq %d) not found; got %d frames, stats %+v, problems %v",
				w.Name, w.Seq, len(res.Frames), res.Stats, res.Problems)
		}
		compareFrame(t, &res.Frames[j], &w)
		j++
	}
	extra = append(extra, res.Frames[j:]...)
	for _, f := range extra {
		raw := in[f.Offset:]
		if err := gomavlibAccepts(raw); err != nil {
			t.Errorf("extra frame %s at offset %d is not confirmed by gomavlib: %v", f.Name, f.Offset, err)
		} else {
			t.Logf("found a frame the C parser missed: %s at offset %d (gomavlib confirms)", f.Name, f.Offset)
		}
	}
	if res.Stats.Frames != len(res.Frames) {
		t.Errorf("stats.frames %d, %d frames listed", res.Stats.Frames, len(res.Frames))
	}
	if res.Stats.BadCRC != want.BadCRC || res.Stats.BadSignature != want.BadSignature || res.Stats.HeaderErrors != want.HeaderErrors {
		t.Errorf("stats %+v; C parser bad_crc %d bad_signature %d header_errors %d",
			res.Stats, want.BadCRC, want.BadSignature, want.HeaderErrors)
	}
	wantIncomplete := want.IncompleteAtEnd
	if len(extra) > 0 && wantIncomplete {
		// The C parser waited for the rest of a false start and so did not
		// see the frames behind it; having rescanned them, the input no
		// longer ends inside an unresolved candidate.
		last := extra[len(extra)-1]
		if end := int(last.Offset) + frameLen(in[last.Offset:]); end == len(in) {
			wantIncomplete = false
		}
	}
	if res.Stats.IncompleteAtEnd != wantIncomplete {
		t.Errorf("incomplete_at_end %v, want %v", res.Stats.IncompleteAtEnd, wantIncomplete)
	}
}

func frameLen(b []byte) int {
	f, n, _ := examine(b, nil)
	_ = f
	return n
}

// gomavlibAccepts parses b with gomavlib's frame reader and the
// ardupilotmega dialect and reports an error unless its first frame
// verifies.
func gomavlibAccepts(b []byte) error {
	drw := &dialect.ReadWriter{Dialect: ardupilotmega.Dialect}
	if err := drw.Initialize(); err != nil {
		return err
	}
	r := &gmframe.Reader{ByteReader: bytes.NewReader(b), DialectRW: drw}
	if err := r.Initialize(); err != nil {
		return err
	}
	_, err := r.Read()
	return err
}

func sameHeader(g *FrameResult, w *vectorFrame) bool {
	return g.MsgID == w.MsgID && g.Version == w.Version && g.SysID == w.SysID &&
		g.CompID == w.CompID && g.Seq == w.Seq && g.PayloadLen == w.PayloadLen
}

func compareFrame(t *testing.T, g *FrameResult, w *vectorFrame) {
	t.Helper()
	if !sameHeader(g, w) || g.Name != w.Name || g.IncompatFlags != w.IncompatFlags || g.CompatFlags != w.CompatFlags {
		t.Errorf("header: got %s v%d msgid %d sys %d comp %d seq %d len %d flags %d/%d; want %s v%d msgid %d sys %d comp %d seq %d len %d flags %d/%d",
			g.Name, g.Version, g.MsgID, g.SysID, g.CompID, g.Seq, g.PayloadLen, g.IncompatFlags, g.CompatFlags,
			w.Name, w.Version, w.MsgID, w.SysID, w.CompID, w.Seq, w.PayloadLen, w.IncompatFlags, w.CompatFlags)
	}
	if !g.CRCOK {
		t.Errorf("crc_ok false for %s", g.Name)
	}
	if (w.Signature != nil) != g.Signed {
		t.Errorf("signed %v, vector signature %+v", g.Signed, w.Signature)
	}
	if w.Signature != nil {
		if g.Signature == nil || g.Signature.LinkID != w.Signature.LinkID || g.Signature.Timestamp != w.Signature.Timestamp || g.Signature.Sig != w.Signature.Sig {
			t.Errorf("signature %+v, want %+v", g.Signature, w.Signature)
		}
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(g.Fields, &got); err != nil {
		t.Fatalf("fields %s: %v", g.Fields, err)
	}
	if len(got) != len(w.Fields) {
		t.Errorf("%d fields, want %d: got %s", len(got), len(w.Fields), g.Fields)
	}
	def := LookupName(w.Name)
	if def == nil {
		t.Fatalf("no definition for %s", w.Name)
	}
	for name, wv := range w.Fields {
		gv, ok := got[name]
		if !ok {
			t.Errorf("field %s missing", name)
			continue
		}
		fd := def.Field(name)
		if fd == nil {
			t.Errorf("field %s not in the definition", name)
			continue
		}
		if err := sameValue(fd, gv, wv); err != nil {
			t.Errorf("field %s: %v", name, err)
		}
	}
}

// sameValue compares a decoded JSON value with the vector's: integers
// exactly, floats at the field's precision, strings and arrays element by
// element.
func sameValue(fd *FieldDef, got, want json.RawMessage) error {
	if fd.IsString() {
		var g, w string
		if err := json.Unmarshal(got, &g); err != nil {
			return err
		}
		if err := json.Unmarshal(want, &w); err != nil {
			return err
		}
		if g != w {
			return fmt.Errorf("got %q, want %q", g, w)
		}
		return nil
	}
	if fd.IsArray() {
		var g, w []json.RawMessage
		if err := json.Unmarshal(got, &g); err != nil {
			return err
		}
		if err := json.Unmarshal(want, &w); err != nil {
			return err
		}
		if len(g) != len(w) {
			return fmt.Errorf("got %d elements, want %d", len(g), len(w))
		}
		for i := range g {
			if err := sameNumber(fd.Type, g[i], w[i]); err != nil {
				return fmt.Errorf("[%d]: %v", i, err)
			}
		}
		return nil
	}
	return sameNumber(fd.Type, got, want)
}

func sameNumber(t FieldType, got, want json.RawMessage) error {
	switch t {
	case TypeFloat, TypeDouble:
		var g, w *float64
		if err := json.Unmarshal(got, &g); err != nil {
			return err
		}
		if err := json.Unmarshal(want, &w); err != nil {
			return err
		}
		if g == nil || w == nil {
			if (g == nil) != (w == nil) {
				return fmt.Errorf("got %s, want %s", got, want)
			}
			return nil
		}
		if t == TypeFloat && float32(*g) == float32(*w) || *g == *w {
			return nil
		}
		if math.Abs(*g-*w) <= 1e-12*math.Abs(*w) {
			return nil
		}
		return fmt.Errorf("got %v, want %v", *g, *w)
	}
	if string(got) != string(want) {
		return fmt.Errorf("got %s, want %s", got, want)
	}
	return nil
}
