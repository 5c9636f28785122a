//go:build unix

package cputime

import (
	"testing"
	"time"
)

// TestProcessGrows: spinning on the CPU for 20 ms of wall time makes the
// process's CPU time grow.
func TestProcessGrows(t *testing.T) {
	before := Process()
	x := 0
	for start := time.Now(); time.Since(start) < 20*time.Millisecond; {
		x++
	}
	if after := Process(); after <= before {
		t.Fatalf("CPU time %v after %d spins, %v before", after, x, before)
	}
}
