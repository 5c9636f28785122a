package fusion

import (
	"encoding/json"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/internal/testshared"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTestStore(c *clock) *Store {
	return NewStore(Config{TTL: time.Minute, Now: c.now})
}

// adsbObs turns a frame into the observation the pipeline would publish.
func adsbObs(t *testing.T, hexFrame string, recv int64) decode.Observation {
	t.Helper()
	var f [14]byte
	n, err := adsb.ParseHex(&f, hexFrame)
	if err != nil {
		t.Fatal(err)
	}
	var m adsb.Message
	if err := adsb.Decode(f[:n], &m); err != nil {
		t.Fatal(err)
	}
	o := decode.Observation{Protocol: decode.ADSB, Key: strings.ToUpper(hexFrame[2:8]), ICAO: strings.ToUpper(hexFrame[2:8]), TimeUnixNano: recv}
	if m.HasCPR {
		o.HasCPR, o.CPROdd, o.CPRLat, o.CPRLon = true, m.CPR.Odd, m.CPR.Lat, m.CPR.Lon
		o.CPRSurface = m.Kind == adsb.KindSurfacePosition
	}
	return o
}

// TestCPRPairsFromReferenceVectors resolves every airborne reference pair
// of ../shared/vectors/adsb.json through the store's pairing logic.
func TestCPRPairsFromReferenceVectors(t *testing.T) {
	raw, err := os.ReadFile(testshared.Path(t, "vectors", "adsb.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vecs []struct {
		ID, Kind, Newest, Note string
		Even, Odd              json.RawMessage
		Expect                 struct{ Lat, Lon float64 }
	}
	if err := json.Unmarshal(raw, &vecs); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range vecs {
		var even, odd string
		if v.Kind != "cpr_global_airborne" || json.Unmarshal(v.Even, &even) != nil || json.Unmarshal(v.Odd, &odd) != nil {
			continue
		}
		if strings.Contains(v.Note, "hours apart") {
			continue
		}
		c := &clock{time.Unix(1_700_000_000, 0)}
		s := newTestStore(c)
		older, newer := odd, even
		if v.Newest == "odd" {
			older, newer = even, odd
		}
		t0 := c.t.UnixNano()
		o1, o2 := adsbObs(t, older, t0), adsbObs(t, newer, t0+int64(time.Second))
		s.Apply(&o1)
		up, _ := s.Apply(&o2)
		tr, ok := s.Get("adsb:" + o1.Key)
		if !ok || !up.PositionNew || !tr.HasPosition {
			t.Errorf("%s: no position", v.ID)
			continue
		}
		if math.Abs(tr.Lat-v.Expect.Lat) > 0.001 || math.Abs(tr.Lon-v.Expect.Lon) > 0.001 || tr.PositionMethod != "cpr_global" {
			t.Errorf("%s: %.5f,%.5f (%s), reference %.5f,%.5f", v.ID, tr.Lat, tr.Lon, tr.PositionMethod, v.Expect.Lat, v.Expect.Lon)
		}
		n++
	}
	if n < 5 {
		t.Fatalf("only %d pairs tested", n)
	}
}

func TestCPRPairTooFarApartInTime(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	t0 := c.t.UnixNano()
	a := adsbObs(t, "8D40621D58C382D690C8AC2863A7", t0)
	b := adsbObs(t, "8D40621D58C386435CC412692AD6", t0+int64(11*time.Second))
	s.Apply(&a)
	s.Apply(&b)
	if tr, _ := s.Get("adsb:40621D"); tr.HasPosition {
		t.Fatalf("a pair 11 s apart resolved to %.4f,%.4f", tr.Lat, tr.Lon)
	}
}

func ridObs(uas string, lat, lon float64, recv int64) decode.Observation {
	return decode.Observation{Protocol: decode.RemoteID, Key: uas, UASID: uas, TimeUnixNano: recv,
		HasPosition: true, Lat: lat, Lon: lon, PositionMethod: "remoteid", Sensor: "s1"}
}

func TestImplausibleJumpRejected(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	t0 := c.t.UnixNano()
	a := ridObs("X", 52.0, 4.0, t0)
	b := ridObs("X", 52.5, 4.0, t0+int64(time.Second)) // 55 km in 1 s
	c2 := ridObs("X", 52.0001, 4.0, t0+int64(2*time.Second))
	s.Apply(&a)
	s.Apply(&b)
	s.Apply(&c2)
	tr, _ := s.Get("rid:X")
	if tr.Lat != 52.0001 || tr.RejectedPositions != 1 || len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], "implausible") {
		t.Fatalf("track %+v", tr)
	}
}

