package ledger

import (
	"crypto/sha256"
	"hash"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
)

// hashSize is the size of every RFC 6962 SHA-256 hash.
const hashSize = sha256.Size

var (
	leafPrefix = []byte{rfc6962.RFC6962LeafHashPrefix}
	nodePrefix = []byte{rfc6962.RFC6962NodeHashPrefix}
	rangeMaker = compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}
)

// tree keeps every complete node of an RFC 6962 Merkle tree in memory:
// levels[k] holds, back to back, the 32-byte hashes of the complete
// subtrees of height k, in index order. That is 2n hashes (64 bytes per
// leaf), which buys O(log n) inclusion and consistency proofs with no
// storage reads. Which nodes a proof needs, and how the right-edge
// ("ephemeral") nodes of an incomplete tree are folded, is left to the
// transparency-dev/merkle proof and compact packages.
//
// tree is not safe for concurrent use; Log guards it.
type tree struct {
	levels [][]byte
	n      uint64    // leaves appended
	h      hash.Hash // reused SHA-256 state: appends allocate nothing
}

func newTree() *tree { return &tree{levels: make([][]byte, 1, 64), h: sha256.New()} }

// leafHash writes the RFC 6962 leaf hash SHA-256(0x00 || data) into dst.
func (t *tree) leafHash(dst *[hashSize]byte, data []byte) {
	t.h.Reset()
	t.h.Write(leafPrefix)
	t.h.Write(data)
	t.h.Sum(dst[:0])
}

// append adds a leaf hash and every complete node it closes.
func (t *tree) append(leaf *[hashSize]byte) {
	t.levels[0] = append(t.levels[0], leaf[:]...)
	idx := t.n
	for k := 0; idx&1 == 1; k++ {
		l := t.levels[k]
		if len(t.levels) == k+1 {
			t.levels = append(t.levels, nil)
		}
		t.h.Reset()
		t.h.Write(nodePrefix)
		t.h.Write(l[len(l)-2*hashSize:])
		t.levels[k+1] = t.h.Sum(t.levels[k+1])
		idx >>= 1
	}
	t.n++
}

// truncate forgets every leaf from size on (an append that did not become
// durable is rolled back this way).
func (t *tree) truncate(size uint64) {
	if size >= t.n {
		return
	}
	for k := range t.levels {
		t.levels[k] = t.levels[k][:(size>>uint(k))*hashSize]
	}
	t.n = size
}

// node returns the complete node at (level, index); the caller guarantees
// it exists.
func (t *tree) node(level uint, index uint64) []byte {
	off := index * hashSize
	return t.levels[level][off : off+hashSize : off+hashSize]
}

func (t *tree) nodes(ids []compact.NodeID) [][]byte {
	hs := make([][]byte, len(ids))
	for i, id := range ids {
		hs[i] = t.node(id.Level, id.Index)
	}
	return hs
}

// root returns the root hash of the tree of the first size leaves.
func (t *tree) root(size uint64) ([]byte, error) {
	if size > t.n {
		return nil, errf(KindNotFound, "root", "tree size beyond the log", nil)
	}
	if size == 0 {
		return rfc6962.DefaultHasher.EmptyRoot(), nil
	}
	r, err := rangeMaker.NewRange(0, size, t.nodes(compact.RangeNodes(0, size, nil)))
	if err != nil {
		return nil, errf(KindIntegrity, "root", "", err)
	}
	return r.GetRootHash(nil)
}

// inclusion returns the RFC 6962 inclusion proof of leaf index in the tree
// of size leaves.
func (t *tree) inclusion(index, size uint64) ([][]byte, error) {
	if index >= size || size > t.n {
		return nil, errf(KindNotFound, "inclusion proof", "index or tree size beyond the log", nil)
	}
	ns, err := proof.Inclusion(index, size)
	if err != nil {
		return nil, errf(KindInvalid, "inclusion proof", "", err)
	}
	return ns.Rehash(t.nodes(ns.IDs), rfc6962.DefaultHasher.HashChildren)
}

// consistency returns the RFC 6962 consistency proof between the trees of
// size1 and size2 leaves.
func (t *tree) consistency(size1, size2 uint64) ([][]byte, error) {
	if size1 > size2 || size2 > t.n {
		return nil, errf(KindInvalid, "consistency proof", "need first <= second <= tree size", nil)
	}
	ns, err := proof.Consistency(size1, size2)
	if err != nil {
		return nil, errf(KindInvalid, "consistency proof", "", err)
	}
	return ns.Rehash(t.nodes(ns.IDs), rfc6962.DefaultHasher.HashChildren)
}
