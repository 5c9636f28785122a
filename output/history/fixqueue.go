package history

import (
	"sync"

	"github.com/cuasd/cuasd/output"
)

// fixBlock is how many fed fixes a block of the fix queue holds: the
// writer commits a block at a time (2,048 points, its commit size).
const fixBlock = 2048

// fixQueue holds fed fixes for the writer (issue 30) in blocks of
// fixBlock, kept for reuse: a burst (a reconnect, replay --max) queues
// ~100,000 fixes between two flushes, which one growing slice copied at
// every doubling and the writer then turned into one batch as large,
// both on fresh memory (bench-compare's profile: 2.7 % of the process).
// put runs under fusion's lock; take and giveBack on the writer's
// goroutine.
type fixQueue struct {
	mu     sync.Mutex
	blocks [][]output.Fix // queued, the last one filling
	n      int            // fixes in blocks
	spare  [][]output.Fix // a blocks slice to swap in
	free   [][]output.Fix // empty blocks
}

// put queues a copy of f, unless max fixes are queued already (false).
func (q *fixQueue) put(f *output.Fix, max int) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n >= max {
		return false
	}
	k := len(q.blocks)
	if k == 0 || len(q.blocks[k-1]) == fixBlock {
		var b []output.Fix
		if m := len(q.free); m > 0 {
			b, q.free = q.free[m-1], q.free[:m-1]
		} else {
			b = make([]output.Fix, 0, fixBlock)
		}
		q.blocks = append(q.blocks, b)
		k++
	}
	q.blocks[k-1] = append(q.blocks[k-1], *f)
	q.n++
	return true
}

// take returns the queued blocks and empties the queue; the caller gives
// them back when it has read them.
func (q *fixQueue) take() [][]output.Fix {
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.blocks
	q.blocks, q.spare, q.n = q.spare[:0], nil, 0
	return b
}

// giveBack returns blocks take returned, read, for reuse.
func (q *fixQueue) giveBack(blocks [][]output.Fix) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, b := range blocks {
		clear(b) // the fixes' strings are fusion's to let go
		q.free = append(q.free, b[:0])
		blocks[i] = nil
	}
	if q.spare == nil {
		q.spare = blocks[:0]
	}
}
