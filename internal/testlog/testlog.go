// Package testlog holds what tests use to read what cuasd logs.
package testlog

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer a logger may write while a test reads it:
// the components under test log from their own goroutines.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
