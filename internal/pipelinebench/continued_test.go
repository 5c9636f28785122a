package pipelinebench

import (
	"bytes"
	"os"
	"testing"

	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/internal/testshared"
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
	data, modeS, err := continuedCapture(capture, 3, gap)
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

// TestContinuedCaptureIsOneFeed: the real capture continued five times
// is, to cuasd's receiver clock model, one feed delivered in a burst: no
// clock restart, no frame judged re-sent, and no exact duplicates beyond
// the capture's own (it holds each record twice). The same capture merely
// repeated is the same frames sent again: it shows frames judged re-sent
// (or clock restarts) and more duplicates.
func TestContinuedCaptureIsOneFeed(t *testing.T) {
	capture, err := os.ReadFile(testshared.Path(t, "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	data, _, err := continuedCapture(capture, n, captureGap)
	if err != nil {
		t.Fatal(err)
	}
	once := burstModel(t, capture)
	cont := burstModel(t, data)
	rep := burstModel(t, bytes.Repeat(capture, n))
	t.Logf("once: %d duplicates, %d restarts, %d re-sent; continued ×%d: %d, %d, %d; repeated ×%d: %d, %d, %d",
		once.Duplicates, once.Resets, once.Resent, n, cont.Duplicates, cont.Resets, cont.Resent, n, rep.Duplicates, rep.Resets, rep.Resent)
	if once.Resets != 0 || cont.Resets != 0 || once.Resent != 0 || cont.Resent != 0 {
		t.Errorf("receiver clock restarts: %d in the capture, %d in the continued feed; frames judged re-sent: %d and %d; want none",
			once.Resets, cont.Resets, once.Resent, cont.Resent)
	}
	if cont.Duplicates > n*once.Duplicates {
		t.Errorf("%d exact duplicates in the continued feed, more than %d× the capture's own %d", cont.Duplicates, n, once.Duplicates)
	}
	if rep.Resets+rep.Resent == 0 || rep.Duplicates <= n*once.Duplicates {
		t.Errorf("the merely repeated capture shows %d restarts, %d frames judged re-sent and %d duplicates: this test cannot tell",
			rep.Resets, rep.Resent, rep.Duplicates)
	}
}

// burstModel runs the Mode S records of a Beast stream through one
// receiver clock model as decode/worker does (duplicate check, then the
// 12 MHz mapping), every record arriving in the same instant.
func burstModel(t *testing.T, b []byte) *sensorclock.Model {
	t.Helper()
	m := &sensorclock.Model{}
	const arrival = int64(1_800_000_000_000_000_000)
	for f, err := range adsb.BeastFrames(b) {
		if err != nil {
			t.Fatal(err)
		}
		if f.Type == adsb.BeastModeAC || m.Duplicate(f.Timestamp, f.Bytes()) {
			continue
		}
		m.Map(sensorclock.MHz12, f.Timestamp, arrival)
	}
	return m
}
