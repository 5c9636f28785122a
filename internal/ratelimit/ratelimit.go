// Package ratelimit provides the per-sensor token buckets that bound what
// one sensor may send (issue 32): a frame rate and a byte rate, each
// holding one second of its rate.
//
// Time is passed in rather than read: the single-frame intake spends
// tokens at arrival time, while the decoders spend them at the stream's
// storage time, so a replay of CUAS_RAW refuses exactly the frames a live
// run refused.
package ratelimit

import (
	"strconv"
	"time"
)

// Limits are a sensor's sustained rates; 0 is no limit.
type Limits struct {
	// FramesPerSecond is the sustained frame rate of one sensor.
	FramesPerSecond float64
	// BytesPerSecond is the sustained frame bytes of one sensor.
	BytesPerSecond float64
}

// Unlimited reports whether l limits nothing.
func (l Limits) Unlimited() bool { return l.FramesPerSecond <= 0 && l.BytesPerSecond <= 0 }

// Bucket is one sensor's tokens. Its zero value is empty; Set hands out
// full ones.
type Bucket struct {
	frames, bytes float64
	last          int64 // unix ns of the last refill
	// Limited is true from the first refused frame until the next frame
	// is taken, so a caller can report a change of state once.
	Limited bool
}

// Take spends one frame of n bytes at unix time now (ns) under l; it
// returns why it cannot ("" when it could). Time going backwards (an
// older message) refills nothing.
func (b *Bucket) Take(l Limits, n int, now int64) string {
	if dt := float64(now-b.last) / 1e9; dt > 0 {
		b.frames = min(l.FramesPerSecond, b.frames+dt*l.FramesPerSecond)
		b.bytes = min(l.BytesPerSecond, b.bytes+dt*l.BytesPerSecond)
		b.last = now
	}
	switch {
	case l.FramesPerSecond > 0 && b.frames < 1:
		b.Limited = true
		return "is over " + strconv.FormatFloat(l.FramesPerSecond, 'f', -1, 64) + " frames a second"
	case l.BytesPerSecond > 0 && b.bytes < float64(n):
		b.Limited = true
		return "is over " + strconv.FormatFloat(l.BytesPerSecond, 'f', -1, 64) + " bytes a second"
	}
	b.frames--
	b.bytes -= float64(n)
	b.Limited = false
	return ""
}

// Set is the buckets of the sensors heard recently. It is not safe for
// concurrent use: the intake locks around it, a decoder owns its own.
type Set struct {
	lim   Limits
	m     map[string]*Bucket
	swept int64
}

// NewSet returns an empty set under l.
func NewSet(l Limits) *Set { return &Set{lim: l, m: map[string]*Bucket{}} }

// Limits returns the set's limits.
func (s *Set) Limits() Limits { return s.lim }

// Bucket returns key's bucket at unix time now (ns), full when the key
// is new. It forgets, at most once a second, the buckets that have had a
// second to refill: they are as good as new, and the set stays as small
// as the set of sensors sending now, however many names a client invents.
func (s *Set) Bucket(key string, now int64) *Bucket {
	if now-s.swept >= int64(time.Second) || now < s.swept {
		s.swept = now
		for k, b := range s.m {
			if now-b.last >= int64(time.Second) {
				delete(s.m, k)
			}
		}
	}
	b := s.m[key]
	if b == nil {
		b = &Bucket{frames: s.lim.FramesPerSecond, bytes: s.lim.BytesPerSecond, last: now}
		s.m[key] = b
	}
	return b
}

// Len returns how many sensors the set remembers.
func (s *Set) Len() int { return len(s.m) }
