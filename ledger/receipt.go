package ledger

import "github.com/secure-systems-lab/go-securesystemslib/dsse"

// Receipt is what an append returns: the bundle that `cuasd verify` checks
// offline.
type Receipt struct {
	Index          uint64        `json:"index"`
	LeafHash       string        `json:"leaf_hash"`
	Envelope       dsse.Envelope `json:"envelope"`
	TreeSize       uint64        `json:"tree_size"`
	RootHash       string        `json:"root_hash"`
	InclusionProof []string      `json:"inclusion_proof"`
	Checkpoint     string        `json:"checkpoint"`
}
