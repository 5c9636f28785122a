package history

import (
	"testing"

	"github.com/cuasd/cuasd/output"
)

// TestFixQueueKeepsOrderBoundAndBlocks: the fed-fix queue gives the
// writer every fix it took, in order, refuses what passes its bound, and
// fills its blocks again once the writer gives them back, allocating
// nothing (a burst's fixes never make the queue grow anew).
func TestFixQueueKeepsOrderBoundAndBlocks(t *testing.T) {
	var q fixQueue
	const max = 2*fixBlock + 404
	taken := 0
	for i := range max + 500 {
		if q.put(&output.Fix{UnixNano: int64(i)}, max) {
			taken++
		}
	}
	if taken != max {
		t.Fatalf("queue took %d fixes, want its bound %d", taken, max)
	}
	blocks := q.take()
	next := int64(0)
	for _, b := range blocks {
		if len(b) > fixBlock {
			t.Fatalf("a block of %d fixes, more than %d", len(b), fixBlock)
		}
		for _, f := range b {
			if f.UnixNano != next {
				t.Fatalf("fix %d where %d was next", f.UnixNano, next)
			}
			next++
		}
	}
	if next != max {
		t.Fatalf("took back %d fixes, want %d", next, max)
	}
	if again := q.take(); len(again) != 0 {
		t.Fatalf("a second take gave %d blocks of an empty queue", len(again))
	}
	q.giveBack(blocks)
	f := output.Fix{TrackID: "adsb:4CA1FA"}
	if a := testing.AllocsPerRun(3, func() {
		for range max {
			q.put(&f, max)
		}
		q.giveBack(q.take())
	}); a != 0 {
		t.Errorf("refilling given-back blocks allocated %.0f times", a)
	}
}
