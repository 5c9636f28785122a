package output

import "testing"

func TestQueueDropsWhenFull(t *testing.T) {
	q := NewQueue[int](2)
	for i := 0; i < 5; i++ {
		q.Put(i)
	}
	if q.Len() != 2 || q.Dropped() != 3 {
		t.Fatalf("len %d dropped %d, want 2 and 3", q.Len(), q.Dropped())
	}
	if a, b := <-q.C(), <-q.C(); a != 0 || b != 1 {
		t.Fatalf("got %d %d, want the oldest two (0 1)", a, b)
	}
}
