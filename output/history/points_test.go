package history

import (
	"math"
	"testing"
	"time"

	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/output"
)

func TestPointsOf(t *testing.T) {
	lat, lon := 51.0, -1.0
	ev := events.TrackEvent{Header: events.Header{V: 1, Type: events.TypeTrackUpdate},
		Track: events.Track{TrackID: "adsb:4CA1FA", Lat: &lat, Lon: &lon, LastSeen: t0.Add(3 * time.Second),
			SpeedMps: f64(100), Sensors: []string{"rx1", "rx2"}, AltKind: "barometric"}}
	t.Run("current position when no history", func(t *testing.T) {
		pts := pointsOf(&ev, "adsb", &assessment{decision: "alert", lambda: 0.5}, nil)
		if len(pts) != 1 || !pts[0].Time.Equal(t0.Add(3*time.Second)) || pts[0].Sensor != "rx1,rx2" ||
			pts[0].Decision != "alert" || *pts[0].Lambda != 0.5 || *pts[0].SpeedMps != 100 || pts[0].Protocol != "adsb" {
			t.Fatalf("%+v", pts)
		}
	})
	t.Run("history points, assessment over fallback", func(t *testing.T) {
		e := ev
		e.Track.History = []events.Point{{T: t0, Lat: 50, Lon: -2, AltM: f64(10)}, {T: t0.Add(time.Second), Lat: 50.5, Lon: -1.5}}
		e.Assessment = &events.Assessment{Decision: "monitor", Lambda: 0.1}
		pts := pointsOf(&e, "adsb", &assessment{decision: "alert"}, nil)
		if len(pts) != 2 || pts[0].Lat != 50 || *pts[0].AltM != 10 || pts[0].AltKind != "barometric" || pts[1].AltKind != "" ||
			pts[0].SpeedMps != nil || pts[1].SpeedMps == nil || pts[0].Decision != "monitor" {
			t.Fatalf("%+v", pts)
		}
	})
	t.Run("fixes sharing a receive time stay distinct", func(t *testing.T) {
		e := ev
		e.Track.History = []events.Point{{T: t0, Lat: 50, Lon: -2}, {T: t0, Lat: 50.1, Lon: -2}, {T: t0, Lat: 50.2, Lon: -2}}
		pts := pointsOf(&e, "adsb", nil, nil)
		if len(pts) != 3 || !pts[1].Time.Equal(t0.Add(1)) || !pts[2].Time.Equal(t0.Add(2)) {
			t.Fatalf("%+v", pts)
		}
	})
	t.Run("no position, lost track", func(t *testing.T) {
		e := ev
		e.Track.Lat = nil
		if pts := pointsOf(&e, "adsb", nil, nil); len(pts) != 0 {
			t.Fatalf("a track without a position gave %+v", pts)
		}
		e = ev
		e.Type = events.TypeTrackLost
		if pts := pointsOf(&e, "adsb", nil, nil); len(pts) != 0 {
			t.Fatalf("track.lost without history gave %+v", pts)
		}
	})
}

func TestSubjectProtocol(t *testing.T) {
	for subj, want := range map[string]string{"cuas.track.adsb.4CA1FA": "adsb", "cuas.track.remoteid.X_Y": "remoteid", "cuas.swarm": ""} {
		if got := subjectProtocol(subj); got != want {
			t.Errorf("%s → %q, want %q", subj, got, want)
		}
	}
}

// TestFedFixesAtTheAPIsPrecision (issue 30): fusion hands its fixes
// unrounded (CPR's floats, feet × 0.3048); the recorder keeps them as
// the track events and the live API give them (fusion.Round: 6 places
// of a degree, 1 of a metre, velocities 2/1/2), where the codec packs a
// point in a few bytes — unrounded, a point took 53.
func TestFedFixesAtTheAPIsPrecision(t *testing.T) {
	r := New(Config{Path: "unused"})
	const n = 500
	for i := range n {
		x := float64(i)
		r.onFix(&output.Fix{TrackID: "adsb:4CA1FA", Protocol: "adsb", Sensor: "rx1", UnixNano: t0.UnixNano() + int64(i)*int64(100*time.Millisecond),
			Lat: 51.123456789 + x*1.1e-5*math.Pi, Lon: -0.987654321 + x*1.3e-5*math.E, HasAlt: true, AltM: (30000 - 25*x) * 0.3048, AltKind: "barometric",
			HasVel: true, SpeedMps: 230.123456 + x/7, HeadingDeg: 90.123456 + x/9, VRateMps: -6.123456})
	}
	pts := r.takeFixes(nil)
	if len(pts) != n {
		t.Fatalf("%d points, want %d", len(pts), n)
	}
	for i, p := range pts {
		x := float64(i)
		if p.Lat != fusion.Round(51.123456789+x*1.1e-5*math.Pi, 6) || p.Lon != fusion.Round(-0.987654321+x*1.3e-5*math.E, 6) ||
			*p.AltM != fusion.Round((30000-25*x)*0.3048, 1) || *p.SpeedMps != fusion.Round(230.123456+x/7, 2) ||
			*p.HeadingDeg != fusion.Round(90.123456+x/9, 1) || *p.VRateMps != fusion.Round(-6.123456, 2) {
			t.Fatalf("point %d: %v %v %v %v %v %v", i, p.Lat, p.Lon, *p.AltM, *p.SpeedMps, *p.HeadingDeg, *p.VRateMps)
		}
	}
	// Compact: ~12 bytes a point with its velocity (33 when the second
	// format kept velocities whole, 53 unrounded).
	if b := len(appendPoints(nil, t0.UnixNano(), pts)); b > n*16 {
		t.Errorf("%d points packed in %d bytes (%.1f a point), want ≤ 16 a point", n, b, float64(b)/n)
	}
}

// takeFixes appends all the queued fixes to batch as points (fedPoints),
// uncommitted: the points the writer would commit, for the tests to read.
func (r *Recorder) takeFixes(batch []Point) []Point {
	blocks := r.fixes.take()
	var fps []fedPoint
	for _, b := range blocks {
		fps = r.fedPoints(fps, b)
	}
	r.fixes.giveBack(blocks)
	for i := range fps {
		batch = append(batch, fps[i].point())
	}
	return batch
}
