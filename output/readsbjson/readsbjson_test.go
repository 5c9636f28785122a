package readsbjson

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/internal/testcapture"
)

func ptr[T any](v T) *T { return &v }

var t0 = time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)

func aircraftTrack() events.Track {
	return events.Track{
		TrackID: "adsb:4CA1FA", Protocols: []string{"adsb"}, ICAO: "4CA1FA", Callsign: "RYR1AB",
		Category: "A3", Lat: ptr(52.1), Lon: ptr(-6.25), AltM: ptr(10668.0), AltKind: "baro",
		SpeedMps: ptr(231.5), HeadingDeg: ptr(93.4), VRateMps: ptr(-5.08), HAccuracyM: ptr(92.6),
		Squawk: "7700", Emergency: "general emergency", LastSeen: t0.Add(-2 * time.Second),
		PositionTime: ptr(t0.Add(-3 * time.Second)), Observations: 412,
	}
}

func decodeEntry(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return m
}

func TestAppendAircraftUnits(t *testing.T) {
	tr := aircraftTrack()
	m := decodeEntry(t, AppendAircraft(nil, &tr, t0))
	want := map[string]any{
		"hex": "4ca1fa", "type": "adsb_icao", "flight": "RYR1AB  ", "alt_baro": 35000.0, "gs": 450.0,
		"track": 93.4, "baro_rate": -1000.0, "squawk": "7700", "emergency": "general", "category": "A3",
		"lat": 52.1, "lon": -6.25, "nac_p": 8.0, "seen_pos": 3.0, "seen": 2.0, "messages": 412.0,
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v (%T), want %v", k, m[k], m[k], v)
		}
	}
	if _, ok := m["alt_geom"]; ok {
		t.Error("a barometric altitude also written as alt_geom")
	}
}

// TestMLATAircraft: a multilaterated aircraft is readsb's type "mlat" with
// "mlat":["lat","lon"], as readsb writes one (issue 31); a broadcast
// position keeps an empty list.
func TestMLATAircraft(t *testing.T) {
	tr := aircraftTrack()
	tr.PositionSource = "mlat"
	m := decodeEntry(t, AppendAircraft(nil, &tr, t0))
	if m["type"] != "mlat" || fmt.Sprint(m["mlat"]) != "[lat lon]" || m["lat"] != 52.1 {
		t.Errorf("type %v, mlat %v, lat %v", m["type"], m["mlat"], m["lat"])
	}
	tr.PositionSource = "broadcast"
	if m := decodeEntry(t, AppendAircraft(nil, &tr, t0)); m["type"] != "adsb_icao" || fmt.Sprint(m["mlat"]) != "[]" {
		t.Errorf("broadcast: type %v, mlat %v", m["type"], m["mlat"])
	}
}

// TestNavFromCommB: the selected altitude and pressure setting an
// aircraft's Comm-B replies gave (SI on the track) are readsb's
// nav_altitude_mcp in feet and nav_qnh in hPa.
func TestNavFromCommB(t *testing.T) {
	tr := aircraftTrack()
	tr.AirData = &events.AirData{SelectedAltM: ptr(10000 * 0.3048), BaroSettingHPa: ptr(1013.2)}
	m := decodeEntry(t, AppendAircraft(nil, &tr, t0))
	if m["nav_altitude_mcp"] != 10000.0 || m["nav_qnh"] != 1013.2 {
		t.Fatalf("nav_altitude_mcp %v, nav_qnh %v", m["nav_altitude_mcp"], m["nav_qnh"])
	}
	tr.AirData = nil
	if m := decodeEntry(t, AppendAircraft(nil, &tr, t0)); m["nav_qnh"] != nil {
		t.Fatal("nav_qnh without Comm-B")
	}
}

