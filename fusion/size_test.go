package fusion

import (
	"strconv"
	"testing"
	"unsafe"
)

// TestTrackFitsItsSizeClass: the 2 KiB-per-track budget holds only while a
// track fits Go's 1,536-byte allocation size class; 8 bytes more cost a
// 1,792-byte block (BenchmarkStoreApply's heap-B/track measures the whole).
func TestTrackFitsItsSizeClass(t *testing.T) {
	// An object with pointers larger than 512 bytes carries an 8-byte
	// malloc header (Go 1.22 and later), so a 1,536-byte track takes the
	// 1,792-byte class: 1,528 bytes is the most that fits.
	if n := unsafe.Sizeof(track{}); n > 1536-8 {
		t.Fatalf("track is %d bytes: with the 8-byte malloc header, over the 1,536-byte size class (group the small fields, or shrink the history)", n)
	}
}

// BenchmarkJumpWarning measures the warning a rejected position jump adds,
// as it was (the distance formatted into the text) and as it is (one fixed
// text): a spoofer can drive this path at the frame rate.
func BenchmarkJumpWarning(b *testing.B) {
	b.Run("formatted", func(b *testing.B) {
		var t track
		d := 12345.6
		for b.Loop() {
			t.addWarning("implausible position jump rejected (" + strconv.FormatFloat(d/1000, 'f', 1, 64) + " km)")
			d += 100
		}
	})
	b.Run("fixed", func(b *testing.B) {
		var t track
		for b.Loop() {
			t.addWarning("implausible position jump rejected (faster than the plausible maximum speed)")
		}
	})
}
