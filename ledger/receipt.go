package ledger

import (
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
)

// Receipt is what an append returns: the bundle that `cuasd verify` checks
// offline. It holds the signed envelope, where it sits in the log, and the
// proof that the signed checkpoint commits to it.
type Receipt struct {
	// Index is the entry's position in the log, from 0.
	Index uint64 `json:"index"`
	// LeafHash is the hex RFC 6962 leaf hash SHA-256(0x00 || E), where E
	// is the envelope's compact JSON encoding (Go's encoding/json output
	// of Envelope: payloadType, payload, signatures[keyid, sig]).
	LeafHash string `json:"leaf_hash"`
	// Envelope is the DSSE envelope whose payload is an in-toto Statement
	// v1 about the record.
	Envelope dsse.Envelope `json:"envelope"`
	// TreeSize is the size of the tree that InclusionProof and Checkpoint
	// are about.
	TreeSize uint64 `json:"tree_size"`
	// RootHash is the hex root hash of that tree.
	RootHash string `json:"root_hash"`
	// InclusionProof is the RFC 6962 audit path from the leaf to RootHash,
	// hex hashes from the bottom up.
	InclusionProof []string `json:"inclusion_proof"`
	// Checkpoint is the C2SP tlog-checkpoint for TreeSize as a signed note
	// (the bare body in --unsigned mode).
	Checkpoint string `json:"checkpoint"`
}

// Entry is one stored log entry as the ledger listing shows it.
type Entry struct {
	Index    uint64        `json:"index"`
	LeafHash string        `json:"leaf_hash"`
	Envelope dsse.Envelope `json:"envelope"`
	// Time is when the ledger accepted the entry (its clock, not a trusted
	// timestamp: it is not covered by the signature).
	Time time.Time `json:"time"`
}

// KeyInfo describes a public key that signed, or signs, entries of this
// log. Private keys never leave the process.
type KeyInfo struct {
	// KeyID is KeyID(public key), the keyid in envelope signatures.
	KeyID string `json:"keyid"`
	// Algorithm is "ed25519".
	Algorithm string `json:"algorithm"`
	// PublicKeyPEM is the PKIX PEM public key, for `cuasd verify --pubkey`
	// and `cosign verify-blob-attestation --key`.
	PublicKeyPEM string `json:"public_key_pem"`
	// NoteVerifierKey is the signed-note verifier key
	// ("<origin>+<hash>+<base64>") that verifies checkpoints.
	NoteVerifierKey string `json:"note_verifier_key"`
	// Current is true for the key this process signs with.
	Current bool `json:"current"`
	// FirstIndex and LastIndex bound the entries the key signed; nil when
	// it has signed none yet.
	FirstIndex *uint64 `json:"first_index"`
	LastIndex  *uint64 `json:"last_index"`
	// ValidFrom is when the key signed its first entry (or, for a current
	// key that has signed none, when this process started using it).
	ValidFrom time.Time `json:"valid_from"`
	// ValidUntil is when a retired key signed its last entry; nil for the
	// current key.
	ValidUntil *time.Time `json:"valid_until"`
}
