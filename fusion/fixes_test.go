package fusion

import (
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode"
)

// TestFeedFixesEveryAcceptedFix: every accepted position reaches the fix
// feed, in order, with its own time and the track's altitude; a rejected
// one does not; after stop nothing does.
func TestFeedFixesEveryAcceptedFix(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	t0 := c.t.UnixNano()
	var got []Fix
	stop := s.FeedFixes(func(f *Fix) { got = append(got, *f) })
	obs := ridObs("X", 52.0, 4.0, t0)
	obs.HasAltitude, obs.AltM, obs.AltKind = true, 120, "geo"
	s.Apply(&obs)
	jump := ridObs("X", 52.5, 4.0, t0+int64(time.Second)) // 55 km in 1 s: rejected
	s.Apply(&jump)
	for i := 1; i <= 40; i++ { // more than the 32-position ring
		o := ridObs("X", 52.0+float64(i)*1e-4, 4.0, t0+int64(i)*int64(2*time.Second))
		s.Apply(&o)
	}
	if len(got) != 41 {
		t.Fatalf("%d fixes fed, want 41 (one rejected)", len(got))
	}
	for i, f := range got {
		if f.TrackID != "rid:X" || f.Protocol != "remoteid" || f.Sensor != "s1" || f.T != t0+int64(i)*int64(2*time.Second) || f.Lat != 52.0+float64(i)*1e-4 {
			t.Fatalf("fix %d: %+v", i, f)
		}
	}
	if !got[0].HasAlt || got[0].AltM != 120 || got[0].AltKind != "geo" {
		t.Errorf("first fix lacks the altitude: %+v", got[0])
	}
	stop()
	o := ridObs("X", 52.01, 4.0, t0+int64(100*time.Second))
	s.Apply(&o)
	if len(got) != 41 {
		t.Error("a fix fed after stop")
	}
}

// TestModeSAltitudeDoesNotOverrideADSB (issue 30, readsb's source
// priority): a Mode S reply's altitude does not replace an ADS-B altitude
// less than 15 s old; after that it does.
func TestModeSAltitudeDoesNotOverrideADSB(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	t0 := c.t.UnixNano()
	obs := func(alt float64, reply bool, at time.Duration) *decode.Observation {
		return &decode.Observation{Protocol: decode.ADSB, Key: "4CA1FA", ICAO: "4CA1FA", TimeUnixNano: t0 + int64(at), Sensor: "rx1",
			HasAltitude: true, AltM: alt, AltKind: "baro", ModeSReply: reply}
	}
	alt := func() float64 { tr, _ := s.Get("adsb:4CA1FA"); return tr.AltM }
	s.Apply(obs(10000, false, 0))
	s.Apply(obs(9000, true, 14*time.Second))
	if alt() != 10000 {
		t.Fatalf("a Mode S altitude 14 s after the ADS-B one replaced it: %v", alt())
	}
	s.Apply(obs(9000, true, 15*time.Second))
	if alt() != 9000 {
		t.Fatalf("a Mode S altitude 15 s after the ADS-B one was not taken: %v", alt())
	}
	s.Apply(obs(9500, false, 16*time.Second))
	if alt() != 9500 {
		t.Fatalf("an ADS-B altitude did not replace a Mode S one: %v", alt())
	}
}

// TestFeedFixesDoesNotAllocate: handing an accepted fix to a feed costs no
// allocation on fusion's goroutine (a Fix per fix escaped to the heap).
func TestFeedFixesDoesNotAllocate(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	var n int
	stop := s.FeedFixes(func(f *Fix) { n++ })
	defer stop()
	o := ridObs("X", 52.0, 4.0, c.t.UnixNano())
	s.Apply(&o)
	tr := s.tracks["rid:X"]
	if a := testing.AllocsPerRun(100, func() { s.feedFix(tr, Point{T: o.TimeUnixNano, Lat: 52, Lon: 4}) }); a != 0 {
		t.Fatalf("%v allocations per fed fix", a)
	}
	if n == 0 {
		t.Fatal("no fix fed")
	}
}
