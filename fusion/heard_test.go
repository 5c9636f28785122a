package fusion

import (
	"math"
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/internal/testcapture"
)

// heardCopy is one receiver's copy of a capture frame, as the decoder
// hands it to fusion: timed on the receiver's own clock and mapped to
// UTC, delivered at arrive.
type heardCopy struct {
	o      decode.Observation
	arrive int64
}

// captureObservations are the real capture's ADS-B position frames (each
// record once: the capture holds every record twice) as observations of
// receiver sensor on clock epoch clock, mapped to UTC off by mapErr.
func captureObservations(t *testing.T, sensor string, clock uint32, mapErr int64) []decode.Observation {
	t.Helper()
	var out []decode.Observation
	for _, r := range distinctRecords(t) {
		if len(r.Data) != 14 {
			continue
		}
		var m adsb.Message
		if adsb.Decode(r.Data, &m) != nil || !m.HasCPR || (m.DF != 17 && m.DF != 18) {
			continue
		}
		ns := int64(r.TS * 1000 / 12) // 12 MHz ticks to ns
		at := sensorclock.Time{UnixNano: testcapture.Then.UnixNano() + ns + mapErr, SensorNs: ns, Clock: clock, Source: sensorclock.FromReceiver}
		out = append(out, cprObservation(&m, sensor, at))
	}
	return out
}

// distinctRecords are the capture's records, each once, as the decoder
// drops a receiver's exact duplicates (the capture holds every record
// twice).
func distinctRecords(t *testing.T) []testcapture.Record {
	t.Helper()
	type key struct {
		ts   uint64
		data string
	}
	seen := map[key]bool{}
	var recs []testcapture.Record
	for _, r := range testcapture.Records(t) {
		if k := (key{r.TS, string(r.Data)}); !seen[k] {
			seen[k] = true
			recs = append(recs, r)
		}
	}
	return recs
}

// cprObservation is position message m as the decoder hands it to
// fusion, heard by sensor at at.
func cprObservation(m *adsb.Message, sensor string, at sensorclock.Time) decode.Observation {
	icao := adsb.AddressString(m.Address)
	return decode.Observation{Protocol: decode.ADSB, Key: icao, ICAO: icao, Sensor: sensor,
		TimeUnixNano: at.UnixNano, SensorNs: at.SensorNs, SensorClock: at.Clock, TimeSource: at.Source,
		HasCPR: true, CPROdd: m.CPR.Odd, CPRLat: m.CPR.Lat, CPRLon: m.CPR.Lon, CPRSurface: m.Kind == adsb.KindSurfacePosition}
}

// fixesOf applies the copies in arrival order to a fresh store and
// returns its fixes by track, and the store.
func fixesOf(t *testing.T, copies []heardCopy) (map[string][]Fix, *Store) {
	t.Helper()
	sort.SliceStable(copies, func(i, j int) bool { return copies[i].arrive < copies[j].arrive })
	s := NewStore(Config{TTL: time.Hour, Now: func() time.Time { return testcapture.Then.Add(2 * time.Minute) }})
	fixes := map[string][]Fix{}
	stop := s.FeedFixes(func(f *Fix) { fixes[f.TrackID] = append(fixes[f.TrackID], *f) })
	defer stop()
	for i := range copies {
		s.Apply(&copies[i].o)
	}
	return fixes, s
}

