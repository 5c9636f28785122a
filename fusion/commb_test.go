package fusion

import (
	"encoding/json"
	"math"
	"os"
	"testing"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/worker"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/events/eventstest"
	"github.com/cuasd/cuasd/internal/testshared"
)

// TestCommBFromCapture runs the real Beast capture (../shared/data/adsb,
// 488 DF20/21 replies) through the pipeline's decoder and the store, as
// cuasd serve does: the Comm-B replies of aircraft known from DF17 fill
// the tracks' air data, whose values must agree with the same tracks'
// ADS-B (the store never compares them this tightly), and the track
// events carrying them must match their schema.
func TestCommBFromCapture(t *testing.T) {
	raw, err := os.ReadFile(testshared.Path(t, "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin"))
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{time.Unix(1_522_782_148, 0)}
	s := newTestStore(c)
	d := &worker.ADSB{}
	var out []decode.Observation
	base := c.t.UnixNano()
	checked, agree := 0, 0
	for f, err := range adsb.BeastFrames(raw) {
		if err != nil || f.Type == adsb.BeastModeAC {
			continue
		}
		out, _ = d.Decode(f.Bytes(), worker.Meta{}, out[:0])
		for i := range out {
			o := &out[i]
			// What the worker adds to each observation (decode/worker).
			o.Protocol, o.Sensor = decode.ADSB, "capture"
			o.TimeUnixNano = base + int64(f.Micros()*1e3)
			s.Apply(o)
			if o.HasCommB {
				checked, agree = checkAirData(s, o, checked, agree)
			}
		}
	}
	withAir := 0
	for _, tr := range s.List(Filter{}) {
		if tr.Air == nil {
			continue
		}
		withAir++
		ev := events.TrackEvent{Header: events.Header{V: 1, Type: events.TypeTrackUpdate, Time: c.t, Instance: "test"}, Track: tr.View(false)}
		b, _ := json.Marshal(ev)
		eventstest.Validate(t, bus.TrackSubject("adsb", tr.ICAO), b)
	}
	t.Logf("%d tracks with Comm-B air data; magnetic heading within 30° of the ADS-B track on %d of %d checks", withAir, agree, checked)
	if withAir == 0 || checked == 0 || agree*100 < checked*95 {
		t.Errorf("%d tracks with air data; heading agreement %d of %d", withAir, agree, checked)
	}
}

// checkAirData compares a track's magnetic heading, right after a Comm-B
// reply updated it, with the track's ADS-B track angle.
func checkAirData(s *Store, o *decode.Observation, checked, agree int) (int, int) {
	tr, ok := s.Get("adsb:" + o.Key)
	if !ok || tr.Air == nil || !tr.Air.HasMagneticHeading || !tr.HasVelocity || tr.Air.Updated != o.TimeUnixNano {
		return checked, agree
	}
	d := math.Abs(math.Mod(tr.Air.MagneticHeadingDeg-tr.HeadingDeg+540, 360) - 180)
	if d <= 30 {
		agree++
	}
	return checked + 1, agree
}

// TestCommBUnknownAndAmbiguous: a Comm-B reply of an unknown address makes
// no track, and an ambiguous payload (pyModeS's 5,0/6,0 example,
// tests/test_infer.py line 94 @ a49921bb) changes nothing until the
// aircraft's ADS-B state separates the readings.
func TestCommBUnknownAndAmbiguous(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	reply := decode.Observation{Protocol: decode.ADSB, Key: "ABCDEF", ICAO: "ABCDEF", ModeSReply: true, HasCommB: true, CommB: 0xFFBAA11E200472}
	if _, ok := s.Apply(&reply); ok || s.Len() != 0 {
		t.Fatal("a Comm-B reply created a track")
	}
	squitter := decode.Observation{Protocol: decode.ADSB, Key: "ABCDEF", ICAO: "ABCDEF", Callsign: "TEST1"}
	s.Apply(&squitter)
	s.Apply(&reply)
	if tr, _ := s.Get("adsb:ABCDEF"); tr.Air != nil {
		t.Fatalf("ambiguous reply applied: %+v", tr.Air)
	}
	// ADS-B velocity: 355° — 6,0's heading 359° fits, 5,0's track 239° not.
	vel := decode.Observation{Protocol: decode.ADSB, Key: "ABCDEF", ICAO: "ABCDEF", HasVelocity: true, SpeedMps: 230 * 0.514444, HeadingDeg: 355}
	s.Apply(&vel)
	s.Apply(&reply)
	tr, _ := s.Get("adsb:ABCDEF")
	if tr.Air == nil || !tr.Air.HasIAS || math.Abs(tr.Air.IASMps-336*0.514444) > 1e-6 || !tr.Air.HasMach || tr.Air.HasTAS {
		t.Fatalf("6,0 not applied: %+v", tr.Air)
	}
}
