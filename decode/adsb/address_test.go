package adsb

import (
	"fmt"
	"testing"
)

// TestAppendAddress: six upper-case hex digits, zero-padded, appended and
// as a string.
func TestAppendAddress(t *testing.T) {
	for _, a := range []uint32{0, 0xa, 0x4ca1fa, 0xffffff, 0x00abcd} {
		want := fmt.Sprintf("%06X", a)
		if got := string(AppendAddress([]byte("x"), a)); got != "x"+want {
			t.Fatalf("%#x: %s, want x%s", a, got, want)
		}
		if got := AddressString(a); got != want {
			t.Fatalf("%#x: %s, want %s", a, got, want)
		}
	}
}
