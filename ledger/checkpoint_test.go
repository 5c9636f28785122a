package ledger

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

// c2spExample is the example checkpoint of the C2SP tlog-checkpoint
// specification (https://c2sp.org/tlog-checkpoint).
const c2spExample = "example.com/behind-the-sofa\n" +
	"20852163\n" +
	"CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n" +
	"\n" +
	"— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n"

func TestParseCheckpoint(t *testing.T) {
	root := mustB64(t, "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=")
	tests := []struct {
		name   string
		text   string
		origin string
		size   uint64
		ok     bool
	}{
		{"c2sp example", c2spExample, "example.com/behind-the-sofa", 20852163, true},
		{"bare body", "o\n0\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n", "o", 0, true},
		{"extension line", "o\n7\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\next\n\n— o AAAA\n", "o", 7, true},
		{"empty", "", "", 0, false},
		{"no origin", "\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n", "", 0, false},
		{"leading zero", "o\n01\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n", "", 0, false},
		{"signed size", "o\n+1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n", "", 0, false},
		{"size overflow", "o\n18446744073709551616\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n", "", 0, false},
		{"short root", "o\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jx\n", "", 0, false},
		{"root not base64", "o\n1\n!!!!\n", "", 0, false},
		{"no final newline", "o\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, size, r, err := ParseCheckpoint([]byte(tt.text))
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
			if !tt.ok {
				return
			}
			if o != tt.origin || size != tt.size || !bytes.Equal(r, root) {
				t.Errorf("got %q %d %x, want %q %d %x", o, size, r, tt.origin, tt.size, root)
			}
		})
	}
}

// TestSignCheckpointOpensWithNote: a checkpoint signed by the ledger's
// note signer opens with golang.org/x/mod/sumdb/note given only the
// verifier key built from the public key, i.e. the key hash and signature
// layout are the library's, not just ours.
func TestSignCheckpointOpensWithNote(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	s, err := newEnvelopeSigner(priv, "cuasd/test")
	if err != nil {
		t.Fatal(err)
	}
	root := bytes.Repeat([]byte{7}, 32)
	text, err := signCheckpoint(s, "cuasd/test", 12, root)
	if err != nil {
		t.Fatal(err)
	}
	vkey, err := note.NewEd25519VerifierKey("cuasd/test", pub)
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open([]byte(text), note.VerifierList(v))
	if err != nil {
		t.Fatalf("note.Open: %v\n%s", err, text)
	}
	if want := "cuasd/test\n12\n" + base64.StdEncoding.EncodeToString(root) + "\n"; n.Text != want {
		t.Errorf("body %q, want %q", n.Text, want)
	}
	if vkey != s.vkey {
		t.Errorf("verifier key %q, want %q", s.vkey, vkey)
	}
	// Unsigned mode: the bare body, which note refuses as unsigned.
	bare, _ := signCheckpoint(nil, "cuasd/test", 12, root)
	if strings.Contains(bare, "—") || !strings.HasSuffix(bare, "\n") {
		t.Errorf("unsigned checkpoint %q", bare)
	}
}

func FuzzParseCheckpoint(f *testing.F) {
	f.Add([]byte(c2spExample))
	f.Add([]byte("o\n0\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		o, size, root, err := ParseCheckpoint(text)
		if err != nil {
			return
		}
		if len(root) != 32 || o == "" || strings.Contains(o, "\n") {
			t.Fatalf("accepted origin %q root %x", o, root)
		}
		// The body we would write for these values parses back to them.
		o2, s2, r2, err := ParseCheckpoint(appendCheckpointBody(nil, o, size, root))
		if err != nil || o2 != o || s2 != size || !bytes.Equal(r2, root) {
			t.Fatalf("re-parse: %q %d %x %v", o2, s2, r2, err)
		}
	})
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
