package testcapture_test

import (
	"bytes"
	"testing"

	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/internal/testcapture"
)

// TestContinuedCaptureAcrossTheWrap: a capture crossing the 48-bit
// counter's wrap, a little out of order, with an untimed record and a
// timestamp that gains a 0x1a byte when shifted, repeated three times.
// Every repetition follows the last by the gap, the wrap included.
func TestContinuedCaptureAcrossTheWrap(t *testing.T) {
	const wrap = uint64(1) << 48
	frame := [14]byte{0x8d, 0x1a, 0x1a} // an escaped byte in the frame too
	var capture []byte
	for _, ts := range []uint64{wrap - 12_000_000, wrap - 6_000_000, wrap - 7_000_000, 0, 6_000_000} {
		capture = adsb.AppendBeast(capture, &adsb.BeastFrame{Type: adsb.BeastModeSLong, Timestamp: ts, Data: frame, Len: 14})
	}
	// Span 18,000,000 ticks (wrap-12e6 to 6e6 past the wrap); the gap puts
	// the second repetition's first record at 6e6 + gap = 0x7a1a00, whose
	// 0x1a byte must be escaped.
	gap := uint64(0x7a1a00) - 6_000_000
	data, modeS, err := testcapture.Continued(capture, 3, gap)
	if err != nil {
		t.Fatal(err)
	}
	if modeS != 15 {
		t.Errorf("%d Mode S records counted, want 15", modeS)
	}
	if !bytes.Equal(data[:len(capture)], capture) {
		t.Error("the first repetition is not the capture's own bytes")
	}
	step := 18_000_000 + gap
	want := []uint64{}
	for r := range uint64(3) {
		for _, ts := range []uint64{wrap - 12_000_000, wrap - 6_000_000, wrap - 7_000_000, 0, 6_000_000} {
			if ts != 0 {
				ts = (ts + r*step) % wrap
			}
			want = append(want, ts)
		}
	}
	var got []uint64
	for f, err := range adsb.BeastFrames(data) {
		if err != nil {
			t.Fatalf("record %d: %v", len(got), err)
		}
		if f.Data != frame {
			t.Fatalf("record %d: frame % x changed", len(got), f.Data)
		}
		got = append(got, f.Timestamp)
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d: timestamp %#x, want %#x", i, got[i], want[i])
		}
	}
	if got[5] != 0x7a1a00 {
		t.Errorf("the second repetition starts at %#x, want 0x7a1a00 (the gap after 6,000,000)", got[5])
	}
}
