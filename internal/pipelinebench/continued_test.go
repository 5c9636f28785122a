package pipelinebench

import (
	"bytes"
	"os"
	"testing"

	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/internal/testcapture"
	"github.com/cuasd/cuasd/internal/testshared"
)

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
	data, _, err := testcapture.Continued(capture, n, captureGap)
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
