package fusion

import (
	"testing"
	"unsafe"
)

// TestTrackFitsItsSizeClass: the 2 KiB-per-track budget holds only while a
// track fits Go's 1,536-byte allocation size class; 8 bytes more cost a
// 1,792-byte block (BenchmarkStoreApply's heap-B/track measures the whole).
func TestTrackFitsItsSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(track{}); n > 1536 {
		t.Fatalf("track is %d bytes: over the 1,536-byte size class (group the small fields, or shrink the history)", n)
	}
}
