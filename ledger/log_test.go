package ledger_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"

	"github.com/cuasd/cuasd/ledger"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// openLog starts JetStream in dir/js and opens the ledger with its key in
// dir (unless opts say otherwise).
func openLog(t testing.TB, dir string, opts ledger.Options) (*ledger.Log, jetstream.JetStream, func()) {
	t.Helper()
	js, stopNATS := ledger.StartNATS(t, filepath.Join(dir, "js"))
	if opts.DataDir == "" {
		opts.DataDir = dir
	}
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	if opts.Instance == "" {
		opts.Instance = "test"
	}
	l, err := ledger.Open(context.Background(), js, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	stop := func() {
		l.Close()
		stopNATS()
	}
	t.Cleanup(stop)
	return l, js, stop
}

func record(i int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"track":"t-%d","decision":"monitor","lambda":0.%03d,"axes":[1,2,3,4,5,6,7,8,9,10,11,12,13]}`, i, i%1000))
}

func writeKey(t testing.TB, dir, name string) (string, ed25519.PublicKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, pub
}

// independentKeyID is the keyid definition computed here, not by ledger.
func independentKeyID(t testing.TB, pub ed25519.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(der)
	return hex.EncodeToString(s[:])
}

// verifyIndependently checks a receipt with crypto/ed25519, a hand-written
// DSSE PAE, the merkle library's inclusion verifier and the note package:
// none of the ledger's own verification code.
func verifyIndependently(t testing.TB, r ledger.Receipt, pub ed25519.PublicKey, origin string) {
	t.Helper()
	envJSON, err := json.Marshal(r.Envelope)
	if err != nil {
		t.Fatal(err)
	}
	leaf := sha256.Sum256(append([]byte{0}, envJSON...))
	if r.LeafHash != hex.EncodeToString(leaf[:]) {
		t.Fatalf("entry %d: leaf_hash %s, want %x", r.Index, r.LeafHash, leaf)
	}
	if r.Envelope.PayloadType != "application/vnd.in-toto+json" {
		t.Fatalf("payloadType %q", r.Envelope.PayloadType)
	}
	payload, err := base64.StdEncoding.DecodeString(r.Envelope.Payload)
	if err != nil {
		t.Fatal(err)
	}
	pae := fmt.Appendf(nil, "DSSEv1 %d %s %d %s", len(r.Envelope.PayloadType), r.Envelope.PayloadType, len(payload), payload)
	if len(r.Envelope.Signatures) != 1 || r.Envelope.Signatures[0].KeyID != independentKeyID(t, pub) {
		t.Fatalf("signatures %+v, want one by keyid %s", r.Envelope.Signatures, independentKeyID(t, pub))
	}
	sig, err := base64.StdEncoding.DecodeString(r.Envelope.Signatures[0].Sig)
	if err != nil || !ed25519.Verify(pub, pae, sig) {
		t.Fatalf("entry %d: envelope signature does not verify (%v)", r.Index, err)
	}
	var st struct {
		Type    string `json:"_type"`
		Subject []struct {
			Name   string
			Digest map[string]string
		}
		PredicateType string
		Predicate     json.RawMessage
	}
	if err := json.Unmarshal(payload, &st); err != nil {
		t.Fatal(err)
	}
	ps := sha256.Sum256(st.Predicate)
	if st.Type != "https://in-toto.io/Statement/v1" || len(st.Subject) != 1 || st.Subject[0].Digest["sha256"] != hex.EncodeToString(ps[:]) {
		t.Fatalf("statement %s", payload)
	}
	root, _ := hex.DecodeString(r.RootHash)
	p := make([][]byte, len(r.InclusionProof))
	for i, h := range r.InclusionProof {
		p[i], _ = hex.DecodeString(h)
	}
	if err := proof.VerifyInclusion(rfc6962.DefaultHasher, r.Index, r.TreeSize, leaf[:], p, root); err != nil {
		t.Fatalf("entry %d: inclusion proof: %v", r.Index, err)
	}
	verifyCheckpoint(t, r.Checkpoint, pub, origin, r.TreeSize, root)
}

func verifyCheckpoint(t testing.TB, text string, pub ed25519.PublicKey, origin string, size uint64, root []byte) {
	t.Helper()
	vkey, err := note.NewEd25519VerifierKey(origin, pub)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := note.NewVerifier(vkey)
	n, err := note.Open([]byte(text), note.VerifierList(v))
	if err != nil {
		t.Fatalf("checkpoint does not verify: %v\n%s", err, text)
	}
	want := origin + "\n" + strconv.FormatUint(size, 10) + "\n" + base64.StdEncoding.EncodeToString(root) + "\n"
	if n.Text != want {
		t.Fatalf("checkpoint body %q, want %q", n.Text, want)
	}
}

func readPub(t testing.TB, dir string) ed25519.PublicKey {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ledger.GeneratedPublicKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return k.(ed25519.PublicKey)
}

func TestAppendConcurrentReceiptsVerify(t *testing.T) {
	dir := t.TempDir()
	l, _, _ := openLog(t, dir, ledger.Options{})
	pub := readPub(t, dir)
	if !pub.Equal(l.PublicKey()) {
		t.Fatal("the generated public key file does not match the log's key")
	}
	const workers, each = 8, 40
	receipts := make([]ledger.Receipt, workers*each)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				n := w*each + i
				r, err := l.Append(context.Background(), "track-"+strconv.Itoa(n), ledger.PredicateTypeGateDecision, record(n))
				if err != nil {
					errs <- err
					return
				}
				receipts[n] = r
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := make(map[uint64]bool)
	for _, r := range receipts {
		if seen[r.Index] {
			t.Fatalf("index %d handed out twice", r.Index)
		}
		seen[r.Index] = true
		verifyIndependently(t, r, pub, "cuasd/test")
	}
	for i := range uint64(workers * each) {
		if !seen[i] {
			t.Fatalf("index %d missing: indices are not dense", i)
		}
	}
	if cp := l.Checkpoint(); cp.Size != workers*each {
		t.Errorf("tree size %d, want %d", cp.Size, workers*each)
	}
	// Every receipt's tree is a prefix of the final one.
	final := l.Checkpoint()
	for _, r := range receipts {
		root, _ := hex.DecodeString(r.RootHash)
		p, err := l.ConsistencyProof(r.TreeSize, final.Size)
		if err != nil {
			t.Fatal(err)
		}
		if err := proof.VerifyConsistency(rfc6962.DefaultHasher, r.TreeSize, final.Size, p, root, final.Root); err != nil {
			t.Fatalf("consistency %d -> %d: %v", r.TreeSize, final.Size, err)
		}
	}
}

func TestReopenRebuildsAndVerifies(t *testing.T) {
	dir := t.TempDir()
	l, _, stop := openLog(t, dir, ledger.Options{})
	pub := l.PublicKey()
	var cps []ledger.Checkpoint
	var receipts []ledger.Receipt
	for i := range 60 {
		r, err := l.Append(context.Background(), "s", ledger.PredicateTypeReceipt, record(i))
		if err != nil {
			t.Fatal(err)
		}
		receipts = append(receipts, r)
		if i%7 == 0 {
			cps = append(cps, l.Checkpoint())
		}
	}
	before := l.Checkpoint()
	stop()

	l2, _, _ := openLog(t, dir, ledger.Options{})
	after := l2.Checkpoint()
	if after.Size != before.Size || !bytes.Equal(after.Root, before.Root) || after.Text != before.Text {
		t.Fatalf("after reopen %d %x, before %d %x", after.Size, after.Root, before.Size, before.Root)
	}
	if !l2.PublicKey().Equal(pub) {
		t.Fatal("reopen used a different generated key")
	}
	for _, r := range receipts {
		got, err := l2.Receipt(context.Background(), r.Index)
		if err != nil {
			t.Fatal(err)
		}
		if got.LeafHash != r.LeafHash || got.Envelope.Payload != r.Envelope.Payload {
			t.Fatalf("entry %d changed across reopen", r.Index)
		}
		verifyIndependently(t, got, pub, "cuasd/test")
	}
	for _, cp := range cps {
		p, err := l2.ConsistencyProof(cp.Size, after.Size)
		if err != nil {
			t.Fatal(err)
		}
		if err := proof.VerifyConsistency(rfc6962.DefaultHasher, cp.Size, after.Size, p, cp.Root, after.Root); err != nil {
			t.Fatalf("consistency from %d: %v", cp.Size, err)
		}
	}
	// And appends continue where the log left off.
	r, err := l2.Append(context.Background(), "s", ledger.PredicateTypeReceipt, record(99))
	if err != nil {
		t.Fatal(err)
	}
	if r.Index != before.Size {
		t.Errorf("next index %d, want %d", r.Index, before.Size)
	}
	verifyIndependently(t, r, pub, "cuasd/test")
}

func TestStreamDeniesDeleteAndPurge(t *testing.T) {
	dir := t.TempDir()
	l, js, _ := openLog(t, dir, ledger.Options{})
	if _, err := l.Append(context.Background(), "s", "p", record(1)); err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(context.Background(), testStream)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := st.Info(context.Background())
	if c := info.Config; !c.DenyDelete || !c.DenyPurge || c.Storage != jetstream.FileStorage {
		t.Errorf("stream config deny_delete=%v deny_purge=%v storage=%v", c.DenyDelete, c.DenyPurge, c.Storage)
	}
	if err := st.DeleteMsg(context.Background(), 1); err == nil {
		t.Error("deleting a batch succeeded")
	}
	if err := st.Purge(context.Background()); err == nil {
		t.Error("purging the stream succeeded")
	}
}

func TestEntriesAndProofs(t *testing.T) {
	dir := t.TempDir()
	l, _, _ := openLog(t, dir, ledger.Options{})
	ctx := context.Background()
	var want []ledger.Receipt
	for i := range 25 {
		r, err := l.Append(ctx, "s-"+strconv.Itoa(i), "p", record(i))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	tests := []struct {
		from  uint64
		limit int
		n     int
	}{
		{0, 10, 10}, {20, 10, 5}, {24, 1, 1}, {25, 10, 0}, {1000, 10, 0}, {3, 0, 0},
	}
	for _, tt := range tests {
		es, cp, err := l.Entries(ctx, tt.from, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != tt.n || cp.Size != 25 {
			t.Fatalf("Entries(%d, %d): %d entries at size %d, want %d at 25", tt.from, tt.limit, len(es), cp.Size, tt.n)
		}
		for i, e := range es {
			w := want[tt.from+uint64(i)]
			if e.Index != w.Index || e.LeafHash != w.LeafHash || e.Envelope.Payload != w.Envelope.Payload || e.Time.IsZero() {
				t.Fatalf("entry %d = %+v, want receipt %+v", e.Index, e, w)
			}
		}
	}
	if _, err := l.Entry(ctx, 25); !errorsIs(err, ledger.ErrNotFound) {
		t.Errorf("Entry(25) err = %v, want not found", err)
	}
	if _, err := l.Receipt(ctx, 99); !errorsIs(err, ledger.ErrNotFound) {
		t.Errorf("Receipt(99) err = %v, want not found", err)
	}
	if _, err := l.ConsistencyProof(5, 26); !errorsIs(err, ledger.ErrNotFound) {
		t.Errorf("ConsistencyProof(5, 26) err = %v, want not found", err)
	}
	if _, err := l.ConsistencyProof(6, 5); !errorsIs(err, ledger.ErrInvalid) {
		t.Errorf("ConsistencyProof(6, 5) err = %v, want invalid", err)
	}
	for _, pair := range [][2]uint64{{0, 25}, {1, 25}, {7, 13}, {16, 25}, {25, 25}} {
		p, err := l.ConsistencyProof(pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		r1, _ := l.RootAt(pair[0])
		r2, _ := l.RootAt(pair[1])
		if err := proof.VerifyConsistency(rfc6962.DefaultHasher, pair[0], pair[1], p, r1, r2); err != nil {
			t.Errorf("consistency %v: %v", pair, err)
		}
	}
	// The roots the log reports at each size are the roots the receipts
	// were issued under.
	for _, r := range want {
		got, _ := l.RootAt(r.TreeSize)
		if hex.EncodeToString(got) != r.RootHash {
			t.Errorf("RootAt(%d) = %x, receipt said %s", r.TreeSize, got, r.RootHash)
		}
	}
}

func TestAppendRejectsBadInputAtomically(t *testing.T) {
	l, _, _ := openLog(t, t.TempDir(), ledger.Options{})
	ctx := context.Background()
	if _, err := l.Append(ctx, "s", "p", record(0)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, subject, pt, rec string
		want                   error
	}{
		{"array", "s", "p", `[1,2]`, ledger.ErrInvalid},
		{"malformed", "s", "p", `{"a":`, ledger.ErrInvalid},
		{"empty subject", "", "p", `{}`, ledger.ErrInvalid},
		{"empty predicate type", "s", "", `{}`, ledger.ErrInvalid},
		{"too large", "s", "p", `{"x":"` + string(bytes.Repeat([]byte("a"), 70000)) + `"}`, ledger.ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := l.Append(ctx, tt.subject, tt.pt, json.RawMessage(tt.rec)); !errorsIs(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if cp := l.Checkpoint(); cp.Size != 1 {
		t.Errorf("tree size %d after rejected appends, want 1", cp.Size)
	}
}

func TestUnsignedModeSaysSo(t *testing.T) {
	dir := t.TempDir()
	l, _, _ := openLog(t, dir, ledger.Options{Unsigned: true})
	if l.SigningMode() != ledger.ModeUnsigned || l.PublicKey() != nil || len(l.Keys()) != 0 {
		t.Fatalf("mode %q key %v keys %v", l.SigningMode(), l.PublicKey(), l.Keys())
	}
	r, err := l.Append(context.Background(), "s", "p", record(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Envelope.Signatures) != 1 || r.Envelope.Signatures[0].KeyID != ledger.UnsignedKeyID || r.Envelope.Signatures[0].Sig != "" {
		t.Errorf("signatures %+v, want the empty placeholder", r.Envelope.Signatures)
	}
	if _, err := os.Stat(filepath.Join(dir, ledger.GeneratedKeyFile)); err == nil {
		t.Error("unsigned mode generated a key")
	}
	// The Merkle part is real: the inclusion proof verifies.
	envJSON, _ := json.Marshal(r.Envelope)
	leaf := sha256.Sum256(append([]byte{0}, envJSON...))
	root, _ := hex.DecodeString(r.RootHash)
	if err := proof.VerifyInclusion(rfc6962.DefaultHasher, r.Index, r.TreeSize, leaf[:], nil, root); err != nil {
		t.Errorf("inclusion: %v", err)
	}
	want := "cuasd/test\n1\n" + base64.StdEncoding.EncodeToString(root) + "\n"
	if r.Checkpoint != want {
		t.Errorf("unsigned checkpoint %q, want the bare body %q", r.Checkpoint, want)
	}
	// And the verifier refuses it.
	_, pub := writeKey(t, t.TempDir(), "k.pem")
	if _, err := ledger.VerifyReceipt(&r, ledger.VerifyOptions{PublicKey: pub}); !errorsIs(err, ledger.ErrVerify) {
		t.Errorf("VerifyReceipt of an unsigned receipt: %v", err)
	}
}

func TestKeyRotation(t *testing.T) {
	dir := t.TempDir()
	keyA, pubA := writeKey(t, dir, "a.pem")
	keyB, pubB := writeKey(t, dir, "b.pem")
	ctx := context.Background()

	l, _, stop := openLog(t, dir, ledger.Options{SigningKeyFile: keyA})
	var ra []ledger.Receipt
	for i := range 3 {
		r, err := l.Append(ctx, "s", "p", record(i))
		if err != nil {
			t.Fatal(err)
		}
		verifyIndependently(t, r, pubA, "cuasd/test")
		ra = append(ra, r)
	}
	stop()

	l2, _, _ := openLog(t, dir, ledger.Options{SigningKeyFile: keyB})
	for i := range 2 {
		r, err := l2.Append(ctx, "s", "p", record(10+i))
		if err != nil {
			t.Fatal(err)
		}
		verifyIndependently(t, r, pubB, "cuasd/test")
	}
	keys := l2.Keys()
	if len(keys) != 2 {
		t.Fatalf("keys %+v, want 2", keys)
	}
	a, b := keys[0], keys[1]
	switch {
	case a.KeyID != independentKeyID(t, pubA) || a.Current || *a.FirstIndex != 0 || *a.LastIndex != 2 || a.ValidUntil == nil:
		t.Errorf("retired key %+v", a)
	case b.KeyID != independentKeyID(t, pubB) || !b.Current || *b.FirstIndex != 3 || *b.LastIndex != 4 || b.ValidUntil != nil:
		t.Errorf("current key %+v", b)
	}
	if p, err := ledger.ParsePublicKeyPEM([]byte(a.PublicKeyPEM)); err != nil || !p.Equal(pubA) {
		t.Errorf("retired key PEM: %v", err)
	}
	// The old envelope still verifies with the old key; the current
	// checkpoint is signed by the new one.
	r0, err := l2.Receipt(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r0.Envelope.Signatures[0].Sig != ra[0].Envelope.Signatures[0].Sig {
		t.Error("entry 0's envelope changed")
	}
	root, _ := hex.DecodeString(r0.RootHash)
	verifyCheckpoint(t, r0.Checkpoint, pubB, "cuasd/test", 5, root)
}

func TestOpenRejectsBadOptions(t *testing.T) {
	js, _ := ledger.StartNATS(t, filepath.Join(t.TempDir(), "js"))
	ctx := context.Background()
	bad := filepath.Join(t.TempDir(), "bad.pem")
	os.WriteFile(bad, []byte("not a key"), 0o600)
	tests := []struct {
		name string
		opts ledger.Options
	}{
		{"instance with slash", ledger.Options{Instance: "a/b", DataDir: t.TempDir()}},
		{"instance with space", ledger.Options{Instance: "a b", DataDir: t.TempDir()}},
		{"no key and no data dir", ledger.Options{}},
		{"missing key file", ledger.Options{SigningKeyFile: "/nonexistent/k.pem"}},
		{"bad key file", ledger.Options{SigningKeyFile: bad}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Logger = quiet
			if l, err := ledger.Open(ctx, js, tt.opts); !errorsIs(err, ledger.ErrInvalid) {
				if l != nil {
					l.Close()
				}
				t.Errorf("Open err = %v, want invalid", err)
			}
		})
	}
}

func TestCloseFailsLaterAppends(t *testing.T) {
	l, _, _ := openLog(t, t.TempDir(), ledger.Options{})
	l.Close()
	if _, err := l.Append(context.Background(), "s", "p", record(1)); !errorsIs(err, ledger.ErrClosed) {
		t.Errorf("Append after Close: %v", err)
	}
}

// TestBatchLimitsSplitBatches drives the committer into its size and count
// limits: large records from many clients must split into batches that
// each fit the limits, and lose nothing.
func TestBatchLimitsSplitBatches(t *testing.T) {
	const maxBytes, maxEntries = 128 << 10, 3
	dir := t.TempDir()
	l, js, _ := openLog(t, dir, ledger.Options{MaxBatchBytes: maxBytes, MaxBatchEntries: maxEntries})
	pub := l.PublicKey()
	big := json.RawMessage(`{"blob":"` + string(bytes.Repeat([]byte("x"), 40_000)) + `"}`)
	const n = 24
	receipts := make([]ledger.Receipt, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			rec := record(i)
			if i%2 == 0 {
				rec = big
			}
			r, err := l.Append(context.Background(), "s", "p", rec)
			if err != nil {
				t.Error(err)
				return
			}
			receipts[i] = r
		})
	}
	wg.Wait()
	for _, r := range receipts {
		verifyIndependently(t, r, pub, "cuasd/test")
	}
	st, err := js.Stream(context.Background(), testStream)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := st.Info(context.Background())
	for seq := uint64(1); seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(context.Background(), seq)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Data) > maxBytes {
			t.Errorf("batch %d is %d bytes, over the %d limit", seq, len(m.Data), maxBytes)
		}
	}
	sizes := map[uint64]int{}
	for _, r := range receipts {
		sizes[r.TreeSize]++
	}
	for size, k := range sizes {
		if k > maxEntries {
			t.Errorf("%d receipts share the checkpoint at size %d, over the %d-entry limit", k, size, maxEntries)
		}
	}
	if cp := l.Checkpoint(); cp.Size != n {
		t.Errorf("tree size %d, want %d", cp.Size, n)
	}
}

// testStream is the stream of the "test" instance that openLog uses.
var testStream, _ = ledger.StreamFor("test")

func TestStreamFor(t *testing.T) {
	for _, tt := range []struct{ instance, stream, subject string }{
		{"", "CUAS_LEDGER", "cuas.ledger.batch"},
		{"default", "CUAS_LEDGER", "cuas.ledger.batch"},
		{"east-1", "CUAS_LEDGER_east-1", "cuas.ledger.east-1.batch"},
		{"site_b", "CUAS_LEDGER_site_b", "cuas.ledger.site_b.batch"},
	} {
		st, sub := ledger.StreamFor(tt.instance)
		if st != tt.stream || sub != tt.subject {
			t.Errorf("StreamFor(%q) = %q, %q; want %q, %q", tt.instance, st, sub, tt.stream, tt.subject)
		}
	}
}

// TestInstanceNamesAreRefused: a name that cannot be a stream name as it
// is (a '.', a space, a wildcard, too long) stops Open with KindInvalid
// before anything is created, so that two names never share a log.
func TestInstanceNamesAreRefused(t *testing.T) {
	dir := t.TempDir()
	js, _ := ledger.StartNATS(t, filepath.Join(dir, "js"))
	for _, name := range []string{"site.b", "a b", "a*", "a>", strings.Repeat("x", 65)} {
		l, err := ledger.Open(context.Background(), js, ledger.Options{Instance: name, DataDir: filepath.Join(dir, "d"), Logger: quiet})
		if err == nil {
			l.Close()
			t.Errorf("Open with instance %q succeeded", name)
			continue
		}
		if ledger.KindOf(err) != ledger.KindInvalid || !strings.Contains(err.Error(), "instance name") {
			t.Errorf("Open with instance %q: %v (kind %v), want an invalid instance name error", name, err, ledger.KindOf(err))
		}
	}
	stream, _ := ledger.StreamFor("site_b")
	if _, err := js.Stream(context.Background(), stream); err == nil {
		t.Errorf("stream %s exists after refused names", stream)
	}
}

// TestInstancesHaveTheirOwnLogs: two instances on one JetStream write two
// independent logs.
func TestInstancesHaveTheirOwnLogs(t *testing.T) {
	dir := t.TempDir()
	js, _ := ledger.StartNATS(t, filepath.Join(dir, "js"))
	ctx := context.Background()
	var logs []*ledger.Log
	for _, inst := range []string{"a", "b"} {
		l, err := ledger.Open(ctx, js, ledger.Options{Instance: inst, DataDir: filepath.Join(dir, inst), Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		logs = append(logs, l)
	}
	for i := range 5 {
		for _, l := range logs {
			if _, err := l.Append(ctx, "s", "p", record(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, l := range logs {
		if cp := l.Checkpoint(); cp.Size != 5 || cp.Origin != "cuasd/"+[]string{"a", "b"}[i] {
			t.Errorf("log %d: %s size %d", i, cp.Origin, cp.Size)
		}
	}
}

// Without an instance name the origin is unique to the log: derived from
// the signing key (random for an unsigned log), and kept across reopening;
// two deployments no longer both sign for "cuasd/default" (issue 24,
// item 7).
func TestDefaultOriginIsUniquePerLog(t *testing.T) {
	ctx := context.Background()
	open := func(dir string, unsigned bool) (*ledger.Log, func()) {
		js, stopNATS := ledger.StartNATS(t, filepath.Join(dir, "js"))
		l, err := ledger.Open(ctx, js, ledger.Options{DataDir: dir, Unsigned: unsigned, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(ctx, "s", ledger.PredicateTypeReceipt, record(1)); err != nil {
			t.Fatal(err)
		}
		return l, func() { l.Close(); stopNATS() }
	}
	seen := map[string]string{}
	for _, c := range []struct {
		name     string
		unsigned bool
	}{{"a", false}, {"b", false}, {"u", true}} {
		dir := t.TempDir()
		l, stop := open(dir, c.unsigned)
		origin := l.Origin()
		if !c.unsigned && origin != "cuasd/k-"+ledger.KeyID(l.PublicKey())[:16] {
			t.Errorf("%s: origin %q, want cuasd/k- and the key id's first 16 digits", c.name, origin)
		}
		if c.unsigned && !strings.HasPrefix(origin, "cuasd/u-") {
			t.Errorf("%s: origin %q, want cuasd/u-...", c.name, origin)
		}
		if other, dup := seen[origin]; dup {
			t.Errorf("logs %s and %s share the origin %s", other, c.name, origin)
		}
		seen[origin] = c.name
		stop()
		l, stop = open(dir, c.unsigned)
		if l.Origin() != origin || l.Checkpoint().Origin != origin {
			t.Errorf("%s: reopened as %q (checkpoint %q), created as %q", c.name, l.Origin(), l.Checkpoint().Origin, origin)
		}
		stop()
	}
}
