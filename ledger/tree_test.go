package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/merkle/testonly"
)

// The reference below is RFC 6962 section 2.1 written out recursively,
// independent of the compact-range and proof machinery the tree uses:
// MTH (the root), PATH (the audit path) and PROOF/SUBPROOF (consistency).

func refLeaf(d []byte) []byte {
	h := sha256.Sum256(append([]byte{0}, d...))
	return h[:]
}

func refNode(l, r []byte) []byte {
	h := sha256.Sum256(append(append([]byte{1}, l...), r...))
	return h[:]
}

// refSplit is the largest power of two smaller than n.
func refSplit(n int) int {
	k := 1
	for k<<1 < n {
		k <<= 1
	}
	return k
}

func refMTH(d [][]byte) []byte {
	switch len(d) {
	case 0:
		h := sha256.Sum256(nil)
		return h[:]
	case 1:
		return refLeaf(d[0])
	}
	k := refSplit(len(d))
	return refNode(refMTH(d[:k]), refMTH(d[k:]))
}

func refPath(m int, d [][]byte) [][]byte {
	if len(d) <= 1 {
		return nil
	}
	k := refSplit(len(d))
	if m < k {
		return append(refPath(m, d[:k]), refMTH(d[k:]))
	}
	return append(refPath(m-k, d[k:]), refMTH(d[:k]))
}

func refSubproof(m int, d [][]byte, b bool) [][]byte {
	n := len(d)
	if m == n {
		if b {
			return nil
		}
		return [][]byte{refMTH(d)}
	}
	k := refSplit(n)
	if m <= k {
		return append(refSubproof(m, d[:k], b), refMTH(d[k:]))
	}
	return append(refSubproof(m-k, d[k:], false), refMTH(d[:k]))
}

func refConsistency(m int, d [][]byte) [][]byte {
	if m == 0 || m == len(d) {
		return nil
	}
	return refSubproof(m, d, true)
}

func leafData(i int) []byte {
	return binary.BigEndian.AppendUint64([]byte("leaf-"), uint64(i))
}

func buildTree(data [][]byte) *tree {
	t := newTree()
	var leaf [hashSize]byte
	for _, d := range data {
		t.leafHash(&leaf, d)
		t.append(&leaf)
	}
	return t
}

// TestTreeRootsCTVectors checks the roots of the trees built from the
// certificate-transparency test leaves against their published roots.
func TestTreeRootsCTVectors(t *testing.T) {
	leaves := testonly.LeafInputs()
	roots := testonly.RootHashes()
	tr := buildTree(leaves)
	for size := range uint64(len(leaves) + 1) {
		got, err := tr.root(size)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, roots[size]) {
			t.Errorf("root(%d) = %x, want %x", size, got, roots[size])
		}
	}
}

func TestTreeLeafHash(t *testing.T) {
	tr := newTree()
	for _, d := range [][]byte{nil, {}, []byte("x"), bytes.Repeat([]byte{0xa5}, 1000)} {
		var got [hashSize]byte
		tr.leafHash(&got, d)
		if want := rfc6962.DefaultHasher.HashLeaf(d); !bytes.Equal(got[:], want) {
			t.Errorf("leafHash(%q) = %x, want %x", d, got, want)
		}
	}
}

// TestTreeProofsAgainstRFC compares roots and both kinds of proofs with
// the recursive RFC 6962 definitions for every size up to 70, and checks
// each proof with the merkle library's verifiers.
func TestTreeProofsAgainstRFC(t *testing.T) {
	const n = 70
	data := make([][]byte, n)
	for i := range data {
		data[i] = leafData(i)
	}
	tr := buildTree(data)
	for size := 1; size <= n; size++ {
		root, err := tr.root(uint64(size))
		if err != nil {
			t.Fatal(err)
		}
		if want := refMTH(data[:size]); !bytes.Equal(root, want) {
			t.Fatalf("root(%d) = %x, want %x", size, root, want)
		}
		for i := range size {
			p, err := tr.inclusion(uint64(i), uint64(size))
			if err != nil {
				t.Fatal(err)
			}
			if want := refPath(i, data[:size]); !equalHashes(p, want) {
				t.Fatalf("inclusion(%d, %d) = %x, want %x", i, size, p, want)
			}
			if err := proof.VerifyInclusion(rfc6962.DefaultHasher, uint64(i), uint64(size), refLeaf(data[i]), p, root); err != nil {
				t.Fatalf("inclusion(%d, %d) does not verify: %v", i, size, err)
			}
		}
		for m := 0; m <= size; m++ {
			p, err := tr.consistency(uint64(m), uint64(size))
			if err != nil {
				t.Fatal(err)
			}
			if want := refConsistency(m, data[:size]); !equalHashes(p, want) {
				t.Fatalf("consistency(%d, %d) = %x, want %x", m, size, p, want)
			}
			if err := proof.VerifyConsistency(rfc6962.DefaultHasher, uint64(m), uint64(size), p, refMTH(data[:m]), root); err != nil {
				t.Fatalf("consistency(%d, %d) does not verify: %v", m, size, err)
			}
		}
	}
}

// TestTreeTruncate: a rolled-back append leaves the tree as if it never
// happened, and appends after it land right.
func TestTreeTruncate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([][]byte, 300)
	for i := range data {
		data[i] = leafData(i)
	}
	for range 50 {
		keep := rng.IntN(200)
		extra := 1 + rng.IntN(100)
		tr := buildTree(data[:keep])
		var leaf [hashSize]byte
		for i := range extra {
			tr.leafHash(&leaf, []byte(fmt.Sprint("junk", i)))
			tr.append(&leaf)
		}
		tr.truncate(uint64(keep))
		for _, d := range data[keep:] {
			tr.leafHash(&leaf, d)
			tr.append(&leaf)
		}
		got, _ := tr.root(uint64(len(data)))
		if want := refMTH(data); !bytes.Equal(got, want) {
			t.Fatalf("keep %d extra %d: root %x, want %x", keep, extra, got, want)
		}
	}
}

func TestTreeAppendAllocs(t *testing.T) {
	tr := newTree()
	var leaf [hashSize]byte
	// Grow the level slices first; after that an append allocates nothing.
	for range 1 << 12 {
		tr.append(&leaf)
	}
	tr.truncate(0)
	rec := []byte("record")
	allocs := testing.AllocsPerRun(1000, func() {
		tr.leafHash(&leaf, rec)
		tr.append(&leaf)
	})
	if allocs != 0 {
		t.Errorf("leafHash+append allocate %v times, want 0", allocs)
	}
}

func equalHashes(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func BenchmarkTreeAppend(b *testing.B) {
	tr := newTree()
	var leaf [hashSize]byte
	env := bytes.Repeat([]byte("e"), 1200)
	b.ReportAllocs()
	b.SetBytes(int64(len(env)))
	for b.Loop() {
		tr.leafHash(&leaf, env)
		tr.append(&leaf)
	}
}

func BenchmarkTreeInclusion(b *testing.B) {
	tr := newTree()
	var leaf [hashSize]byte
	const n = 1 << 20
	for i := range n {
		binary.BigEndian.PutUint64(leaf[:], uint64(i))
		tr.append(&leaf)
	}
	b.ReportAllocs()
	i := uint64(0)
	for b.Loop() {
		if _, err := tr.inclusion(i%n, n-3); err != nil && i%n < n-3 {
			b.Fatal(err)
		}
		i += 7919
	}
}
