package events

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode"
)

// sampleEvent is a track event with every member set, its optional parts
// present when full.
func sampleEvent(s string, x float64, n int64, full bool) *TrackEvent {
	f := func(v float64) *float64 { return &v }
	i := func(v int) *int { return &v }
	at := time.Unix(0, n).UTC()
	ev := &TrackEvent{
		Header: Header{V: Version, Type: TypeTrackUpdate, Time: at, Instance: s},
		Track: Track{TrackID: "adsb:" + s, Protocols: []string{"adsb", s}, ICAO: s, Callsign: s,
			Category: "A3", CategoryKind: decode.CategoryEmitter, Lat: f(x), Lon: f(-x), AltM: f(x * 1e-9),
			AltKind: "baro", SpeedMps: f(x * 1e22), HeadingDeg: f(0), Sensors: []string{s}, FirstSeen: at,
			LastSeen: at.Add(time.Duration(n % 1e9)), Observations: uint64(n), Warnings: []string{s},
			History:      []Point{{T: at, Lat: x, Lon: x / 3, AltM: f(math.Copysign(0, -1))}, {T: at, Lat: 1e-7, Lon: 1e21}},
			PositionTime: &at, Simulated: x > 0},
	}
	if full {
		ev.Track.ID = ev.Track.TrackID
		ev.Track.OperatorLat, ev.Track.OperatorLon, ev.Track.VRateMps = f(x), f(x), f(-x)
		ev.Track.HAccuracyM, ev.Track.VAccuracyM, ev.Track.Squawk, ev.Track.Emergency = f(3), f(4), "7700", s
		ev.Track.UASID, ev.Track.OperatorID, ev.Track.PosMethod = s, s, "cpr"
		ev.Track.AirData = &AirData{Mach: f(x), Updated: at}
		ev.Track.Product = &Product{Claim: s, ProductType: i(int(n % 256)), MatchedBy: "unknown"}
		ev.Track.SensorSignals = []SensorSignal{{Sensor: s, RSSIDBm: f(x), Time: at}, {Sensor: "b", SignalDBFS: f(-x)}}
		ev.Track.ADSB = &ADSBInfo{AddressType: "adsb_icao", AirGround: s, NIC: i(8), RcM: i(int(n)), Version: i(2),
			NACv: i(1), SIL: i(3), SILType: "perhour", NavHeadingDeg: f(x)}
		ev.Track.PositionSource = "mlat"
		ev.Track.MLAT = &MLAT{Sensors: int(n % 7), ResidualM: x, ErrorM: -x}
		ev.Track.Verification = &Verification{Status: s, ResidualM: x, DistanceM: x * 2, Sensors: 5, Time: at}
		idx := n
		ev.Assessment = &Assessment{Decision: "alert", Lambda: x, HumanDecision: true, Breach: true, Geofence: s,
			GeofenceName: s, DistanceM: f(x), Caps: []string{s}, TopAxes: []AxisSummary{{ID: s, Name: s, Value: x, Weight: 0.1}},
			SwarmID: s, AllowListed: true, Side: s, ReceiptIndex: &idx, Class: s}
	}
	return ev
}

// checkSame fails when AppendJSON and json.Marshal disagree on ev.
func checkSame(t *testing.T, ev *TrackEvent) {
	t.Helper()
	want, wantErr := json.Marshal(ev)
	got, err := ev.AppendJSON([]byte("prefix"))
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("error %v, encoding/json %v", err, wantErr)
	}
	if err == nil && !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("AppendJSON differs from encoding/json:\n got  %s\n want prefix%s", got, want)
	}
}

func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	for _, c := range []struct {
		name string
		s    string
		x    float64
		n    int64
	}{
		{"plain", "4CA1FA", 51.47, 1764133200123456789},
		{"html and quotes", `<a href="x">&</a>\`, 1e-7, 1},
		{"control and unicode", "tab\there\u2028é\x00", math.Copysign(0, -1), -1},
		{"invalid utf-8", "bad\xff\xfe", 1e21, math.MaxInt64},
		{"exponents", "", 1.5e-300, 0},
		{"big", "x", -1.7976931348623157e308, 123},
		{"NaN refused by both", "x", math.NaN(), 5},
		{"infinity refused by both", "x", math.Inf(-1), 5},
	} {
		for _, full := range []bool{false, true} {
			t.Run(c.name, func(t *testing.T) { checkSame(t, sampleEvent(c.s, c.x, c.n, full)) })
		}
	}
	t.Run("empty event", func(t *testing.T) { checkSame(t, &TrackEvent{}) })
	t.Run("unknown category kind refused by both", func(t *testing.T) {
		ev := sampleEvent("x", 1, 1, false)
		ev.Track.CategoryKind = 9
		checkSame(t, ev)
	})
	t.Run("year past 9999 refused by both", func(t *testing.T) {
		ev := sampleEvent("x", 1, 1, true)
		ev.Track.LastSeen = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
		checkSame(t, ev)
	})
	t.Run("zone offset", func(t *testing.T) {
		ev := sampleEvent("x", 1, 1, false)
		ev.Time = ev.Time.In(time.FixedZone("odd", 5*3600+30*60))
		ev.Track.FirstSeen = ev.Time.In(time.FixedZone("seconds", 17))
		checkSame(t, ev)
	})
	t.Run("empty slices", func(t *testing.T) {
		ev := sampleEvent("x", 1, 1, true)
		ev.Track.Protocols, ev.Track.Sensors, ev.Track.Warnings, ev.Assessment.Caps = []string{}, nil, []string{}, []string{}
		ev.Track.History, ev.Track.SensorSignals, ev.Assessment.TopAxes = []Point{}, nil, []AxisSummary{}
		checkSame(t, ev)
	})
}

func FuzzAppendJSON(f *testing.F) {
	f.Add("4CA1FA", 51.47, int64(1764133200123456789), true)
	f.Add("<&>", 1e-7, int64(-5), false)
	f.Add("\xff", 1e300, int64(0), true)
	f.Fuzz(func(t *testing.T, s string, x float64, n int64, full bool) {
		checkSame(t, sampleEvent(s, x, n, full))
	})
}

func BenchmarkAppendJSON(b *testing.B) {
	ev := sampleEvent("4CA1FA", 51.47, 1764133200123456789, true)
	ev.Track.AirData, ev.Track.Product = nil, nil
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf, _ = ev.AppendJSON(buf[:0])
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(ev)
		}
	})
}
