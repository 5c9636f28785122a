package sim

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/mavlink"
	"github.com/cuasd/cuasd/decode/remoteid"
)

// TestFramesDecodeWithTheProductionDecoders checks that everything the
// simulator emits is a standard-conformant encoding of the simulated
// truth, as judged by the real decoders.
func TestFramesDecodeWithTheProductionDecoders(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	cfg := DefaultDemo()
	w := NewWorld(cfg, now)
	out := map[string][][]byte{}
	for i := 0; i < 30; i++ {
		now = now.Add(100 * time.Millisecond)
		w.Step(now, 100*time.Millisecond, out)
	}
	if len(out["adsb"]) == 0 || len(out["remoteid"]) == 0 || len(out["mavlink"]) == 0 {
		t.Fatalf("frames: %d adsb, %d remoteid, %d mavlink", len(out["adsb"]), len(out["remoteid"]), len(out["mavlink"]))
	}
	truth := map[uint32]*object{}
	for _, o := range w.objects {
		if o.kind == kAircraft {
			truth[o.icao] = o
		}
	}
	var m adsb.Message
	var even, odd = map[uint32]adsb.CPR{}, map[uint32]adsb.CPR{}
	idents := 0
	for _, f := range out["adsb"] {
		if err := adsb.Decode(f, &m); err != nil || m.CRC != adsb.CRCValid || m.DF != 17 {
			t.Fatalf("frame %x: err %v crc %v", f, err, m.CRC)
		}
		o := truth[m.Address]
		if o == nil {
			t.Fatalf("frame %x: unknown address %06X", f, m.Address)
		}
		switch {
		case m.Kind == adsb.KindIdentification:
			idents++
			if m.Callsign.String() != o.callsign {
				t.Errorf("callsign %q, want %q", m.Callsign.String(), o.callsign)
			}
		case m.HasCPR:
			if m.CPR.Odd {
				odd[m.Address] = m.CPR
			} else {
				even[m.Address] = m.CPR
			}
			if want := math.Round(o.altM/0.3048/25) * 25; math.Abs(float64(m.Altitude)-want) > 25 {
				t.Errorf("altitude %d ft, want about %.0f", m.Altitude, want)
			}
		case m.HasGroundspeed:
			if math.Abs(m.Groundspeed-o.speed/0.514444) > 2 {
				t.Errorf("groundspeed %.1f kt, want %.1f", m.Groundspeed, o.speed/0.514444)
			}
		}
	}
	if idents == 0 {
		t.Error("no identification frames")
	}
	for icao, o := range truth {
		lat, lon, err := adsb.CPRGlobalAirborne(even[icao], odd[icao], true)
		if err != nil {
			t.Fatalf("%06X: %v", icao, err)
		}
		// The odd frame was sent up to half a second before the end.
		if d := distM(lat, lon, o.lat, o.lon); d > o.speed*0.6+10 {
			t.Errorf("%06X: CPR position %.0f m from the truth", icao, d)
		}
	}

	var f remoteid.Frame
	for _, b := range out["remoteid"] {
		if err := remoteid.DecodeCarrier(remoteid.CarrierAuto, b, &f); err != nil {
			t.Fatalf("remote id pack %x: %v", b, err)
		}
		o := remoteid.FrameObservation(&f, 1, "s")
		if o.UASID == "" || !o.HasPosition {
			t.Fatalf("pack without id or position: %+v", o)
		}
	}

	var p mavlink.Parser
	var msg mavlink.Message
	positions := 0
	for _, b := range out["mavlink"] {
		p.Reset(b)
		n := 0
		for {
			fr, ok := p.Next()
			if !ok {
				break
			}
			n++
			if msg.Decode(&fr) && fr.MsgID == mavGlobalPositionInt {
				positions++
			}
		}
		if st := p.Stats(); n == 0 || st.BadCRC != 0 || st.HeaderErrors != 0 {
			t.Fatalf("mavlink chunk %x: %d frames, stats %+v", b, n, st)
		}
	}
	if positions == 0 {
		t.Error("no GLOBAL_POSITION_INT decoded")
	}
}

func TestIntruderBreachesTheZone(t *testing.T) {
	now := time.Now()
	w := NewWorld(Config{Intruders: 1, ZoneRadiusM: 1500}, now)
	o := w.objects[0]
	inside := false
	for i := 0; i < 600 && !inside; i++ {
		now = now.Add(100 * time.Millisecond)
		w.Step(now, 100*time.Millisecond, map[string][][]byte{})
		inside = distM(DemoSite[0], DemoSite[1], o.lat, o.lon) < 1500
	}
	if !inside {
		t.Fatal("the intruder did not enter the zone within 60 s")
	}
}

func BenchmarkStep(b *testing.B) {
	now := time.Now()
	w := NewWorld(Config{Aircraft: 1000, Drones: 100, MAVLink: 10, Rate: 100000}, now)
	out := map[string][][]byte{}
	b.ReportAllocs()
	frames := 0
	for i := 0; i < b.N; i++ {
		for k := range out {
			out[k] = out[k][:0]
		}
		now = now.Add(10 * time.Millisecond)
		w.Step(now, 10*time.Millisecond, out)
		for _, v := range out {
			frames += len(v)
		}
	}
	b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
}

// TestSimulateIDsNeverMeetTheDemo: cuasd simulate's default IDBase gives
// every object an identity the demo's scenario does not use (issue 34:
// shared ids made "implausible position jump" tracks).
func TestSimulateIDsNeverMeetTheDemo(t *testing.T) {
	ids := func(c Config) map[string]bool {
		w := NewWorld(c, time.Unix(0, 0))
		m := map[string]bool{}
		for _, o := range w.objects {
			switch o.kind {
			case kAircraft:
				m[fmt.Sprintf("icao %06X", o.icao)] = true
			case kDrone:
				m["uas "+o.uasID] = true
			case kMAVLink:
				m[fmt.Sprintf("sysid %d", o.sysID)] = true
			}
		}
		return m
	}
	demo := ids(DefaultDemo())
	other := DefaultDemo()
	other.IDBase = 100000 // cuasd simulate's default
	for id := range ids(other) {
		if demo[id] {
			t.Errorf("%s is the demo's too", id)
		}
	}
	if len(demo) < 10 {
		t.Fatalf("only %d demo ids: the check saw nothing", len(demo))
	}
}
