package fusion

import (
	"testing"

	"github.com/cuasd/cuasd/decode/sensorclock"
)

func clockAt(clock uint32, ns, utc int64) sensorclock.Time {
	return sensorclock.Time{UnixNano: utc, SensorNs: ns, Clock: clock, Source: sensorclock.FromReceiver}
}

// TestClockLinksRelateClocks: a shared transmission relates two clocks
// both ways; a third clock related to one of them is related to the other
// through it; a link not confirmed for linkMaxAgeNS, and clocks never
// related, fall back to UTC.
func TestClockLinksRelateClocks(t *testing.T) {
	const utc = int64(1_700_000_000e9)
	var ls clockLinks
	ls.learn("a", clockAt(7, 1_000e9, utc), clockAt(3, 50e9, utc+2e6)) // clock 3 reads 950 s less than 7
	ls.learn("a", clockAt(3, 60e9, utc), clockAt(9, 5e9, utc))         // clock 9 reads 55 s less than 3
	for _, c := range []struct {
		name    string
		from    sensorclock.Time
		to      uint32
		want    int64
		related bool
	}{
		{"the same clock", clockAt(7, 42, utc), 7, 42, true},
		{"a to b", clockAt(7, 1_010e9, utc), 3, 60e9, true},
		{"b to a", clockAt(3, 60e9, utc), 7, 1_010e9, true},
		{"through a third clock", clockAt(9, 5e9, utc), 7, 1_010e9, true},
		{"through a third clock, back", clockAt(7, 1_010e9, utc), 9, 5e9, true},
		{"a clock never related", clockAt(7, 1, utc), 11, 0, false},
		{"no clock", clockAt(0, 1, utc), 7, 0, false},
		{"a stale link", clockAt(7, 1_010e9, utc+linkMaxAgeNS+1e9), 3, 0, false},
	} {
		got, ok := ls.on(c.from, c.to)
		if ok != c.related || ok && got != c.want {
			t.Errorf("%s: on = %d, %v; want %d, %v", c.name, got, ok, c.want, c.related)
		}
	}
	// since: by the related clock; by UTC when unrelated.
	if got := ls.since(clockAt(7, 1_000e9, utc), clockAt(3, 52e9, utc-5e9)); got != 2e9 {
		t.Errorf("since across related clocks = %d, want 2 s (the clocks', not UTC's -5 s)", got)
	}
	if got := ls.since(clockAt(7, 1_000e9, utc), clockAt(11, 52e9, utc-5e9)); got != -5e9 {
		t.Errorf("since across unrelated clocks = %d, want UTC's -5 s", got)
	}
}

// TestRepeatedReportRelatesNothing: an aircraft that has not moved
// repeats a report; another receiver's copy of it may be of any of the
// repeats, so it relates no clocks. A report heard once does.
func TestRepeatedReportRelatesNothing(t *testing.T) {
	const utc = int64(1_700_000_000e9)
	var ls clockLinks
	abc, def := &cprState{}, &cprState{} // two aircraft
	f := cprFrame{lat: 1234, lon: 5678}
	ls.heardOnce(abc, "adsb:ABC123", f, 1, clockAt(1, 10e9, utc))
	ls.heardOnce(abc, "adsb:ABC123", f, 1, clockAt(1, 12e9, utc+2e9)) // the same report, 2 s later: a repeat
	ls.heardOnce(abc, "adsb:ABC123", f, 1, clockAt(2, 500e9, utc+2e9))
	if _, ok := ls.on(clockAt(2, 500e9, utc), 1); ok {
		t.Fatal("a copy of a repeated report related the clocks")
	}
	g := cprFrame{lat: 4321, lon: 8765}
	ls.heardOnce(abc, "adsb:ABC123", g, 1, clockAt(1, 20e9, utc+10e9))
	ls.heardOnce(def, "adsb:DEF456", g, 1, clockAt(2, 510e9, utc+10e9)) // another aircraft's report
	if _, ok := ls.on(clockAt(2, 510e9, utc+10e9), 1); ok {
		t.Fatal("another aircraft's report related the clocks")
	}
	ls.heardOnce(abc, "adsb:ABC123", g, 1, clockAt(2, 510e9, utc+10e9))
	if got, ok := ls.on(clockAt(2, 510e9, utc+10e9), 1); !ok || got != 20e9 {
		t.Fatalf("a report heard once by each: on = %d, %v; want 20 s, true", got, ok)
	}
}