func TestDroneEntry(t *testing.T) {
	d := events.Track{TrackID: "rid:1581F5FJD228400A", UASID: "1581F5FJD228400A", Lat: ptr(1.0), Lon: ptr(2.0),
		AltM: ptr(120.0), AltKind: "geo", LastSeen: t0, Observations: 3}
	m := decodeEntry(t, AppendAircraft(nil, &d, t0))
	h, _ := m["hex"].(string)
	if len(h) != 7 || h[0] != '~' || h != Hex(&d) || m["type"] != "other" || m["flight"] != "1581F5FJD228400A" ||
		m["category"] != "B6" || m["alt_geom"] != 394.0 {
		t.Fatalf("drone entry %v", m)
	}
	other := events.Track{TrackID: "rid:1581F5FJD228400B"}
	if Hex(&other) == h {
		t.Error("two drones share a hex")
	}
	na := events.Track{TrackID: "adsb:~1a2b3c"}
	if Hex(&na) != "~1a2b3c" {
		t.Errorf("non-ICAO hex %q", Hex(&na))
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("RYR1AB")
	f.Add("a\"b\\c\x01\xff")
	f.Fuzz(func(t *testing.T, s string) {
		var got string
		if err := json.Unmarshal(appendString(nil, s), &got); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
	})
}

func event(typ string, tr events.Track) []byte {
	b, _ := json.Marshal(events.TrackEvent{Header: events.Header{V: events.Version, Type: typ, Time: t0}, Track: tr})
	return b
}

func TestWriterFilesHistoryAndStats(t *testing.T) {
	dir := t.TempDir()
	w, err := New(Config{Dir: dir, Drones: false, Lat: ptr(59.9), Lon: ptr(30.3), Version: "test", HistoryEvery: time.Minute, HistoryLen: 2})
	if err != nil {
		t.Fatal(err)
	}
	tr := aircraftTrack()
	tr.Observations = 10
	w.handle(event(events.TypeTrackUpdate, tr), t0)
	tr.Observations, tr.Lat = 25, ptr(52.2)
	w.handle(event(events.TypeTrackUpdate, tr), t0)
	w.handle(event(events.TypeTrackUpdate, events.Track{TrackID: "rid:X", Lat: ptr(1.0), Lon: ptr(1.0)}), t0) // drones off
	if err := w.Flush(t0); err != nil {
		t.Fatal(err)
	}
	var ac struct {
		Now      float64          `json:"now"`
		Messages uint64           `json:"messages"`
		Aircraft []map[string]any `json:"aircraft"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "aircraft.json"))
	if err != nil || json.Unmarshal(b, &ac) != nil {
		t.Fatalf("aircraft.json: %v\n%s", err, b)
	}
	if len(ac.Aircraft) != 1 || ac.Messages != 25 || ac.Now != float64(t0.Unix()) {
		t.Fatalf("aircraft.json %+v", ac)
	}
	var rcv map[string]any
	b, _ = os.ReadFile(filepath.Join(dir, "receiver.json"))
	if json.Unmarshal(b, &rcv) != nil || rcv["lat"] != 59.9 || rcv["history"] != 1.0 || rcv["refresh"] != 1000.0 {
		t.Fatalf("receiver.json %s", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "history_0.json")); err != nil {
		t.Fatal(err)
	}
	// Two more minutes: history rolls over its 2 files; the stats have a
	// complete minute with the 25 messages and 2 positions.
	for i := 1; i <= 2; i++ {
		if err := w.Flush(t0.Add(time.Duration(i) * time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	names := map[string]bool{}
	for _, e := range entries {
		names[e.Name()] = true
	}
	if !names["history_1.json"] || names["history_2.json"] || len(names) != 5 {
		t.Fatalf("files %v (temporary files must not remain)", names)
	}
	var st map[string]map[string]any
	b, _ = os.ReadFile(filepath.Join(dir, "stats.json"))
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("stats.json: %v\n%s", err, b)
	}
	if st["total"]["messages"] != 25.0 || st["last5min"]["messages"] != 25.0 || st["total"]["position_count_total"] != 2.0 ||
		st["latest"]["messages"] != 0.0 {
		t.Fatalf("stats.json %s", b)
	}
	w.handle(event(events.TypeTrackLost, tr), t0)
	_ = w.Flush(t0.Add(3 * time.Minute))
	if d, _ := w.Document("aircraft.json"); len(decodeAircraft(t, d)) != 0 {
		t.Fatalf("lost track still listed: %s", d)
	}
}

func decodeAircraft(t *testing.T, d []byte) []map[string]any {
	t.Helper()
	var ac struct {
		Aircraft []map[string]any `json:"aircraft"`
	}
	if err := json.Unmarshal(d, &ac); err != nil {
		t.Fatal(err)
	}
	return ac.Aircraft
}

func TestStaleTracksExpire(t *testing.T) {
	w, _ := New(Config{Drones: true})
	w.handle(event(events.TypeTrackUpdate, events.Track{TrackID: "mav:1-1@udp", LastSeen: t0}), t0)
	_ = w.Flush(t0.Add(time.Second))
	if d, _ := w.Document("aircraft.json"); len(decodeAircraft(t, d)) != 1 {
		t.Fatalf("drone not listed: %s", d)
	}
	_ = w.Flush(t0.Add(staleAfter + time.Second))
	if d, _ := w.Document("aircraft.json"); len(decodeAircraft(t, d)) != 0 {
		t.Fatalf("a track silent past the keep-alive is still listed: %s", d)
	}
}

func BenchmarkAircraftJSON(b *testing.B) {
	// 500 tracks, a busy receiver's aircraft.json.
	w, _ := New(Config{Drones: true})
	for i := 0; i < 500; i++ {
		tr := aircraftTrack()
		tr.TrackID, tr.ICAO = fmt.Sprintf("adsb:%06X", i), fmt.Sprintf("%06X", i)
		w.handle(event(events.TypeTrackUpdate, tr), t0)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.mu.Lock()
		_ = w.aircraft(t0)
		w.mu.Unlock()
	}
}

func BenchmarkAppendAircraft(b *testing.B) {
	tr := aircraftTrack()
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = AppendAircraft(buf[:0], &tr, t0)
	}
}

func TestFrameCounts(t *testing.T) {
	w, _ := New(Config{Frames: true})
	df17, _ := hex.DecodeString("8D4CA1FA58C382D690C8AC000000") // 4CA1FA, airborne position
	df17 = testcapture.WithParity(df17, 0)
	bad := bytes.Clone(df17)
	bad[6] ^= 0x10
	df11 := testcapture.WithParity([]byte{0x5d, 0x4c, 0xa1, 0xfa, 0, 0, 0}, 0)
	df4 := testcapture.WithParity([]byte{0x20, 0x00, 0x0f, 0x10, 0, 0, 0}, 0x4ca1fa)
	body := bus.AppendBeast(nil, '1', 1, 255, []byte{1, 2}) // Mode A/C: no address, not counted
	body = bus.AppendBeast(body, '2', 2, 255, df4)          // before any checked frame: not counted
	body = bus.AppendBeast(body, '3', 3, 128, df17)
	body = bus.AppendBeast(body, '3', 4, 128, bad)
	body = bus.AppendBeast(body, '2', 5, 128, df11)
	body = bus.AppendBeast(body, '2', 6, 128, df4)
	w.frames.add(&nats.Msg{Data: body, Header: nats.Header{bus.HeaderFraming: {bus.FramingBeast}}}, t0.UnixNano())
	tr := aircraftTrack()
	w.handle(event(events.TypeTrackUpdate, tr), t0)
	_ = w.Flush(t0)
	d, _ := w.Document("aircraft.json")
	ac := decodeAircraft(t, d)
	if len(ac) != 1 || ac[0]["messages"] != 3.0 || ac[0]["rssi"] != -6.0 {
		t.Fatalf("aircraft %v, want 3 messages at -6.0 dBFS", ac)
	}
	var top struct{ Messages float64 }
	_ = json.Unmarshal(d, &top)
	if top.Messages != 3 {
		t.Fatalf("total messages %v, want 3 (the frames, not the track's observations)", top.Messages)
	}
}

// frameBatch is one receiver batch of 512 frames (DF17 and DF11 of one
// aircraft), and its body.
func frameBatch() (*nats.Msg, []byte) {
	df17, _ := hex.DecodeString("8D4CA1FA58C382D690C8AC000000")
	df17 = testcapture.WithParity(df17, 0)
	df11 := testcapture.WithParity([]byte{0x5d, 0x4c, 0xa1, 0xfa, 0, 0, 0}, 0)
	var body []byte
	for i := 0; i < 256; i++ {
		body = bus.AppendBeast(body, '3', 1+uint64(i)*12000, 100, df17)
		body = bus.AppendBeast(body, '2', 1+uint64(i)*12000+500, 100, df11)
	}
	return &nats.Msg{Data: body, Header: nats.Header{bus.HeaderFraming: {bus.FramingBeast}}}, body
}

// BenchmarkFrameCount counts receiver batches of 512 frames, each the
// next 3 s of the receiver's clock (the same frames again would be exact
// duplicates, not counted).
func BenchmarkFrameCount(b *testing.B) {
	m, body := frameBatch()
	var c frameCounter
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		testcapture.Advance(body, 256*12000)
		b.StartTimer()
		c.add(m, 1)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/512, "ns/frame")
	if c.totalMessages() != uint64(b.N)*512 {
		b.Fatalf("%d messages counted of %d frames", c.totalMessages(), b.N*512)
	}
}

// TestSimulatedTracksMarkedOnlyWhenAsked: a simulated track (issue 34) is
// left out of aircraft.json, unless Config.Simulated (--demo-outputs),
// where it is listed with "simulated": true; a received one is never
// marked.
func TestSimulatedTracksMarkedOnlyWhenAsked(t *testing.T) {
	for _, include := range []bool{false, true} {
		w, err := New(Config{Simulated: include})
		if err != nil {
			t.Fatal(err)
		}
		sim := aircraftTrack()
		sim.TrackID, sim.ICAO, sim.Simulated = "adsb:406B90", "406B90", true
		w.handle(event(events.TypeTrackUpdate, sim), t0)
		real := aircraftTrack()
		w.handle(event(events.TypeTrackUpdate, real), t0)
		if err := w.Flush(t0); err != nil {
			t.Fatal(err)
		}
		doc, _ := w.Document("aircraft.json")
		var ac struct {
			Aircraft []map[string]any `json:"aircraft"`
		}
		if err := json.Unmarshal(doc, &ac); err != nil {
			t.Fatal(err)
		}
		marked := map[string]any{}
		for _, a := range ac.Aircraft {
			marked[a["hex"].(string)] = a["simulated"]
		}
		_, listed := marked[strings.ToLower(sim.ICAO)]
		if listed != include || marked["4ca1fa"] != nil || include && marked[strings.ToLower(sim.ICAO)] != true {
			t.Errorf("include=%v: aircraft %v (hex → simulated)", include, marked)
		}
	}
}
