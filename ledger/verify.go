package ledger

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"
)

// VerifyOptions say what VerifyReceipt trusts besides the bundle itself.
type VerifyOptions struct {
	// PublicKey is the log's Ed25519 key (GET /v1/receipt/keys, or the
	// generated ledger-signing-key.pub.pem). Without it signatures cannot
	// be checked, and VerifyReceipt fails after running the other checks.
	PublicKey ed25519.PublicKey
	// Checkpoint is a signed checkpoint the verifier trusts independently
	// of the bundle (fetched later, or from a witness). When set, the
	// bundle's tree must be that tree or, given Consistency, a prefix of it.
	Checkpoint []byte
	// Consistency is the consistency proof from the bundle's tree size to
	// Checkpoint's (GET /v1/receipt/proof/consistency).
	Consistency [][]byte
}

// Check is one step of a verification and its outcome.
type Check struct {
	Name   string
	OK     bool
	Detail string
}

// VerifyReceipt checks a receipt bundle offline: the envelope is an in-toto
// Statement whose subject digest matches its predicate; the leaf hash is
// the RFC 6962 hash of the envelope; the inclusion proof leads from the
// leaf to the root; the checkpoint names that root and size; the envelope
// and checkpoint signatures verify under opts.PublicKey; and, when given,
// opts.Checkpoint vouches for the bundle's tree. It returns every check it
// ran and a KindVerify error naming the failed ones (nil when all pass).
func VerifyReceipt(r *Receipt, opts VerifyOptions) ([]Check, error) {
	var checks checkList
	payload, _, stmtErr := checkStatement(&r.Envelope)
	checks.add("statement", stmtErr, "in-toto Statement v1; subject sha256 digest matches the predicate")

	leaf, leafErr := checkLeaf(r)
	checks.add("leaf hash", leafErr, fmt.Sprintf("%x", leaf))

	root, inclErr := checkInclusion(r, leaf)
	checks.add("inclusion", inclErr, fmt.Sprintf("entry %d is in the tree of size %d", r.Index, r.TreeSize))

	origin, cpSize, cpRoot, parseErr := ParseCheckpoint([]byte(r.Checkpoint))
	cpErr := parseErr
	if cpErr == nil && (cpSize != r.TreeSize || !bytes.Equal(cpRoot, root)) {
		cpErr = fmt.Errorf("checkpoint is for size %d root %x, the bundle for size %d root %s", cpSize, cpRoot, r.TreeSize, r.RootHash)
	}
	checks.add("checkpoint", cpErr, fmt.Sprintf("%s at size %d names the bundle's root", origin, cpSize))

	sigErr := checkEnvelope(r, payload, stmtErr, opts.PublicKey)
	cpSigErr := checkCheckpointSignature(r, origin, parseErr, opts.PublicKey)
	checks.add("envelope signature", sigErr, "Ed25519 over the DSSE PAE (payload type and payload) by keyid "+KeyID(opts.PublicKey))
	checks.add("checkpoint signature", cpSigErr, "signed note by "+origin)

	if opts.Checkpoint != nil {
		checks.add("trusted checkpoint", checkTrusted(r, root, opts), "vouches for the bundle's tree")
	}
	return checks.result()
}

// checkList collects the outcome of each check of VerifyReceipt.
type checkList []Check

// add records one check: passed when err is nil (with okDetail), failed
// with err's text otherwise.
func (cl *checkList) add(name string, err error, okDetail string) {
	c := Check{Name: name, OK: err == nil, Detail: okDetail}
	if err != nil {
		c.Detail = err.Error()
	}
	*cl = append(*cl, c)
}

// result is every check, and a KindVerify error naming the failed ones.
func (cl checkList) result() ([]Check, error) {
	var failed []string
	for _, c := range cl {
		if !c.OK {
			failed = append(failed, c.Name+": "+c.Detail)
		}
	}
	if len(failed) > 0 {
		return cl, errf(KindVerify, "verify", strings.Join(failed, "; "), nil)
	}
	return cl, nil
}

// checkLeaf computes the envelope's leaf hash and compares the bundle's.
func checkLeaf(r *Receipt) ([]byte, error) {
	envJSON, _ := json.Marshal(&r.Envelope)
	leaf := rfc6962.DefaultHasher.HashLeaf(envJSON)
	if got, err := hex.DecodeString(r.LeafHash); err != nil || !bytes.Equal(got, leaf) {
		return leaf, fmt.Errorf("leaf_hash %q is not SHA-256(0x00 || envelope JSON) = %x", r.LeafHash, leaf)
	}
	return leaf, nil
}

