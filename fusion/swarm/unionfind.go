package swarm

// UnionFind is a disjoint-set forest over the elements 0..n-1 with path
// compression and union by rank, so any sequence of m operations costs
// O(m α(n)), effectively linear.
type UnionFind struct {
	parent []int32
	rank   []uint8
	size   []int32
}

// NewUnionFind returns n singleton sets.
func NewUnionFind(n int) *UnionFind {
	u := &UnionFind{}
	u.Reset(n)
	return u
}

// Reset makes u hold n singleton sets, reusing its memory.
func (u *UnionFind) Reset(n int) {
	if cap(u.parent) < n {
		u.parent, u.rank, u.size = make([]int32, n), make([]uint8, n), make([]int32, n)
	}
	u.parent, u.rank, u.size = u.parent[:n], u.rank[:n], u.size[:n]
	for i := range u.parent {
		u.parent[i], u.rank[i], u.size[i] = int32(i), 0, 1
	}
}

// Find returns the representative of x's set, pointing every element on
// the way directly at it.
func (u *UnionFind) Find(x int32) int32 {
	root := x
	for u.parent[root] != root {
		root = u.parent[root]
	}
	for u.parent[x] != root {
		u.parent[x], x = root, u.parent[x]
	}
	return root
}

// Union merges the sets of a and b and reports whether they were distinct.
// The shallower tree goes under the deeper one.
func (u *UnionFind) Union(a, b int32) bool {
	ra, rb := u.Find(a), u.Find(b)
	if ra == rb {
		return false
	}
	if u.rank[ra] < u.rank[rb] {
		ra, rb = rb, ra
	}
	u.parent[rb] = ra
	u.size[ra] += u.size[rb]
	if u.rank[ra] == u.rank[rb] {
		u.rank[ra]++
	}
	return true
}

// Size returns the number of elements in x's set.
func (u *UnionFind) Size(x int32) int { return int(u.size[u.Find(x)]) }

// Len returns the number of elements.
func (u *UnionFind) Len() int { return len(u.parent) }
