package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestDemoStaysOutOfTheFeeds: with --demo the tracks are marked simulated
// and aircraft.json (like Beast out and SBS, tested in their packages)
// lists none of them; with --demo-outputs it lists them, each marked
// "simulated": true (issue 34).
func TestDemoStaysOutOfTheFeeds(t *testing.T) {
	for _, include := range []bool{false, true} {
		args := []string{"--demo", "--readsb-json"}
		if include {
			args = append(args, "--demo-outputs")
		}
		base, stop := startServe(t, args...)
		var seen time.Time // the last_seen of a simulated aircraft with a position
		deadline := time.Now().Add(60 * time.Second)
		for seen.IsZero() && time.Now().Before(deadline) {
			_, body := get(t, base+"/v1/tracks")
			var page struct {
				Tracks []struct {
					TrackID   string    `json:"track_id"`
					Lat       *float64  `json:"lat"`
					LastSeen  time.Time `json:"last_seen"`
					Simulated bool      `json:"simulated"`
				} `json:"tracks"`
			}
			_ = json.Unmarshal(body, &page)
			for _, tr := range page.Tracks {
				if !tr.Simulated {
					t.Fatalf("demo track %s is not marked simulated", tr.TrackID)
				}
				if strings.HasPrefix(tr.TrackID, "adsb:") && tr.Lat != nil {
					seen = tr.LastSeen
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
		if seen.IsZero() {
			t.Fatal("no demo aircraft with a position in 60 s")
		}
		// Wait for an aircraft.json written after that fix was heard.
		var doc struct {
			Now      float64          `json:"now"`
			Aircraft []map[string]any `json:"aircraft"`
		}
		for doc.Now < float64(seen.Add(2*time.Second).UnixNano())/1e9 && time.Now().Before(deadline.Add(10*time.Second)) {
			_, body := get(t, base+"/data/aircraft.json")
			_ = json.Unmarshal(body, &doc)
			time.Sleep(200 * time.Millisecond)
		}
		stop()
		if !include && len(doc.Aircraft) > 0 {
			t.Errorf("--demo without --demo-outputs: aircraft.json lists %d simulated aircraft", len(doc.Aircraft))
		}
		if include && (len(doc.Aircraft) == 0 || doc.Aircraft[0]["simulated"] != true) {
			t.Errorf("--demo-outputs: aircraft.json %v, want the demo aircraft marked simulated", doc.Aircraft)
		}
	}
}
