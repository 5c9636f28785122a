package falsealarm

import (
	"fmt"
	"strings"
	"time"

	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/sim"
)

// Summary is one scenario's figures, as BENCHMARKS.md publishes them.
type Summary struct {
	Scenario string
	Tracks   int
	// TrackHours is the time tracks spent on the board.
	TrackHours float64
	// Changes and RawChanges are held and raw decision changes;
	// MaxPerMinute the most held changes of one track in any 60 s.
	Changes, RawChanges, MaxPerMinute int
	// FalsePages are pages on actors that should never page (PageNever);
	// AircraftPaged those on actors that are aircraft.
	FalsePages, AircraftPaged int
	// Breaches by drones and unknowns, Missed of them, and the longest
	// time from a breach to its page.
	Breaches, Missed  int
	WorstBreachToPage time.Duration
	// WorstBreachToRecord is the longest time from a breach (any class)
	// to the receipt that records it.
	WorstBreachToRecord time.Duration
	// Misclassified counts tracks whose class is not the expected one.
	Misclassified int
	// aircraftBreaches counts entries of aircraft into the zone (an
	// airport's traffic, not paged).
	aircraftBreaches int
	Hours            float64
}

// Summarize adds up a scenario's actors.
func (r *Result) Summarize() Summary {
	s := Summary{Scenario: r.Scenario, Hours: r.Duration.Hours()}
	for _, a := range r.Actors {
		if a.Tracked == 0 {
			continue
		}
		s.Tracks++
		s.TrackHours += a.Tracked.Hours()
		s.Changes += a.Changes
		s.RawChanges += a.RawChanges
		s.MaxPerMinute = max(s.MaxPerMinute, a.MaxChangesPerMinute)
		if a.Expect.Page == sim.PageNever {
			s.FalsePages += a.Pages
		}
		if a.Expect.Class == gate.TrackAircraft {
			s.AircraftPaged += a.Pages
		}
		if a.Class != string(a.Expect.Class) {
			s.Misclassified++
		}
		for _, d := range a.BreachToRecord {
			s.WorstBreachToRecord = max(s.WorstBreachToRecord, d)
		}
		if a.Expect.Class == gate.TrackAircraft {
			s.aircraftBreaches += a.Breaches
			continue // an aircraft crossing an airport's zone is not a breach to page
		}
		s.Breaches += a.Breaches
		s.Missed += a.Missed
		for _, d := range a.BreachToPage {
			s.WorstBreachToPage = max(s.WorstBreachToPage, d)
		}
	}
	return s
}

// AircraftBreaches counts aircraft entering the zone: an airport's
// approaches and departures, never paged.
func (s *Summary) AircraftBreaches() int { return s.aircraftBreaches }

// Table is the BENCHMARKS.md table of summaries.
func Table(ss []Summary) string {
	var b strings.Builder
	b.WriteString("| scenario | tracks | track-hours | decision changes / track-hour (without hysteresis) | most changes of a track in 60 s | false pages / h | aircraft paged | breaches by drones/unknowns | missed | worst breach → page | worst breach → receipt |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range ss {
		perTH, rawTH := 0.0, 0.0
		if s.TrackHours > 0 {
			perTH, rawTH = float64(s.Changes)/s.TrackHours, float64(s.RawChanges)/s.TrackHours
		}
		fmt.Fprintf(&b, "| %s | %d | %.2f | %.1f (%.1f) | %d | %.1f | %d | %d | %d | %.1f s | %.1f s |\n", s.Scenario, s.Tracks, s.TrackHours,
			perTH, rawTH, s.MaxPerMinute, float64(s.FalsePages)/s.Hours, s.AircraftPaged, s.Breaches, s.Missed, s.WorstBreachToPage.Seconds(), s.WorstBreachToRecord.Seconds())
	}
	return b.String()
}
