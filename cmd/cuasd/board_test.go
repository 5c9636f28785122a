package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode/remoteid"
)

func ridPack(t *testing.T, uas string, lat, lon float64) string {
	t.Helper()
	var basic, loc [remoteid.MessageSize]byte
	if err := remoteid.EncodeBasicID(&basic, 2, &remoteid.BasicIDData{IDType: 1, UAType: 2, UASID: []byte(uas)}); err != nil {
		t.Fatal(err)
	}
	if err := remoteid.EncodeLocation(&loc, 2, &remoteid.LocationData{Status: 2, Direction: 180, SpeedHorizontal: 5,
		Latitude: lat, Longitude: lon, AltitudeBaro: 60, AltitudeGeo: 100, Height: 60, Timestamp: 600}); err != nil {
		t.Fatal(err)
	}
	p, err := remoteid.AppendPack(nil, 2, basic, loc)
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(p)
}

func put(t *testing.T, url string, body any) int {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("PUT", url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// boardThreat is one entry of GET /v1/threats/active.
type boardThreat struct {
	TrackID      string  `json:"track_id"`
	Breach       bool    `json:"breach"`
	Decision     string  `json:"decision"`
	Lambda       float64 `json:"lambda"`
	Geofence     string  `json:"geofence"`
	ReceiptIndex *int64  `json:"receipt_index"`
	Axes         []any   `json:"axes"`
	HumanDecided bool    `json:"human_decision_required"`
}

type boardAnswer struct {
	Threats []boardThreat `json:"threats"`
}

// TestDroneEntersZoneBoardReceiptsExpiry: a drone broadcasting Remote ID
// flies into a geofence; it appears on the threat board in breach with a
// receipt that the ledger serves, and leaves the board when it falls silent.
func TestDroneEntersZoneBoardReceiptsExpiry(t *testing.T) {
	base, stop := startServe(t, "--track-ttl", "3s", "--eval-interval", "100ms")
	defer stop()
	if code := put(t, base+"/v1/geofences/prison", map[string]any{"id": "prison", "name": "HMP Test", "class": "prison",
		"center": []float64{51.5, -0.1}, "radius_m": 400}); code != 201 && code != 200 {
		t.Fatalf("PUT geofence: %d", code)
	}
	// From 1.2 km north to the centre, one fix per 200 ms (6 m/s claimed
	// path is well within plausibility at these time steps).
	for i := 0; i <= 12; i++ {
		lat := 51.5 + 0.0108*(1-float64(i)/12)
		resp, body := postJSON(t, base+"/v1/ingest/remoteid", map[string]any{"frames": []string{ridPack(t, "ZZ9X7INTRUDER01", lat, -0.1)}, "sensor": "rx1"})
		if resp.StatusCode != 202 {
			t.Fatalf("ingest: %d %s", resp.StatusCode, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	var entry *boardThreat
	deadline := time.Now().Add(5 * time.Second)
	for entry == nil || entry.ReceiptIndex == nil {
		if time.Now().After(deadline) {
			t.Fatalf("no breaching board entry with a receipt: %+v", entry)
		}
		_, body := get(t, base+"/v1/threats/active")
		var b boardAnswer
		_ = json.Unmarshal(body, &b)
		for i := range b.Threats {
			if b.Threats[i].TrackID == "rid:ZZ9X7INTRUDER01" && b.Threats[i].Breach {
				e := b.Threats[i]
				entry = &e
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if entry.Geofence != "prison" || len(entry.Axes) != 13 || !entry.HumanDecided || entry.Decision == "monitor" {
		t.Fatalf("entry %+v", entry)
	}
	resp, body := get(t, base+"/v1/receipt/"+strconv.FormatInt(*entry.ReceiptIndex, 10))
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("inclusion_proof")) {
		t.Fatalf("receipt %d: %d %s", *entry.ReceiptIndex, resp.StatusCode, body)
	}
	// Silence: the track expires and leaves the board.
	deadline = time.Now().Add(8 * time.Second)
	for {
		_, body := get(t, base+"/v1/threats/active")
		if !bytes.Contains(body, []byte("ZZ9X7INTRUDER01")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the entry did not leave the board after its track's TTL")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
