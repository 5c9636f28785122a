package cot

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/events"
)

// FuzzTrackEvent feeds arbitrary JSON to the path a sink runs on every
// track message: decode, encode the track and its operator point. Every
// document must be well-formed XML with one <event>, whatever the strings
// in the air said.
func FuzzTrackEvent(f *testing.F) {
	for _, ev := range []*events.TrackEvent{airliner(), droneAlert(), mavIntercept()} {
		b, _ := json.Marshal(ev)
		f.Add(b)
	}
	f.Add([]byte(`{"v":1,"type":"track.lost","instance":"a\"<&","track":{"track_id":"x:\u0000]]>","lat":1e308,"lon":-1e308,"callsign":"\ud800"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ev events.TrackEvent
		if json.Unmarshal(data, &ev) != nil {
			return
		}
		for _, compact := range []bool{false, true} {
			e := Encoder{Compact: compact}
			if b, ok := e.AppendTrack(nil, &ev); ok {
				wellFormed(t, b)
				// The sink's picture finds every event by its uid.
				if docUID(b) == "" {
					t.Fatalf("no uid found in %s", b)
				}
			}
			if b, ok := e.AppendOperator(nil, &ev); ok {
				wellFormed(t, b)
			}
		}
	})
}

// FuzzZoneEvent does the same for zone events (circles, polygons of any
// shape, deletions).
func FuzzZoneEvent(f *testing.F) {
	for _, ev := range []*events.ZoneEvent{circleZone(), polygonZone()} {
		b, _ := json.Marshal(ev)
		f.Add(b)
	}
	f.Add([]byte(`{"v":1,"type":"zone.upsert","zone":{"id":"p","polygon":{"type":"Polygon","coordinates":[[[1],[2,3],[4,5],[1]]]}}}`))
	f.Add([]byte(`{"v":1,"type":"zone.deleted","zone":{"id":"a<b"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ev events.ZoneEvent
		if json.Unmarshal(data, &ev) != nil {
			return
		}
		var e Encoder
		if b, ok := e.AppendZone(nil, &ev); ok {
			wellFormed(t, b)
		}
	})
}

// FuzzParseServer: any --tak-server value parses to a host:port with a
// port, or fails naming the flag; it never panics.
func FuzzParseServer(f *testing.F) {
	for _, s := range []string{"ssl://tak:8089", "tcp://[::1]:8087", "ssl://u@h:1", "tls://h:65536", "ssl://h:8089/x?y", "ssl://h:8089?protocol=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		srv, err := ParseServer(s)
		if err != nil {
			if flagOf(err) != "--tak-server" {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if srv.Host == "" || !strings.Contains(srv.Addr, ":") {
			t.Fatalf("%q parsed to %+v", s, srv)
		}
	})
}
