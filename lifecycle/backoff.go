package lifecycle

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is exponential back-off with full jitter, for reconnecting
// clients: each Sleep waits a random time up to the current ceiling, which
// doubles from Min to Max. The zero value uses 250 ms and 30 s.
type Backoff struct {
	Min, Max time.Duration
	cur      time.Duration
}

// Next returns the next wait and raises the ceiling.
func (b *Backoff) Next() time.Duration {
	if b.Min <= 0 {
		b.Min = 250 * time.Millisecond
	}
	if b.Max < b.Min {
		b.Max = max(30*time.Second, b.Min)
	}
	if b.cur < b.Min {
		b.cur = b.Min
	}
	ceil := b.cur
	b.cur = min(2*b.cur, b.Max)
	// Half fixed, half random: never a busy loop, and clients that failed
	// together do not reconnect together.
	return ceil/2 + rand.N(ceil/2+1)
}

// Reset starts the ceiling again from Min (after a success).
func (b *Backoff) Reset() { b.cur = 0 }

// Sleep waits Next() or until ctx ends; it reports whether the wait ran out
// (false: ctx ended).
func (b *Backoff) Sleep(ctx context.Context) bool {
	t := time.NewTimer(b.Next())
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
