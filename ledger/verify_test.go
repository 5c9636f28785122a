package ledger_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/ledger"
)

// bundleFixture appends a few receipts and returns one from the middle,
// the log's key, and a later checkpoint with the consistency proof to it.
func bundleFixture(t *testing.T) (r ledger.Receipt, pub ed25519.PublicKey, later ledger.Checkpoint, cons [][]byte) {
	t.Helper()
	l, _, _ := openLog(t, t.TempDir(), ledger.Options{})
	ctx := context.Background()
	for i := range 11 {
		x, err := l.Append(ctx, "s", ledger.PredicateTypeReceipt, record(i))
		if err != nil {
			t.Fatal(err)
		}
		if i == 5 {
			r = x
		}
	}
	later = l.Checkpoint()
	cons, err := l.ConsistencyProof(r.TreeSize, later.Size)
	if err != nil {
		t.Fatal(err)
	}
	return r, l.PublicKey(), later, cons
}

func TestVerifyReceipt(t *testing.T) {
	good, pub, later, cons := bundleFixture(t)
	otherPub, _, _ := ed25519.GenerateKey(nil)
	flipHex := func(s string) string {
		if s[0] == '0' {
			return "1" + s[1:]
		}
		return "0" + s[1:]
	}
	tests := []struct {
		name   string
		mutate func(r *ledger.Receipt, o *ledger.VerifyOptions)
		fail   []string // names of the checks that must fail; none = valid
	}{
		{"valid", func(*ledger.Receipt, *ledger.VerifyOptions) {}, nil},
		{"valid with same-size trusted checkpoint", func(r *ledger.Receipt, o *ledger.VerifyOptions) {
			o.Checkpoint = []byte(r.Checkpoint)
		}, nil},
		{"valid with later checkpoint and consistency proof", func(_ *ledger.Receipt, o *ledger.VerifyOptions) {
			o.Checkpoint, o.Consistency = []byte(later.Text), cons
		}, nil},
		{"later checkpoint without consistency proof", func(_ *ledger.Receipt, o *ledger.VerifyOptions) {
			o.Checkpoint = []byte(later.Text)
		}, []string{"trusted checkpoint"}},
		{"later checkpoint with a wrong consistency proof", func(_ *ledger.Receipt, o *ledger.VerifyOptions) {
			bad := append([][]byte{}, cons...)
			bad[0] = make([]byte, 32)
			o.Checkpoint, o.Consistency = []byte(later.Text), bad
		}, []string{"trusted checkpoint"}},
		{"no public key", func(_ *ledger.Receipt, o *ledger.VerifyOptions) { o.PublicKey = nil },
			[]string{"envelope signature", "checkpoint signature"}},
		{"wrong public key", func(_ *ledger.Receipt, o *ledger.VerifyOptions) { o.PublicKey = otherPub },
			[]string{"envelope signature", "checkpoint signature"}},
		{"signature altered", func(r *ledger.Receipt, _ *ledger.VerifyOptions) {
			sig, _ := base64.StdEncoding.DecodeString(r.Envelope.Signatures[0].Sig)
			sig[0] ^= 1
			r.Envelope.Signatures = []ledgerSig{{KeyID: r.Envelope.Signatures[0].KeyID, Sig: base64.StdEncoding.EncodeToString(sig)}}
		}, []string{"leaf hash", "inclusion", "envelope signature"}},
		{"payload swapped", func(r *ledger.Receipt, _ *ledger.VerifyOptions) {
			p, _ := base64.StdEncoding.DecodeString(r.Envelope.Payload)
			p = []byte(strings.Replace(string(p), `"decision":"monitor"`, `"decision":"engage!"`, 1))
			r.Envelope.Payload = base64.StdEncoding.EncodeToString(p)
		}, []string{"statement", "leaf hash", "inclusion", "envelope signature"}},
		{"leaf hash altered", func(r *ledger.Receipt, _ *ledger.VerifyOptions) { r.LeafHash = flipHex(r.LeafHash) },
			[]string{"leaf hash"}},
		{"proof hash altered", func(r *ledger.Receipt, _ *ledger.VerifyOptions) {
			r.InclusionProof = append([]string{}, r.InclusionProof...)
			r.InclusionProof[1] = flipHex(r.InclusionProof[1])
		}, []string{"inclusion"}},
		{"index altered", func(r *ledger.Receipt, _ *ledger.VerifyOptions) { r.Index++ }, []string{"inclusion"}},
		{"root altered", func(r *ledger.Receipt, _ *ledger.VerifyOptions) { r.RootHash = flipHex(r.RootHash) },
			[]string{"inclusion", "checkpoint"}},
		{"tree size altered", func(r *ledger.Receipt, _ *ledger.VerifyOptions) { r.TreeSize++ },
			[]string{"inclusion", "checkpoint"}},
		{"checkpoint body altered", func(r *ledger.Receipt, _ *ledger.VerifyOptions) {
			r.Checkpoint = strings.Replace(r.Checkpoint, "cuasd/test\n", "cuasd/evil\n", 1)
		}, []string{"checkpoint signature"}},
		{"checkpoint garbage", func(r *ledger.Receipt, _ *ledger.VerifyOptions) { r.Checkpoint = "x" },
			[]string{"checkpoint", "checkpoint signature"}},
		{"bad hex", func(r *ledger.Receipt, _ *ledger.VerifyOptions) { r.RootHash = "zz" },
			[]string{"inclusion", "checkpoint"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := good
			r.Envelope.Signatures = append([]ledgerSig{}, good.Envelope.Signatures...)
			o := ledger.VerifyOptions{PublicKey: pub}
			tt.mutate(&r, &o)
			checks, err := ledger.VerifyReceipt(&r, o)
			var failed []string
			for _, c := range checks {
				if !c.OK {
					failed = append(failed, c.Name)
				}
			}
			if strings.Join(failed, ",") != strings.Join(tt.fail, ",") {
				t.Errorf("failed checks %q, want %q (err %v)", failed, tt.fail, err)
			}
			if (err == nil) != (len(tt.fail) == 0) || (err != nil && !errorsIs(err, ledger.ErrVerify)) {
				t.Errorf("err = %v", err)
			}
		})
	}
}

func FuzzVerifyReceipt(f *testing.F) {
	f.Add([]byte(`{"index":0,"leaf_hash":"00","envelope":{"payloadType":"application/vnd.in-toto+json","payload":"e30=","signatures":[{"keyid":"k","sig":"AA=="}]},"tree_size":1,"root_hash":"00","inclusion_proof":[],"checkpoint":"o\n1\nAAAA\n"}`))
	pub, _, _ := ed25519.GenerateKey(nil)
	f.Fuzz(func(t *testing.T, bundle []byte) {
		var r ledger.Receipt
		if json.Unmarshal(bundle, &r) != nil {
			return
		}
		checks, err := ledger.VerifyReceipt(&r, ledger.VerifyOptions{PublicKey: pub, Checkpoint: []byte(r.Checkpoint)})
		// A random key signs nothing, so nothing may verify.
		if err == nil {
			t.Fatalf("a bundle verified under a fresh random key: %+v", checks)
		}
	})
}
