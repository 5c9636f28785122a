package fusion

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/internal/testcapture"
)

// burstCopies is the real capture as receivers receivers deliver it when
// all of them reconnect at once and send what they buffered in one burst:
// each its own free-running 12 MHz counter (a random start), its records
// in batches of 100–800 arriving over about half a second of wall clock,
// the receivers' batches interleaved at random. Each frame's time is what
// a real sensorclock.Model makes of its counter and its arrival, so the
// receivers' UTC times are held at their arrivals, as in any burst.
func burstCopies(t *testing.T, receivers int, rng *rand.Rand) []heardCopy {
	t.Helper()
	recs := distinctRecords(t)
	type feed struct {
		sensor string
		base   uint64
		next   int
		model  sensorclock.Model
	}
	feeds := make([]*feed, receivers)
	for k := range feeds {
		feeds[k] = &feed{sensor: "rx" + string(rune('0'+k)), base: uint64(rng.Int63n(1 << 44))}
	}
	var out []heardCopy
	arrive := testcapture.Then.UnixNano() + 70e9 // after the capture's end
	for live := receivers; live > 0; {
		f := feeds[rng.Intn(receivers)]
		if f.next == len(recs) {
			continue
		}
		arrive += int64(rng.Intn(20e6))
		end := min(f.next+100+rng.Intn(700), len(recs))
		for _, r := range recs[f.next:end] {
			at := f.model.Map(sensorclock.MHz12, r.TS+f.base, arrive)
			var m adsb.Message
			if len(r.Data) != 14 || adsb.Decode(r.Data, &m) != nil || !m.HasCPR || (m.DF != 17 && m.DF != 18) {
				continue
			}
			out = append(out, heardCopy{o: cprObservation(&m, f.sensor, at), arrive: arrive})
		}
		if f.next = end; end == len(recs) {
			live--
		}
	}
	return out
}

// TestRacingBurstsAreOneFixEach: three (and five) receivers that
// reconnect together each send the whole capture in one burst, their
// batches racing. Their UTC times say nothing of the order of their
// frames (each is held at its own arrivals), but their clocks are related
// by the transmissions they share (links.go): each aircraft's fixes are
// still those of one receiver, each transmission once, in time order,
// ending where the capture ends, and no track flagged. Without the links
// (the receivers' times compared by UTC) these runs gave 1.7 to 2.6 times
// the fixes, and all 11 aircraft were flagged in every run.
func TestRacingBurstsAreOneFixEach(t *testing.T) {
	one, _ := fixesOf(t, copiesOf(captureObservations(t, "rx0", 1, 0), 20e6, nil))
	for _, n := range []int{3, 5} {
		for seed := int64(1); seed <= 5; seed++ {
			many, s := fixesOf(t, burstCopies(t, n, rand.New(rand.NewSource(seed))))
			run := fmt.Sprintf("%d receivers, seed %d", n, seed)
			checkOneReceiversFixes(t, run, one, many, s)
			if p := s.RelatedClockPairs(); p < n-1 || p > n*(n-1)/2 {
				t.Errorf("%s: %d clock pairs related, want %d to %d (every receiver related to the others)", run, p, n-1, n*(n-1)/2)
			}
		}
	}
}

// checkOneReceiversFixes checks that got holds, for every aircraft, about
// the fixes of one receiver hearing everything (want), in time order,
// ending at the same position, no track of s flagged.
func checkOneReceiversFixes(t *testing.T, run string, want, got map[string][]Fix, s *Store) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d aircraft with fixes, want %d", run, len(got), len(want))
	}
	total, wantTotal := 0, 0
	for id, w := range want {
		g := got[id]
		total, wantTotal = total+len(g), wantTotal+len(w)
		if len(g) > len(w) || len(g) < len(w)*9/10 {
			t.Errorf("%s: %s: %d fixes, want about the %d of one receiver", run, id, len(g), len(w))
		}
		for i := 1; i < len(g); i++ {
			// (A burst's times are held at its arrivals: several fixes
			// can share one.)
			if g[i].T < g[i-1].T {
				t.Errorf("%s: %s: fix %d at %d before the one before it (%d): the track stepped back", run, id, i, g[i].T, g[i-1].T)
				break
			}
		}
		last, wantLast := g[len(g)-1], w[len(w)-1]
		if math.Abs(last.Lat-wantLast.Lat) > 1e-6 || math.Abs(last.Lon-wantLast.Lon) > 1e-6 {
			t.Errorf("%s: %s ends at %.6f,%.6f, want the capture's last position %.6f,%.6f", run, id, last.Lat, last.Lon, wantLast.Lat, wantLast.Lon)
		}
		if tr, _ := s.Get(id); tr.RejectedPositions != 0 {
			t.Errorf("%s: %s: %d positions rejected as jumps: %v", run, id, tr.RejectedPositions, tr.Warnings)
		}
	}
	t.Logf("%s: %d fixes (one receiver: %d), skipped %v", run, total, wantTotal, s.Skipped())
}
