package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/fusion/zones"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/gate/board"
)

func testBoard(t *testing.T) (*board.Gate, *fusion.Store) {
	t.Helper()
	s := fusion.NewStore(fusion.Config{TTL: time.Minute})
	now := time.Now().UnixNano()
	for i, lat := range []float64{52.0005, 52.05, 52.0009} {
		o := decode.Observation{Protocol: decode.RemoteID, Key: "U" + string(rune('A'+i)), UASID: "U" + string(rune('A'+i)),
			TimeUnixNano: now, HasPosition: true, Lat: lat, Lon: 4, Sensor: "s", HasAltitude: true, AltM: 50}
		s.Apply(&o)
	}
	zone := gate.Geofence{ID: "z", Name: "Z", Class: gate.ClassAirport, Center: []float64{52, 4}, RadiusM: 500}
	snap := &zones.Snapshot{Geofences: []gate.Geofence{zone}, Allow: gate.NewAllowIndex(gate.AllowList{})}
	b := board.New(board.Config{Store: s, Zones: func() *zones.Snapshot { return snap }}, nil)
	b.Sweep(context.Background())
	return b, s
}

func TestThreatsActive(t *testing.T) {
	b, s := testBoard(t)
	h := newTestServer(t, Deps{Threats: b, Tracks: s})
	rec := do(t, h, "GET", testBase+"/v1/threats/active", nil)
	var out struct {
		Threats []struct {
			TrackID string  `json:"track_id"`
			Lambda  float64 `json:"lambda"`
			Breach  bool    `json:"breach"`
			Axes    []any   `json:"axes"`
		} `json:"threats"`
		Count, Total int
		NextCursor   string `json:"next_cursor"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if out.Count != 3 || out.Total != 3 {
		t.Fatalf("count %d total %d", out.Count, out.Total)
	}
	for i := 1; i < len(out.Threats); i++ {
		if out.Threats[i-1].Lambda < out.Threats[i].Lambda {
			t.Fatal("not sorted by Λ descending")
		}
	}
	for _, th := range out.Threats {
		if len(th.Axes) != 13 {
			t.Fatalf("%s: %d axes", th.TrackID, len(th.Axes))
		}
		if (th.TrackID == "rid:UB") == th.Breach {
			t.Fatalf("%s: breach %v", th.TrackID, th.Breach)
		}
	}
	// Paging walks the whole board.
	rec = do(t, h, "GET", testBase+"/v1/threats/active?limit=2", nil)
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	if out.Count != 2 || out.NextCursor == "" {
		t.Fatalf("page 1: %s", rec.Body)
	}
	rec = do(t, h, "GET", testBase+"/v1/threats/active?limit=2&cursor="+out.NextCursor, nil)
	out.NextCursor = ""
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	if out.Count != 1 || out.NextCursor != "" {
		t.Fatalf("page 2: %s", rec.Body)
	}
	// Filters and their errors.
	for _, q := range []string{"min_lambda=2", "decision=shoot", "protocol=x", "bogus=1", "limit=0", "cursor=not!base64"} {
		t.Run(q, func(t *testing.T) {
			if rec := do(t, h, "GET", testBase+"/v1/threats/active?"+q, nil); rec.Code != 400 {
				t.Errorf("%s: %d", q, rec.Code)
			}
		})
	}
	if rec := do(t, h, "GET", testBase+"/v1/threats/active?geofence=nope", nil); !strings.Contains(rec.Body.String(), `"count":0`) {
		t.Errorf("geofence filter: %s", rec.Body)
	}
	// Tracks endpoints on the same store.
	if rec := do(t, h, "GET", testBase+"/v1/tracks?protocol=remoteid&bbox=3,51,5,53&limit=10", nil); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"count":3`) {
		t.Errorf("tracks: %d %s", rec.Code, rec.Body)
	}
	if rec := do(t, h, "GET", testBase+"/v1/tracks/rid%3AUA", nil); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"history"`) {
		t.Errorf("track by escaped id: %d %s", rec.Code, rec.Body)
	}
	// 5,51,3,53 crosses the antimeridian: everything but 3…5° east.
	if rec := do(t, h, "GET", testBase+"/v1/tracks?protocol=remoteid&bbox=5,51,3,53", nil); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"count":0`) {
		t.Errorf("tracks in a box across the antimeridian: %d %s", rec.Code, rec.Body)
	}
	for _, q := range []string{"bbox=1,2,3", "bbox=3,53,5,51", "bbox=-181,51,3,53", "protocol=foo"} {
		t.Run(q, func(t *testing.T) {
			if rec := do(t, h, "GET", testBase+"/v1/tracks?"+q, nil); rec.Code != 400 {
				t.Errorf("tracks %s: %d", q, rec.Code)
			}
		})
	}
	if rec := do(t, h, "GET", testBase+"/v1/tracks/rid:nobody", nil); rec.Code != 404 {
		t.Errorf("unknown track: %d", rec.Code)
	}
}

func TestThreatsStream(t *testing.T) {
	b, _ := testBoard(t)
	srv := httptest.NewServer(newTestServer(t, Deps{Threats: b}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+testBase+"/v1/threats/stream?min_lambda=0", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	events := 0
	for sc.Scan() && events < 2 {
		line := sc.Text()
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var board map[string]any
			if err := json.Unmarshal([]byte(data), &board); err != nil || board["count"] != float64(3) {
				t.Fatalf("event data %q", data)
			}
			events++
			b.Sweep(context.Background()) // a change pushes the next event
		}
	}
	if events < 2 {
		t.Fatalf("%d events", events)
	}
}

// TestTrackAirData: an aircraft's Comm-B reply (pyModeS's 6,0 vector,
// tests/test_bds_commb.py line 735 @ a49921bb: 42.7° magnetic, 252 kt IAS,
// Mach 0.42) shows as the track's air_data, valid against the OpenAPI
// document, once the aircraft is known from a squitter.
func TestTrackAirData(t *testing.T) {
	s := fusion.NewStore(fusion.Config{TTL: time.Minute})
	now := time.Now().UnixNano()
	sq := decode.Observation{Protocol: decode.ADSB, Key: "48507F", ICAO: "48507F", TimeUnixNano: now, Sensor: "s",
		HasAltitude: true, AltM: 5450 * 0.3048, AltKind: "baro", HasVelocity: true, SpeedMps: 260 * 0.514444, HeadingDeg: 40}
	s.Apply(&sq)
	reply := decode.Observation{Protocol: decode.ADSB, Key: "48507F", ICAO: "48507F", TimeUnixNano: now + 1, Sensor: "s",
		ModeSReply: true, HasCommB: true, CommB: 0x8F39F91A7E27C4}
	s.Apply(&reply)
	h := newTestServer(t, Deps{Tracks: s})
	rec := do(t, h, "GET", testBase+"/v1/tracks/adsb:48507F", nil)
	var out struct {
		AirData map[string]any `json:"air_data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if out.AirData["magnetic_heading_deg"] != 42.7 || out.AirData["mach"] != 0.42 || out.AirData["ias_mps"] != 129.64 {
		t.Errorf("air_data %v", out.AirData)
	}
}