func TestModeSRepliesOnlyUpdateKnownAircraft(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	reply := decode.Observation{Protocol: decode.ADSB, Key: "ABCDEF", ICAO: "ABCDEF", ModeSReply: true, HasAltitude: true, AltM: 1000}
	if _, ok := s.Apply(&reply); ok || s.Len() != 0 {
		t.Fatal("a Mode S reply created a track")
	}
	squitter := decode.Observation{Protocol: decode.ADSB, Key: "ABCDEF", ICAO: "ABCDEF", Callsign: "TEST1"}
	s.Apply(&squitter)
	if _, ok := s.Apply(&reply); !ok {
		t.Fatal("a Mode S reply did not update a known aircraft")
	}
	if tr, _ := s.Get("adsb:ABCDEF"); !tr.HasAltitude || tr.AltM != 1000 {
		t.Fatalf("track %+v", tr)
	}
	if s.Dropped()["mode_s_unknown_aircraft"] != 1 {
		t.Fatal("drop not counted")
	}
}

// TestRemoteIDAndMAVLinkMerge: a MAVLink vehicle that carries Remote ID
// (OPEN_DRONE_ID_BASIC_ID) is the same object as the broadcast.
func TestRemoteIDAndMAVLinkMerge(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	t0 := c.t.UnixNano()
	r := ridObs("1581F5FKD229400B", 52.0, 4.0, t0)
	m := decode.Observation{Protocol: decode.MAVLink, Key: "1-1@udp", UASID: "1581F5FKD229400B", SystemID: 1, ComponentID: 1,
		TimeUnixNano: t0 + 1, HasAltitude: true, AltM: 50, Sensor: "udp"}
	s.Apply(&r)
	s.Apply(&m)
	m2 := decode.Observation{Protocol: decode.MAVLink, Key: "1-1@udp", TimeUnixNano: t0 + 2, HasVelocity: true, SpeedMps: 5}
	s.Apply(&m2)
	if s.Len() != 1 {
		t.Fatalf("%d tracks, want 1 merged", s.Len())
	}
	tr, ok := s.Get("rid:1581F5FKD229400B")
	if !ok || len(tr.Protocols) != 2 || !tr.HasVelocity || len(tr.Sensors) != 2 {
		t.Fatalf("merged track %+v", tr)
	}
	if alias, ok := s.Get("mav:1-1@udp"); !ok || alias.ID != tr.ID {
		t.Fatal("the MAVLink key does not reach the merged track")
	}
}

func TestExpiry(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	o := ridObs("A", 1, 1, c.t.UnixNano())
	s.Apply(&o)
	c.t = c.t.Add(59 * time.Second)
	if gone := s.Expire(); len(gone) != 0 {
		t.Fatal("expired early")
	}
	c.t = c.t.Add(2 * time.Second)
	if gone := s.Expire(); len(gone) != 1 || s.Len() != 0 {
		t.Fatal("did not expire after the TTL")
	}
	// Replay of an old capture: receive times far in the past still make
	// tracks, and the data clock expires them as the capture moves on.
	old := time.Date(2018, 4, 3, 19, 0, 0, 0, time.UTC).UnixNano()
	a, b := ridObs("OLD", 1, 1, old), ridObs("NEW", 1, 1.001, old+int64(2*time.Minute))
	a.Sensor, b.Sensor = "replay", "replay"
	s.Apply(&a)
	if _, ok := s.Get("rid:OLD"); !ok {
		t.Fatal("a replayed track is not shown")
	}
	s.Apply(&b)
	if _, ok := s.Get("rid:OLD"); ok {
		t.Fatal("the data clock did not expire the old track")
	}
}

func TestHistoryBounded(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	for i := 0; i < 3*historyLen; i++ {
		o := ridObs("H", 52+float64(i)*1e-4, 4, c.t.UnixNano()+int64(i)*int64(time.Second))
		s.Apply(&o)
	}
	tr, _ := s.Get("rid:H")
	if len(tr.History) != historyLen || tr.History[historyLen-1].Lat != 52+float64(3*historyLen-1)*1e-4 ||
		tr.History[0].T >= tr.History[1].T {
		t.Fatalf("history: %d points", len(tr.History))
	}
}

// BenchmarkStoreApply measures the fusion update of a realistic mix and
// reports the memory held per track.
func BenchmarkStoreApply(b *testing.B) {
	benchStoreApply(b, 0, func(o *decode.Observation) { o.Lat += 1e-6 })
}

