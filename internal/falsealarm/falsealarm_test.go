package falsealarm

import (
	"os"
	"testing"
	"time"

	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/sim"
)

// seed is the false-alarm set's seed in CI and in BENCHMARKS.md.
const seed = 33

// TestFalseAlarmTargets runs the false-alarm scenarios with the defaults
// and the README's rule, and holds issue 33's targets on counts in
// scenario time: no breach missed, every breach by a drone or an unknown
// paged and recorded within 2 s, at most one decision change per track in
// any minute, no aircraft paged, no page on what should never page, and
// every track classed as an operator would. `go test -v` prints the table
// BENCHMARKS.md publishes.
func TestFalseAlarmTargets(t *testing.T) {
	ss, rs, err := RunSet(seed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + Table(ss))
	for i, s := range ss {
		if s.Missed != 0 || s.WorstBreachToPage > 2*time.Second || s.WorstBreachToRecord > 2*time.Second {
			t.Errorf("%s: %d of %d breaches missed, worst breach → page %v, → receipt %v (want 0, ≤ 2 s)",
				s.Scenario, s.Missed, s.Breaches, s.WorstBreachToPage, s.WorstBreachToRecord)
		}
		if s.MaxPerMinute > 1 || s.AircraftPaged != 0 || s.FalsePages != 0 || s.Misclassified != 0 {
			t.Errorf("%s: %d changes of one track in a minute, %d aircraft paged, %d false pages, %d tracks misclassified (want ≤ 1, 0, 0, 0)",
				s.Scenario, s.MaxPerMinute, s.AircraftPaged, s.FalsePages, s.Misclassified)
		}
		for _, a := range rs[i].Actors {
			if a.Tracked == 0 {
				t.Errorf("%s: %s (%s) never on the board", s.Scenario, a.Name, a.TrackID)
			}
			if a.Expect.Page == sim.PageMust && a.Pages == 0 {
				t.Errorf("%s: %s must page and did not", s.Scenario, a.Name)
			}
			if a.Class != string(a.Expect.Class) {
				t.Errorf("%s: %s classed %q, an operator would say %q", s.Scenario, a.Name, a.Class, a.Expect.Class)
			}
		}
		if s.Tracks == 0 || (s.Scenario != "hobby-drone-outside" && s.Breaches+s.AircraftBreaches() == 0) {
			t.Errorf("%s: %d tracks, no breach at all: the scenario does not exercise the zone", s.Scenario, s.Tracks)
		}
	}
}

// TestFalseAlarmWithoutTheFix: the same scenarios through the gate without
// hysteresis and the README's rule without classes show what issue 33
// reported — tracks that change decision several times a minute and
// aircraft paged — so the targets above are the fix's doing, and the
// measurements can fail.
func TestFalseAlarmWithoutTheFix(t *testing.T) {
	var ss []Summary
	for _, sc := range sim.FalseAlarmSet(seed) {
		// -short: the approach (aircraft paged) and the drones through the
		// zone (flapping) show both, in a fifth of the scenario time.
		if testing.Short() && sc.Name != "airliners-approach" && sc.Name != "drones-breach" {
			continue
		}
		r, err := Run(sc, Options{Policy: NoHysteresis(), Rules: PreIssueRule})
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, r.Summarize())
	}
	t.Log("\n" + Table(ss))
	flaps, aircraft := 0, 0
	for _, s := range ss {
		if s.MaxPerMinute > 1 {
			flaps++
		}
		aircraft += s.AircraftPaged
	}
	if flaps == 0 || aircraft == 0 {
		t.Fatalf("without hysteresis and classes: %d scenarios with a track flapping, %d aircraft paged; the scenarios do not show the problem", flaps, aircraft)
	}
}

// TestHysteresisGrid measures the false-alarm set over margins and dwell
// times, the measurement the defaults were chosen from (docs/design/gate.md,
// "Hysteresis"). It takes a minute: run it with CUAS_FALSEALARM_GRID=1.
func TestHysteresisGrid(t *testing.T) {
	if os.Getenv("CUAS_FALSEALARM_GRID") == "" {
		t.Skip("set CUAS_FALSEALARM_GRID=1 to measure the grid")
	}
	for _, m := range []float64{1e-9, 0.02, 0.05, 0.10} {
		for _, hold := range []float64{1e-9, 5, 15, 30, 60} {
			p := gate.DefaultPolicy()
			p.AlertFallMargin, p.InterceptFallMargin, p.MinHoldS = m, m, hold
			ss, _, err := RunSet(seed, Options{Policy: p})
			if err != nil {
				t.Fatal(err)
			}
			var th float64
			changes, worst, missed, pages, b2p := 0, 0, 0, 0, time.Duration(0)
			for _, s := range ss {
				th += s.TrackHours
				changes += s.Changes
				worst = max(worst, s.MaxPerMinute)
				missed += s.Missed
				pages += s.FalsePages
				b2p = max(b2p, s.WorstBreachToPage)
			}
			t.Logf("margin %.2f hold %3.0f s: %5.1f changes/track-hour, worst %d in a minute, %d missed, %d false pages, worst breach → page %v",
				m, hold, float64(changes)/th, worst, missed, pages, b2p)
		}
	}
}