// TestEveryReceiversCopyIsOneFix: three receivers hear the same aircraft
// (the real capture), each missing a fifth of the frames, their clocks
// mapped to UTC within 5 ms, their feeds 20 ms, 300 ms and 1.2 s late, so that copies arrive in every order
// and a frame only a slow receiver heard comes after newer ones. Each
// aircraft's fixes are then those of one receiver hearing everything:
// each transmission once (before, once per receiver: history and every
// fix-fed output three times over), in time order (before, a slow
// receiver's copies stepped the track back), ending where the capture
// ends, no track flagged. What was skipped is counted.
func TestEveryReceiversCopyIsOneFix(t *testing.T) {
	one, _ := fixesOf(t, copiesOf(captureObservations(t, "rx0", 1, 0), 20e6, nil))
	rng := rand.New(rand.NewSource(30))
	var copies []heardCopy
	for k, rx := range []struct{ mapErr, lag int64 }{{0, 20e6}, {5e6, 300e6}, {-3e6, 1200e6}} {
		obs := captureObservations(t, "rx"+string(rune('0'+k)), uint32(k+1), rx.mapErr)
		copies = append(copies, copiesOf(obs, rx.lag-rx.mapErr, func() bool { return rng.Float64() < .2 })...)
	}
	three, s := fixesOf(t, copies)
	if len(three) != len(one) {
		t.Fatalf("%d aircraft with fixes, want %d", len(three), len(one))
	}
	for id, want := range one {
		got := three[id]
		// A frame a slow receiver alone heard is skipped when a faster
		// one's newer frame came first: a few per aircraft, no more.
		if len(got) > len(want) || len(got) < len(want)*9/10 {
			t.Errorf("%s: %d fixes from three receivers, want about the %d of one receiver hearing everything (each transmission once)", id, len(got), len(want))
		}
		for i := 1; i < len(got); i++ {
			if got[i].T <= got[i-1].T {
				t.Errorf("%s: fix %d at %d not after the one before (%d): the track stepped back", id, i, got[i].T, got[i-1].T)
				break
			}
		}
		last, wantLast := got[len(got)-1], want[len(want)-1]
		if math.Abs(last.Lat-wantLast.Lat) > 1e-6 || math.Abs(last.Lon-wantLast.Lon) > 1e-6 {
			t.Errorf("%s ends at %.6f,%.6f, want the capture's last position %.6f,%.6f", id, last.Lat, last.Lon, wantLast.Lat, wantLast.Lon)
		}
		if tr, _ := s.Get(id); tr.RejectedPositions != 0 {
			t.Errorf("%s: %d positions rejected as jumps: %v", id, tr.RejectedPositions, tr.Warnings)
		}
	}
	sk := s.Skipped()
	if sk["heard_again"] == 0 || sk["older"] == 0 {
		t.Errorf("skipped %v: want the copies counted as heard_again and the late frames as older", sk)
	}
}

// copiesOf are the observations as delivered, each arriving after after
// its mapped time, without those miss says the receiver missed (nil:
// none).
func copiesOf(obs []decode.Observation, after int64, miss func() bool) []heardCopy {
	out := make([]heardCopy, 0, len(obs))
	for _, o := range obs {
		if miss != nil && miss() {
			continue
		}
		out = append(out, heardCopy{o: o, arrive: o.TimeUnixNano + after})
	}
	return out
}

// TestJumpJudgedOnTheReceiversOwnClock: in a fast replay of two
// receivers' recordings their times are held at the arrivals (a mapped
// time is never after its arrival), eight times closer together than
// the receivers' clocks say. Positions alternating between the two are
// judged on the receiver's own clock and taken; before, the time between
// the two receivers' positions came from the squeezed UTC times and an
// aircraft at 245 m/s was refused as flying 2 km/s, the track frozen and
// flagged. A jump on a receiver's own clock is still refused, and live
// (times not held), a position 3 km off the track is judged against the
// track's last position, however long ago its own receiver's last was.
func TestJumpJudgedOnTheReceiversOwnClock(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	t0 := c.t.UnixNano()
	const step = 0.0022 // degrees of latitude a second: about 245 m/s
	at := func(sensor string, epoch uint32, sec int, recv int64, lat float64) {
		o := timedFix(lat, 4, epoch, int64(1000+sec)*1e9, recv)
		o.Sensor = sensor
		s.Apply(&o)
	}
	// Both receivers hear the aircraft from the start (rx1 2 s after rx0:
	// 490 m, within the check's 1 km slack); then each hears a position
	// every 12 s of its clock, the two 6 s (1.5 km) apart. The replay
	// delivers them 8 times faster.
	at("rx1", 2, -2, t0-2e9/8, 52+step*-2)
	for sec := 0; sec < 120; sec += 6 {
		rx, epoch := "rx0", uint32(1)
		if sec%12 == 6 {
			rx, epoch = "rx1", 2
		}
		at(rx, epoch, sec, t0+int64(sec)*1e9/8, 52+step*float64(sec))
	}
	tr, _ := s.Get("rid:X")
	if tr.Lat != 52+step*114 || tr.RejectedPositions != 0 {
		t.Fatalf("track at %.4f, %d rejected (%v); want every position taken, ending at %.4f", tr.Lat, tr.RejectedPositions, tr.Warnings, 52+step*114)
	}
	// A position 50 km off, heard by rx1 6 s after the track's last one.
	at("rx1", 2, 120, t0+120e9/8, 52+step*120+0.45)
	if tr, _ = s.Get("rid:X"); tr.RejectedPositions != 1 {
		t.Fatalf("a jump on rx1's own clock was taken: track at %.4f", tr.Lat)
	}
	// Live: rx0 and rx1 in real time; rx1 silent for 30 s, then a
	// position 3 km ahead of the track 0.5 s after rx0's last.
	base := t0 + 200e9
	for sec := 200; sec <= 230; sec++ {
		at("rx0", 1, sec, base+int64(sec-200)*1e9, 52+step*float64(sec))
	}
	at("rx1", 2, 230, base+30_500e6, 52+step*230+0.027)
	if tr, _ = s.Get("rid:X"); tr.RejectedPositions != 2 {
		t.Errorf("live, a 3 km jump heard by a receiver whose last position is 30 s old was taken: track at %.4f", tr.Lat)
	}
}

