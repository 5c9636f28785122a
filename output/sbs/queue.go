package sbs

import (
	"sync"

	"github.com/cuasd/cuasd/decode/worker"
)

// decodedQueue holds the Mode S messages fusion's feed hands per-message
// SBS until its writer takes them, a few hundred raw messages at a time
// (issue 30). Writing each raw message's lines on the feed's goroutine as
// it is handed cost ~0.25 µs a message in the pipeline, three to four
// times the micro-benchmark's figure: between two raw messages fusion
// runs through 2,000 tracks' state, so the aircraft table and the line
// buffer were out of the cache for every message. Copied here (a
// sequential 248 bytes a message) and written in bulk, they stay in it
// for thousands of messages, and fusion's goroutine does not carry
// SBS's work or its cache misses. The queue is bounded: when the writer
// falls behind by maxQueued messages, what the feed hands is dropped and
// counted (Out.Dropped), never waited for.
type decodedQueue struct {
	max   int
	ready chan struct{} // a signal: the queue went from empty to not

	mu      sync.Mutex
	batches []queuedBatch
	frames  []worker.ModeSFrame
}

// queuedBatch is what the writer needs of one raw message's batch: its
// frames are the next n of the queue's.
type queuedBatch struct {
	stored int64  // Meta.StoredUnixNano
	seq    uint64 // ModeSBatch.Seq
	now    int64  // when it was handed (Unix ns): its lines' logged time
	n      int
}

// maxQueued is how many messages the queue holds: about 1.3 s of the
// pipeline benchmark's 52,000 a second (16 MB), 40 s of a busy
// receiver's 1,500.
const maxQueued = 1 << 16

func newDecodedQueue(max int) *decodedQueue {
	return &decodedQueue{max: max, ready: make(chan struct{}, 1)}
}

// put copies bt, handed at now (Unix ns), into the queue, or reports
// false when it would hold more than max messages.
func (q *decodedQueue) put(bt *worker.ModeSBatch, now int64) bool {
	q.mu.Lock()
	was := len(q.frames)
	if was > 0 && was+len(bt.Frames) > q.max {
		q.mu.Unlock()
		return false
	}
	q.batches = append(q.batches, queuedBatch{stored: bt.Meta.StoredUnixNano, seq: bt.Seq, now: now, n: len(bt.Frames)})
	q.frames = append(q.frames, bt.Frames...)
	q.mu.Unlock()
	if was == 0 {
		select {
		case q.ready <- struct{}{}:
		default:
		}
	}
	return true
}

// take moves what the queue holds into w and gives the queue w's
// emptied buffers to fill next, so that a steady stream allocates
// nothing.
func (q *decodedQueue) take(w *decodedWork) {
	q.mu.Lock()
	w.batches, q.batches = q.batches, w.batches[:0]
	w.frames, q.frames = q.frames, w.frames[:0]
	q.mu.Unlock()
}

// decodedWork is what the writer took from the queue.
type decodedWork struct {
	batches []queuedBatch
	frames  []worker.ModeSFrame
	// meta and bt are the batch being written, reused.
	meta worker.Meta
	bt   worker.ModeSBatch
}

// each calls fn with each batch taken, in the order they were handed.
func (w *decodedWork) each(fn func(bt *worker.ModeSBatch, now int64)) {
	off := 0
	for _, b := range w.batches {
		w.meta = worker.Meta{StoredUnixNano: b.stored}
		w.bt = worker.ModeSBatch{Meta: &w.meta, Seq: b.seq, Frames: w.frames[off : off+b.n]}
		off += b.n
		fn(&w.bt, b.now)
	}
	clear(w.frames) // nothing of a written message is read again
}
