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
	var checks []Check
	add := func(name string, err error, okDetail string) bool {
		c := Check{Name: name, OK: err == nil, Detail: okDetail}
		if err != nil {
			c.Detail = err.Error()
		}
		checks = append(checks, c)
		return err == nil
	}

	payload, _, stmtErr := checkStatement(&r.Envelope)
	add("statement", stmtErr, "in-toto Statement v1; subject sha256 digest matches the predicate")

	envJSON, _ := json.Marshal(&r.Envelope)
	leaf := rfc6962.DefaultHasher.HashLeaf(envJSON)
	var leafErr error
	if got, err := hex.DecodeString(r.LeafHash); err != nil || !bytes.Equal(got, leaf) {
		leafErr = fmt.Errorf("leaf_hash %q is not SHA-256(0x00 || envelope JSON) = %x", r.LeafHash, leaf)
	}
	add("leaf hash", leafErr, fmt.Sprintf("%x", leaf))

	root, rootErr := decodeHash(r.RootHash)
	var inclErr error
	switch {
	case rootErr != nil:
		inclErr = fmt.Errorf("root_hash: %v", rootErr)
	default:
		p, err := decodeHashes(r.InclusionProof)
		if err != nil {
			inclErr = fmt.Errorf("inclusion_proof: %v", err)
		} else if r.Index >= r.TreeSize {
			inclErr = fmt.Errorf("index %d is not below tree_size %d", r.Index, r.TreeSize)
		} else {
			inclErr = readable(proof.VerifyInclusion(rfc6962.DefaultHasher, r.Index, r.TreeSize, leaf, p, root))
		}
	}
	add("inclusion", inclErr, fmt.Sprintf("entry %d is in the tree of size %d", r.Index, r.TreeSize))

	origin, cpSize, cpRoot, parseErr := ParseCheckpoint([]byte(r.Checkpoint))
	cpErr := parseErr
	if cpErr == nil && (cpSize != r.TreeSize || !bytes.Equal(cpRoot, root)) {
		cpErr = fmt.Errorf("checkpoint is for size %d root %x, the bundle for size %d root %s", cpSize, cpRoot, r.TreeSize, r.RootHash)
	}
	add("checkpoint", cpErr, fmt.Sprintf("%s at size %d names the bundle's root", origin, cpSize))

	var sigErr, cpSigErr error
	if unsignedPlaceholder(&r.Envelope) {
		sigErr = fmt.Errorf("the envelope is unsigned (placeholder signature of an --unsigned ledger)")
	}
	if opts.PublicKey == nil {
		if sigErr == nil {
			sigErr = fmt.Errorf("no public key given: the envelope signature is not verified")
		}
		cpSigErr = fmt.Errorf("no public key given: the checkpoint signature is not verified")
	} else {
		if sigErr == nil {
			sigErr = envelopeSignature(&r.Envelope, payload, stmtErr, opts.PublicKey)
		}
		if parseErr == nil {
			cpSigErr = checkNoteSignature([]byte(r.Checkpoint), origin, opts.PublicKey)
		} else {
			cpSigErr = fmt.Errorf("not checked: the checkpoint is unreadable")
		}
	}
	add("envelope signature", sigErr, "Ed25519 over the DSSE PAE (payload type and payload) by keyid "+KeyID(opts.PublicKey))
	add("checkpoint signature", cpSigErr, "signed note by "+origin)

	if opts.Checkpoint != nil {
		add("trusted checkpoint", checkTrusted(r, root, opts), "vouches for the bundle's tree")
	}

	var failed []string
	for _, c := range checks {
		if !c.OK {
			failed = append(failed, c.Name+": "+c.Detail)
		}
	}
	if len(failed) > 0 {
		return checks, errf(KindVerify, "verify", strings.Join(failed, "; "), nil)
	}
	return checks, nil
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
	case size < r.TreeSize:
		return fmt.Errorf("trusted checkpoint (size %d) is older than the bundle's tree (size %d)", size, r.TreeSize)
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