// TestLatePositionDoesNotStepTheTrackBack: a feeder reconnecting after
// an outage sends what it buffered, timed right by its receiver's clock
// but older than what another receiver has heard since. Those positions
// are no new fixes: the track stays at its newest position, is not
// flagged (before, a late position more than 1 km behind was refused as
// an implausible jump; a nearer one moved the track back), and they are
// counted. A Remote ID message heard by two receivers (its own time in
// both) is one fix.
func TestLatePositionDoesNotStepTheTrackBack(t *testing.T) {
	s, fixes, t0 := storeWithFixes(t)
	const step = 0.0022
	for sec := 0; sec <= 20; sec++ {
		o := timedFix(52+step*float64(sec), 4, 1, int64(sec)*1e9, t0+int64(sec)*1e9)
		o.Sensor = "rx0"
		s.Apply(&o)
	}
	for sec := 5; sec <= 15; sec++ { // rx1's buffer, 5–15 s behind
		o := timedFix(52+step*float64(sec)+1e-5, 4, 2, int64(sec)*1e9, t0+int64(sec)*1e9)
		o.Sensor = "rx1"
		s.Apply(&o)
	}
	tr, _ := s.Get("rid:X")
	if tr.Lat != 52+step*20 || tr.RejectedPositions != 0 || len(tr.Warnings) != 0 || len(*fixes) != 21 {
		t.Fatalf("track at %.4f, %d rejected, warnings %v, %d fixes; want it at its newest %.4f, unflagged, 21 fixes", tr.Lat, tr.RejectedPositions, tr.Warnings, len(*fixes), 52+step*20)
	}
	if n := s.Skipped()["older"]; n != 11 {
		t.Errorf("%d positions counted as older, want 11", n)
	}
	msg := ridObs("X", 52+step*21, 4, t0+21e9)
	msg.Sensor = "rx0"
	s.Apply(&msg)
	msg.Sensor = "rx1"
	s.Apply(&msg)
	if len(*fixes) != 22 || s.Skipped()["heard_again"] != 1 {
		t.Errorf("one Remote ID message heard by two receivers: %d fixes (want 22), skipped %v", len(*fixes), s.Skipped())
	}
}

// TestUntimedCopiesFromTwoSensorsAreOneFix: two field sensors relaying
// the same drone's positions without the message's time (each timed by
// its arrival, 50 ms apart) give one fix per position, as readsb's
// duplicate_check takes one; a drone hovering in one place, heard by one
// sensor, still gives a fix for every message.
func TestUntimedCopiesFromTwoSensorsAreOneFix(t *testing.T) {
	s, fixes, t0 := storeWithFixes(t)
	for sec := 0; sec < 10; sec++ {
		for k, sensor := range []string{"wardragon", "esp32"} {
			o := ridObs("X", 52+1e-4*float64(sec), 4, t0+int64(sec)*1e9+int64(k)*50e6)
			o.Sensor = sensor
			s.Apply(&o)
		}
	}
	if len(*fixes) != 10 || s.Skipped()["heard_again"] != 10 {
		t.Fatalf("%d fixes from 10 positions heard by two sensors (want 10), skipped %v", len(*fixes), s.Skipped())
	}
	for sec := 10; sec < 20; sec++ { // hovering, one sensor
		o := ridObs("X", 52+1e-4*9, 4, t0+int64(sec)*1e9)
		o.Sensor = "wardragon"
		s.Apply(&o)
	}
	if len(*fixes) != 20 {
		t.Errorf("%d fixes after 10 hovering positions from one sensor, want 20", len(*fixes))
	}
}

// storeWithFixes is a test store on a fixed clock, the fixes it feeds
// (gathered until the test ends), and its clock's time in Unix ns.
func storeWithFixes(t *testing.T) (*Store, *[]Fix, int64) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	fixes := new([]Fix)
	t.Cleanup(s.FeedFixes(func(f *Fix) { *fixes = append(*fixes, *f) }))
	return s, fixes, c.t.UnixNano()
}