// benchStoreApply applies observations of 10,000 Remote ID tracks from
// sensor "s" with the given signal level, reporting the heap each track
// holds, then measures updates, each changed by step.
func benchStoreApply(b *testing.B, signal float64, step func(*decode.Observation)) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	const n = 10000
	obs := make([]decode.Observation, n)
	for i := range obs {
		obs[i] = ridObs("U"+string(rune('A'+i%26))+strings.Repeat("x", 8)+itoa(i), 52+float64(i%100)*1e-3, 4+float64(i/100)*1e-3, 0)
		obs[i].Sensor, obs[i].Signal = "s", signal
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range obs {
		obs[i].TimeUnixNano = c.t.UnixNano()
		s.Apply(&obs[i])
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perTrack := float64(after.HeapAlloc-before.HeapAlloc) / n
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o := &obs[i%n]
		o.TimeUnixNano += int64(time.Millisecond)
		step(o)
		s.Apply(o)
	}
	b.ReportMetric(perTrack, "heap-B/track")
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func TestCrossProtocolDisagreement(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	t0 := c.t.UnixNano()
	r := ridObs("1581F5FKD229400B", 52.0, 4.0, t0)
	m := decode.Observation{Protocol: decode.MAVLink, Key: "1-1@udp", UASID: "1581F5FKD229400B", TimeUnixNano: t0 + 5e8,
		HasPosition: true, Lat: 52.027, Lon: 4.0, Sensor: "udp"} // 3 km north, half a second later
	s.Apply(&r)
	s.Apply(&m)
	tr, _ := s.Get("rid:1581F5FKD229400B")
	if tr.DisagreementM < 2900 || tr.DisagreementM > 3100 {
		t.Fatalf("disagreement %.0f m, want about 3 km", tr.DisagreementM)
	}
	one := ridObs("SOLO", 1, 1, t0)
	s.Apply(&one)
	if tr, _ := s.Get("rid:SOLO"); tr.DisagreementM != 0 {
		t.Fatal("a single protocol disagrees with itself")
	}
}

// TestRemoteIDTrackRekeyedWhenTheUASIDArrives: a Location heard before the
// Basic ID makes a track keyed by the transmitter; when the UAS id arrives
// the same track carries on under it, with no twin left behind.
func TestRemoteIDTrackRekeyedWhenTheUASIDArrives(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	t0 := c.t.UnixNano()
	early := decode.Observation{Protocol: decode.RemoteID, Key: "mac:AA:BB:CC:DD:EE:FF", Transmitter: "AA:BB:CC:DD:EE:FF",
		TimeUnixNano: t0, HasPosition: true, Lat: 52, Lon: 4, Sensor: "s"}
	later := ridObs("1581F5FKD229400B", 52.0001, 4, t0+int64(time.Second))
	later.Transmitter = "AA:BB:CC:DD:EE:FF"
	s.Apply(&early)
	s.Apply(&later)
	if s.Len() != 1 {
		t.Fatalf("%d tracks, want 1", s.Len())
	}
	tr, ok := s.Get("rid:1581F5FKD229400B")
	if !ok || tr.Observations != 2 || len(tr.History) != 2 {
		t.Fatalf("track %+v", tr)
	}
	if _, ok := s.Get("rid:mac:AA:BB:CC:DD:EE:FF"); !ok {
		t.Fatal("the transmitter key no longer reaches the track")
	}
}

// TestListBBox: a box holds the tracks inside it; a box whose min lon is
// greater than its max lon crosses the antimeridian (RFC 7946 §5.2).
func TestListBBox(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	for id, ll := range map[string][2]float64{"E": {0, 179.5}, "W": {1, -179.5}, "G": {2, 0}, "N": {20, 179.9}, "EDGE": {-10, 170}} {
		o := ridObs(id, ll[0], ll[1], c.t.UnixNano())
		s.Apply(&o)
	}
	for _, tc := range []struct {
		bbox [4]float64
		want string
	}{
		{[4]float64{170, -10, -170, 10}, "rid:E rid:EDGE rid:W"},
		{[4]float64{-170, -10, 170, 10}, "rid:EDGE rid:G"}, // edges are inside
		{[4]float64{179, -90, -179, 90}, "rid:E rid:N rid:W"},
		{[4]float64{-180, -90, 180, 90}, "rid:E rid:EDGE rid:G rid:N rid:W"},
		{[4]float64{179.6, -10, -179.6, 10}, ""},
	} {
		var ids []string
		for _, tr := range s.List(Filter{BBox: &tc.bbox}) {
			ids = append(ids, tr.ID)
		}
		sort.Strings(ids)
		if got := strings.Join(ids, " "); got != tc.want {
			t.Errorf("bbox %v: %q, want %q", tc.bbox, got, tc.want)
		}
	}
}

// TestSimulatedTrack: a track is simulated while every observation was of
// a simulated frame (issue 34); one received frame makes it received for
// good, so the feeds carry it.
func TestSimulatedTrack(t *testing.T) {
	c := &clock{t: time.Unix(1700000000, 0)}
	s := newTestStore(c)
	o := ridObs("SIM-1", 52.3, 4.76, c.t.UnixNano())
	o.Simulated = true
	up, _ := s.Apply(&o)
	if tr, _ := s.Get(up.TrackID); !tr.Simulated || !tr.View(false).Simulated {
		t.Fatalf("a track of simulated frames is not marked: %+v", tr.View(false))
	}
	o2 := ridObs("SIM-1", 52.3001, 4.7601, c.t.Add(time.Second).UnixNano())
	s.Apply(&o2)
	o.TimeUnixNano = c.t.Add(2 * time.Second).UnixNano()
	s.Apply(&o)
	if tr, _ := s.Get(up.TrackID); tr.Simulated {
		t.Fatal("a track with a received frame is still marked simulated")
	}
}
