package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

func TestAppendStatement(t *testing.T) {
	big := `{"k":"` + strings.Repeat("x", MaxRecordBytes) + `"}`
	tests := []struct {
		name    string
		subject string
		pt      string
		record  string
		compact string // the predicate bytes expected in the statement
		kind    Kind
	}{
		{"object", "track-1", PredicateTypeReceipt, `{"a":1}`, `{"a":1}`, 0},
		{"whitespace compacted", "s", "p", " {\n \"a\" : [1, 2],\t\"b\":\"x y\" } ", `{"a":[1,2],"b":"x y"}`, 0},
		{"html kept verbatim", "s", "p", `{"h":"<b>&</b>"}`, `{"h":"<b>&</b>"}`, 0},
		{"unicode subject", "dröne ✈", "p", `{}`, `{}`, 0},
		{"array", "s", "p", `[1]`, "", KindInvalid},
		{"string", "s", "p", `"x"`, "", KindInvalid},
		{"null", "s", "p", `null`, "", KindInvalid},
		{"malformed", "s", "p", `{"a":}`, "", KindInvalid},
		{"two values", "s", "p", `{} {}`, "", KindInvalid},
		{"empty record", "s", "p", ``, "", KindInvalid},
		{"empty subject", "", "p", `{}`, "", KindInvalid},
		{"empty predicate type", "s", "", `{}`, "", KindInvalid},
		{"long subject", strings.Repeat("s", 1025), "p", `{}`, "", KindInvalid},
		{"bad utf8 subject", "s\xff", "p", `{}`, "", KindInvalid},
		{"bad utf8 record", "s", "p", "{\"a\":\"\xff\"}", "", KindInvalid},
		{"too large", "s", "p", big, "", KindTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := appendStatement(nil, tt.subject, tt.pt, []byte(tt.record))
			if tt.kind != 0 {
				if KindOf(err) != tt.kind {
					t.Fatalf("err = %v, want kind %v", err, tt.kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var st Statement
			if err := json.Unmarshal(out, &st); err != nil {
				t.Fatalf("statement is not JSON: %v\n%s", err, out)
			}
			sum := sha256.Sum256([]byte(tt.compact))
			switch {
			case st.Type != "https://in-toto.io/Statement/v1":
				t.Errorf("_type %q", st.Type)
			case len(st.Subject) != 1 || st.Subject[0].Name != tt.subject:
				t.Errorf("subject %+v", st.Subject)
			case st.Subject[0].Digest["sha256"] != hex.EncodeToString(sum[:]):
				t.Errorf("digest %q, want SHA-256 of %q", st.Subject[0].Digest["sha256"], tt.compact)
			case st.PredicateType != tt.pt:
				t.Errorf("predicateType %q", st.PredicateType)
			case string(st.Predicate) != tt.compact:
				t.Errorf("predicate %s, want %s", st.Predicate, tt.compact)
			}
		})
	}
}