// checkInclusion decodes the bundle's root (nil when unreadable) and
// verifies the inclusion proof of leaf under it.
func checkInclusion(r *Receipt, leaf []byte) ([]byte, error) {
	root, err := decodeHash(r.RootHash)
	if err != nil {
		return root, fmt.Errorf("root_hash: %v", err)
	}
	p, err := decodeHashes(r.InclusionProof)
	switch {
	case err != nil:
		return root, fmt.Errorf("inclusion_proof: %v", err)
	case r.Index >= r.TreeSize:
		return root, fmt.Errorf("index %d is not below tree_size %d", r.Index, r.TreeSize)
	}
	return root, readable(proof.VerifyInclusion(rfc6962.DefaultHasher, r.Index, r.TreeSize, leaf, p, root))
}

// checkEnvelope verifies the envelope's signature with pub; an unsigned
// placeholder or a missing key is a failed check, never a pass.
func checkEnvelope(r *Receipt, payload []byte, stmtErr error, pub ed25519.PublicKey) error {
	switch {
	case unsignedPlaceholder(&r.Envelope):
		return fmt.Errorf("the envelope is unsigned (placeholder signature of an --unsigned ledger)")
	case pub == nil:
		return fmt.Errorf("no public key given: the envelope signature is not verified")
	}
	return envelopeSignature(&r.Envelope, payload, stmtErr, pub)
}

// checkCheckpointSignature verifies the checkpoint's signed note with pub
// (parseErr: the checkpoint could not be read).
func checkCheckpointSignature(r *Receipt, origin string, parseErr error, pub ed25519.PublicKey) error {
	switch {
	case pub == nil:
		return fmt.Errorf("no public key given: the checkpoint signature is not verified")
	case parseErr != nil:
		return fmt.Errorf("not checked: the checkpoint is unreadable")
	}
	return checkNoteSignature([]byte(r.Checkpoint), origin, pub)
}

// DecodeStatement returns the in-toto Statement of an envelope, checked as
// VerifyReceipt checks it (payload type, statement type, one subject whose
// sha256 digest is that of the predicate's bytes). Signatures are not
// checked. Its Predicate holds the record's exact bytes: the blob that
// `cosign verify-blob-attestation` hashes.
func DecodeStatement(env *dsse.Envelope) (*Statement, error) {
	_, st, err := checkStatement(env)
	if err != nil {
		return nil, errf(KindVerify, "statement", "", err)
	}
	return st, nil
}

// checkStatement decodes the envelope payload and checks the in-toto
// Statement v1 shape and the subject digest. It returns the payload bytes
// (what the signature covers) and the statement decoded from them.
func checkStatement(env *dsse.Envelope) ([]byte, *Statement, error) {
	if env.PayloadType != PayloadType {
		return nil, nil, fmt.Errorf("payloadType is %q, want %q", env.PayloadType, PayloadType)
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return nil, nil, fmt.Errorf("payload is not base64: %v", err)
	}
	var st Statement
	if err := json.Unmarshal(payload, &st); err != nil {
		return nil, nil, fmt.Errorf("payload is not an in-toto statement: %v", err)
	}
	if st.Type != StatementType {
		return nil, nil, fmt.Errorf("_type is %q, want %q", st.Type, StatementType)
	}
	if len(st.Subject) != 1 {
		return nil, nil, fmt.Errorf("statement has %d subjects, want 1", len(st.Subject))
	}
	want := st.Subject[0].Digest["sha256"]
	sum := sha256.Sum256(st.Predicate)
	if want != hex.EncodeToString(sum[:]) {
		return nil, nil, fmt.Errorf("subject digest sha256 %q does not match the predicate's SHA-256 %x", want, sum)
	}
	return payload, &st, nil
}

// unsignedPlaceholder reports an envelope whose only signature is the
// --unsigned placeholder.
func unsignedPlaceholder(env *dsse.Envelope) bool {
	return len(env.Signatures) > 0 && !slices.ContainsFunc(env.Signatures, func(s dsse.Signature) bool {
		return s.KeyID != UnsignedKeyID
	})
}

// envelopeSignature checks the envelope's signature over the PAE of its
// payload bytes. A statement that failed its own checks (stmtErr) is still
// signed bytes: its signature is checked as long as the payload is base64,
// so an altered but readable payload is reported as failing the signature,
// not as unreadable.
func envelopeSignature(env *dsse.Envelope, payload []byte, stmtErr error, pub ed25519.PublicKey) error {
	if stmtErr != nil {
		var err error
		if payload, err = base64.StdEncoding.DecodeString(env.Payload); err != nil {
			return fmt.Errorf("not checked: the payload is not base64 (%v)", err)
		}
	}
	return checkEnvelopeSignature(env, payload, pub)
}

