package fusion

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/events/eventstest"
	"github.com/cuasd/cuasd/reference"
)

// djiObs is a DJI DroneID observation as the decoder makes it from a
// sensor's relayed claim.
func djiObs(sensor string, recv int64, rssi float64, text string, code uint16) decode.Observation {
	return decode.Observation{Protocol: decode.DJI, Key: "3NZEXAMPLEDJI003", UASID: "3NZEXAMPLEDJI003", Sensor: sensor,
		TimeUnixNano: recv, HasPosition: true, Lat: 51.46811, Lon: -0.46022, PositionMethod: "dji_droneid",
		Signal: rssi, Description: text, ProductType: code}
}

// TestTrackProductClaim (issue 25): the product a broadcast names reaches
// the track with its database match; a changed claim is looked up again,
// an absent one keeps the last; an unknown product says unknown.
func TestTrackProductClaim(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	t0 := c.t.UnixNano()
	o := djiObs("kit-1", t0, -76, "DJI Mavic 3", 0)
	s.Apply(&o)
	tr, _ := s.Get("dji:3NZEXAMPLEDJI003")
	if tr.Product == nil || tr.Product.Match.ID != "dji-mavic-3" || tr.Product.Match.Method != reference.MatchModelName {
		t.Fatalf("product %+v", tr.Product)
	}
	o = djiObs("kit-1", t0+1e9, -75, "", 0) // a message without Self-ID keeps the claim
	s.Apply(&o)
	if tr, _ = s.Get("dji:3NZEXAMPLEDJI003"); tr.Product == nil || tr.Product.Match.ID != "dji-mavic-3" {
		t.Fatalf("claim lost: %+v", tr.Product)
	}
	o = djiObs("kit-1", t0+2e9, -75, "", 67)
	s.Apply(&o)
	if tr, _ = s.Get("dji:3NZEXAMPLEDJI003"); tr.Product.Match.ID != "dji-matrice-30" || tr.Product.Match.Method != reference.MatchProductType {
		t.Fatalf("product type 67: %+v", tr.Product)
	}
	o = djiObs("kit-1", t0+3e9, -75, "DJI Mini 4 Pro", 0)
	s.Apply(&o)
	tr, _ = s.Get("dji:3NZEXAMPLEDJI003")
	v := tr.View(false)
	if v.Product == nil || v.Product.MatchedBy != "unknown" || v.Product.ReferenceID != "" || v.Product.Claim != "DJI Mini 4 Pro" {
		t.Fatalf("unknown product shown as %+v", v.Product)
	}
}

// TestTrackSensorSignals (issue 25): each sensor that heard the track keeps
// its own last signal level and time; Mode S levels are dBFS, field
// sensors' dBm; the view validates against the event schema.
func TestTrackSensorSignals(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	t0 := c.t.UnixNano()
	for _, o := range []decode.Observation{
		djiObs("kit-1", t0, -76, "DJI Mavic 3", 0),
		djiObs("kit-2", t0+5e8, -61.5, "DJI Mavic 3", 0),
		djiObs("kit-3", t0+6e8, 0, "DJI Mavic 3", 0), // no RSSI from this one
		djiObs("kit-1", t0+1e9, -70, "DJI Mavic 3", 0),
	} {
		s.Apply(&o)
	}
	tr, _ := s.Get("dji:3NZEXAMPLEDJI003")
	v := tr.View(true)
	if len(v.Sensors) != 3 || len(v.SensorSignals) != 2 {
		t.Fatalf("sensors %v, signals %+v", v.Sensors, v.SensorSignals)
	}
	got := map[string]float64{}
	for _, sig := range v.SensorSignals {
		if sig.RSSIDBm == nil || sig.SignalDBFS != nil {
			t.Fatalf("signal %+v", sig)
		}
		got[sig.Sensor] = *sig.RSSIDBm
		if sig.Sensor == "kit-1" && !sig.Time.Equal(time.Unix(0, t0+1e9)) {
			t.Errorf("kit-1 measured at %v", sig.Time)
		}
	}
	if got["kit-1"] != -70 || got["kit-2"] != -61.5 {
		t.Fatalf("signals %v", got)
	}
	a := decode.Observation{Protocol: decode.ADSB, Key: "406B90", ICAO: "406B90", Sensor: "rx1", TimeUnixNano: t0, Signal: -12.3}
	s.Apply(&a)
	at, _ := s.Get("adsb:406B90")
	if av := at.View(false); len(av.SensorSignals) != 1 || av.SensorSignals[0].SignalDBFS == nil || *av.SensorSignals[0].SignalDBFS != -12.3 {
		t.Fatalf("Mode S signal %+v", av.SensorSignals)
	}
	b, err := json.Marshal(events.TrackEvent{Header: events.Header{V: events.Version, Type: events.TypeTrackUpdate, Time: c.t, Instance: "a"}, Track: v})
	if err != nil {
		t.Fatal(err)
	}
	eventstest.Validate(t, "cuas.track.dji.3NZEXAMPLEDJI003", b)
}

// TestSensorClaimsDoNotAllocate: a repeated claim and a new signal level,
// the steady state of a drone a kit hears, cost no allocation.
func TestSensorClaimsDoNotAllocate(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	o := djiObs("kit-1", c.t.UnixNano(), -76, "DJI Mavic 3", 0)
	s.Apply(&o)
	tr := s.tracks["dji:3NZEXAMPLEDJI003"]
	if n := testing.AllocsPerRun(100, func() {
		o.Signal--
		o.TimeUnixNano++
		tr.mergeSensorClaims(&o, o.TimeUnixNano)
	}); n != 0 {
		t.Fatalf("%v allocations per observation", n)
	}
}

// BenchmarkApplyFieldSensor: the fusion update of a kit's DJI drone, with
// its RSSI and product claim, heard by two sensors in turn.
func BenchmarkApplyFieldSensor(b *testing.B) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	obs := [2]decode.Observation{djiObs("kit-1", c.t.UnixNano(), -76, "DJI Mavic 3", 0), djiObs("kit-2", c.t.UnixNano(), -61, "DJI Mavic 3", 0)}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		o := &obs[i%2]
		o.TimeUnixNano += int64(time.Millisecond)
		o.Lat += 1e-7
		o.Signal = -60 - float64(i%20)
		s.Apply(o)
	}
}

// BenchmarkStoreApplyWithSignal is BenchmarkStoreApply with a signal level
// on every observation (a Mode S receiver's, a kit's RSSI): it reports the
// memory a track costs with its per-sensor signal part.
func BenchmarkStoreApplyWithSignal(b *testing.B) {
	benchStoreApply(b, -70, func(o *decode.Observation) { o.Signal -= 0.5 })
}
