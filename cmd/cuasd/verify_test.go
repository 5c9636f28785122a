package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/internal/natstest"
	"github.com/cuasd/cuasd/ledger"
)

// verifyFixture writes, into a temp dir, a real bundle from a ledger, the
// ledger's public key, a later checkpoint and the consistency proof to it,
// and a bundle from an --unsigned ledger.
type verifyFixture struct {
	dir, bundle, pub, cpSame, cpLater, cons, unsigned string
}

func newVerifyFixture(t *testing.T) verifyFixture {
	t.Helper()
	dir := t.TempDir()
	f := verifyFixture{dir: dir}
	write := func(name string, v any) string {
		p := filepath.Join(dir, name)
		var b []byte
		if s, ok := v.(string); ok {
			b = []byte(s)
		} else {
			b, _ = json.MarshalIndent(v, "", "  ")
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, unsigned := range []bool{false, true} {
		sub := filepath.Join(dir, "data-"+map[bool]string{false: "signed", true: "unsigned"}[unsigned])
		js := natstest.Start(t, natstest.InDir(filepath.Join(sub, "js")), natstest.SyncAlways()).JS
		l, err := ledger.Open(context.Background(), js, ledger.Options{Instance: "verify", DataDir: sub, Unsigned: unsigned,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		var r ledger.Receipt
		for i := range 6 {
			x, err := l.Append(context.Background(), "track-7", ledger.PredicateTypeGateDecision,
				json.RawMessage(`{"decision":"monitor","i":`+string(rune('0'+i))+`}`))
			if err != nil {
				t.Fatal(err)
			}
			if i == 2 {
				r = x
			}
		}
		if unsigned {
			f.unsigned = write("unsigned.json", r)
			continue
		}
		f.bundle = write("bundle.json", r)
		f.pub = filepath.Join(sub, ledger.GeneratedPublicKeyFile)
		f.cpSame = write("cp-same.txt", r.Checkpoint)
		later := l.Checkpoint()
		f.cpLater = write("cp-later.json", map[string]any{"checkpoint": later.Text, "tree_size": later.Size})
		p, err := l.ConsistencyProof(r.TreeSize, later.Size)
		if err != nil {
			t.Fatal(err)
		}
		hs := make([]string, len(p))
		for i, h := range p {
			hs[i] = hex.EncodeToString(h)
		}
		f.cons = write("cons.json", map[string]any{"first": r.TreeSize, "second": later.Size, "proof": hs})
	}
	return f
}

func TestVerifyCommand(t *testing.T) {
	f := newVerifyFixture(t)
	tamper := func(name string, edit func(*ledger.Receipt)) string {
		b, _ := os.ReadFile(f.bundle)
		var r ledger.Receipt
		_ = json.Unmarshal(b, &r)
		edit(&r)
		b, _ = json.Marshal(r)
		p := filepath.Join(f.dir, name)
		_ = os.WriteFile(p, b, 0o600)
		return p
	}
	sigFlipped := tamper("sig.json", func(r *ledger.Receipt) {
		s, _ := base64.StdEncoding.DecodeString(r.Envelope.Signatures[0].Sig)
		s[10] ^= 0x40
		r.Envelope.Signatures[0].Sig = base64.StdEncoding.EncodeToString(s)
	})
	indexMoved := tamper("index.json", func(r *ledger.Receipt) { r.Index = 0 })
	otherKey := filepath.Join(f.dir, "other.pem")
	_ = os.WriteFile(otherKey, []byte("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n"), 0o600)

	tests := []struct {
		name   string
		args   []string
		ok     bool   // exit 0
		silent bool   // failed verification (report printed) rather than a usage error
		out    string // must appear in stdout
	}{
		{"valid", []string{f.bundle, "--pubkey", f.pub}, true, false, "verified: entry 2"},
		{"flags first", []string{"--pubkey", f.pub, f.bundle}, true, false, "verified"},
		{"same-size checkpoint", []string{f.bundle, "--pubkey", f.pub, "--checkpoint", f.cpSame}, true, false, "trusted checkpoint"},
		{"later checkpoint with proof", []string{f.bundle, "--pubkey", f.pub, "--checkpoint", f.cpLater, "--consistency", f.cons}, true, false, "verified"},
		{"later checkpoint without proof", []string{f.bundle, "--pubkey", f.pub, "--checkpoint", f.cpLater}, false, true, "consistency proof is needed"},
		{"no public key", []string{f.bundle}, false, true, "no public key given"},
		{"wrong public key", []string{f.bundle, "--pubkey", otherKey}, false, true, "FAIL  envelope signature"},
		{"signature flipped", []string{sigFlipped, "--pubkey", f.pub}, false, true, "FAIL  envelope signature"},
		{"index moved", []string{indexMoved, "--pubkey", f.pub}, false, true, "FAIL  inclusion"},
		{"unsigned ledger", []string{f.unsigned, "--pubkey", f.pub}, false, true, "unsigned"},
		{"no bundle", []string{"--pubkey", f.pub}, false, false, ""},
		{"two bundles", []string{f.bundle, f.bundle}, false, false, ""},
		{"missing file", []string{filepath.Join(f.dir, "nope.json")}, false, false, ""},
		{"not a bundle", []string{f.cpLater, "--pubkey", f.pub}, false, false, ""},
		{"pubkey not pem", []string{f.bundle, "--pubkey", f.bundle}, false, false, ""},
		{"consistency for other sizes", []string{f.bundle, "--pubkey", f.pub, "--checkpoint", f.cpSame, "--consistency", f.cons}, false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb strings.Builder
			err := run(context.Background(), append([]string{"verify"}, tt.args...), os.Getenv, &out, &errb)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v\nstdout:\n%s\nstderr:\n%s", err, tt.ok, out.String(), errb.String())
			}
			if !tt.ok && errors.Is(err, errSilent) != tt.silent {
				t.Errorf("err = %v, want a silent (reported) failure = %v", err, tt.silent)
			}
			if !strings.Contains(out.String(), tt.out) {
				t.Errorf("stdout lacks %q:\n%s", tt.out, out.String())
			}
		})
	}
}

// TestVerifyExportsCosignInputs: the exported record hashes to the
// statement's subject digest (what cosign checks against the blob), and the
// exported envelope is the bundle's.
func TestVerifyExportsCosignInputs(t *testing.T) {
	f := newVerifyFixture(t)
	envPath := filepath.Join(f.dir, "env.json")
	recPath := filepath.Join(f.dir, "record.json")
	var out strings.Builder
	if err := run(context.Background(), []string{"verify", f.bundle, "--pubkey", f.pub,
		"--envelope-out", envPath, "--record-out", recPath}, os.Getenv, &out, io.Discard); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	rec, _ := os.ReadFile(recPath)
	if string(rec) != `{"decision":"monitor","i":2}` {
		t.Errorf("record %q", rec)
	}
	env, _ := os.ReadFile(envPath)
	var e struct {
		PayloadType string `json:"payloadType"`
		Payload     string `json:"payload"`
	}
	if err := json.Unmarshal(env, &e); err != nil {
		t.Fatal(err)
	}
	payload, _ := base64.StdEncoding.DecodeString(e.Payload)
	var st struct {
		Subject []struct {
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
	}
	_ = json.Unmarshal(payload, &st)
	sum := sha256.Sum256(rec)
	if st.Subject[0].Digest["sha256"] != hex.EncodeToString(sum[:]) {
		t.Errorf("subject digest %s is not the SHA-256 of the exported record %x", st.Subject[0].Digest["sha256"], sum)
	}
}