// TestOneWrongCopyDoesNotMoveALink: a copy whose offset disagrees with its
// pair's fresh one (of another transmission of a report an aircraft
// repeated, or a replay of one aircraft's frames near one receiver) is not
// taken, nor are more such copies of that aircraft; two of two aircraft
// that agree with each other are (a pair first related wrongly is
// mended).
func TestOneWrongCopyDoesNotMoveALink(t *testing.T) {
	const utc = int64(1_700_000_000e9)
	var ls clockLinks
	ls.learn("a", clockAt(1, 100e9, utc), clockAt(2, 300e9, utc)) // clock 2 reads 200 s more
	ls.learn("b", clockAt(1, 101e9, utc+1e9), clockAt(2, 301.5e9, utc+1e9))
	if got, _ := ls.on(clockAt(1, 110e9, utc+2e9), 2); got != 310e9 {
		t.Fatalf("after one copy 0.5 s off: %d, want the link unmoved (310 s)", got)
	}
	ls.learn("c", clockAt(1, 102e9, utc+2e9), clockAt(2, 302.001e9, utc+2e9)) // 1 ms of path: confirms
	if got, _ := ls.on(clockAt(1, 110e9, utc+2e9), 2); got != 310.001e9 {
		t.Fatalf("a copy within the slack: %d, want it taken (310.001 s)", got)
	}
	for i := range 5 { // one aircraft's frames replayed 5 s late near receiver 2
		ls.learn("m", clockAt(1, 103e9+int64(i)*1e9, utc+3e9), clockAt(2, 308.001e9+int64(i)*1e9, utc+3e9))
	}
	if got, _ := ls.on(clockAt(1, 110e9, utc+4e9), 2); got != 310.001e9 {
		t.Fatalf("after five copies of one aircraft 5 s off: %d, want the link unmoved (310.001 s)", got)
	}
	ls.learn("d", clockAt(1, 103e9, utc+3e9), clockAt(2, 404e9, utc+3e9))
	ls.learn("e", clockAt(1, 104e9, utc+4e9), clockAt(2, 405.01e9, utc+4e9))
	if got, _ := ls.on(clockAt(1, 110e9, utc+4e9), 2); got != 411.01e9 {
		t.Fatalf("two aircraft's copies agreeing on a new offset: %d, want it taken (411.01 s)", got)
	}
}

// TestSingleReceiverStopsFillingTheTable: the table of reports is kept in
// the first minute and while frames come on more than one clock; a
// single receiver's reports after its first minute are not kept.
func TestSingleReceiverStopsFillingTheTable(t *testing.T) {
	const utc = int64(1_700_000_000e9)
	var ls clockLinks
	for _, c := range []struct {
		clock uint32
		at    int64
		keeps bool
	}{
		{1, utc, true},
		{1, utc + 59e9, true},
		{1, utc + 61e9, false}, // one clock for over a minute
		{2, utc + 62e9, true},  // a second receiver
		{1, utc + 63e9, true},
		{1, utc + 200e9, false}, // the second one has been silent for a minute
		{0, utc + 201e9, false}, // no clock
	} {
		if got := ls.keepsReports(clockAt(c.clock, 0, c.at)); got != c.keeps {
			t.Errorf("clock %d at +%d s: keeps %v, want %v", c.clock, (c.at-utc)/1e9, got, c.keeps)
		}
	}
}