func checkEnvelopeSignature(env *dsse.Envelope, payload []byte, pub ed25519.PublicKey) error {
	id := KeyID(pub)
	pae := dsse.PAE(env.PayloadType, payload)
	for _, s := range env.Signatures {
		if s.KeyID == UnsignedKeyID {
			return fmt.Errorf("the envelope is unsigned (placeholder signature of an --unsigned ledger)")
		}
		if s.KeyID != id {
			continue
		}
		sig, err := base64.StdEncoding.DecodeString(s.Sig)
		if err != nil {
			return fmt.Errorf("signature of keyid %s is not base64", id)
		}
		if !ed25519.Verify(pub, pae, sig) {
			return fmt.Errorf("the Ed25519 signature of keyid %s over the DSSE PAE does not verify: the payload or its type changed after signing", id)
		}
		return nil
	}
	return fmt.Errorf("no signature by keyid %s", id)
}

func checkNoteSignature(text []byte, origin string, pub ed25519.PublicKey) error {
	vkey, err := note.NewEd25519VerifierKey(origin, pub)
	if err != nil {
		return fmt.Errorf("checkpoint origin %q cannot name a key: %v", origin, err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return err
	}
	if _, err := note.Open(text, note.VerifierList(v)); err != nil {
		return fmt.Errorf("checkpoint is not signed by this key for %s: %v", origin, err)
	}
	return nil
}

func checkTrusted(r *Receipt, root []byte, opts VerifyOptions) error {
	origin, size, troot, err := ParseCheckpoint(opts.Checkpoint)
	if err != nil {
		return err
	}
	if opts.PublicKey == nil {
		return fmt.Errorf("no public key given: the trusted checkpoint's signature is not verified")
	}
	if err := checkNoteSignature(opts.Checkpoint, origin, opts.PublicKey); err != nil {
		return err
	}
	if root == nil {
		return fmt.Errorf("the bundle's root hash is unreadable")
	}
	switch {
	case size < r.TreeSize && opts.Consistency == nil:
		return fmt.Errorf("trusted checkpoint (size %d) is older than the bundle's tree (size %d): a consistency proof from %d to %d is needed (GET /v1/receipt/proof/consistency?first=%d&second=%d)",
			size, r.TreeSize, size, r.TreeSize, size, r.TreeSize)
	case size < r.TreeSize:
		// A checkpoint kept from before (a backup, issue 34's restore
		// drill): the bundle's tree must extend it.
		if err := proof.VerifyConsistency(rfc6962.DefaultHasher, size, r.TreeSize, opts.Consistency, troot, root); err != nil {
			return fmt.Errorf("consistency proof from size %d to %d: %v", size, r.TreeSize, readable(err))
		}
		return nil
	case size == r.TreeSize:
		if !bytes.Equal(troot, root) {
			return fmt.Errorf("trusted checkpoint root %x differs from the bundle's %x at size %d", troot, root, size)
		}
		return nil
	case opts.Consistency == nil:
		return fmt.Errorf("trusted checkpoint is for size %d, the bundle for %d: a consistency proof is needed", size, r.TreeSize)
	}
	if err := proof.VerifyConsistency(rfc6962.DefaultHasher, r.TreeSize, size, opts.Consistency, root, troot); err != nil {
		return fmt.Errorf("consistency proof from size %d to %d: %v", r.TreeSize, size, readable(err))
	}
	return nil
}

// readable rewords the merkle library's root mismatch, which prints byte
// arrays as decimal lists, in hex.
func readable(err error) error {
	var rm proof.RootMismatchError
	if errors.As(err, &rm) {
		return fmt.Errorf("the proof leads to root %x, not %x", rm.CalculatedRoot, rm.ExpectedRoot)
	}
	return err
}

func decodeHash(s string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != hashSize {
		return nil, fmt.Errorf("%q is not a 32-byte hex hash", s)
	}
	return b, nil
}

func decodeHashes(ss []string) ([][]byte, error) {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		b, err := decodeHash(s)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// DecodeHashes turns hex hashes (as in proofs of the HTTP API) into bytes.
func DecodeHashes(ss []string) ([][]byte, error) {
	hs, err := decodeHashes(ss)
	if err != nil {
		return nil, errf(KindInvalid, "decode hashes", "", err)
	}
	return hs, nil
}
