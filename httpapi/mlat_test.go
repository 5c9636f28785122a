package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/fusion/zones"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/gate/board"
	"github.com/cuasd/cuasd/ingest/sensors"
)

// modesRegistry is a sensor registry with Mode S receivers taking part
// in multilateration, as cuasd serve decorates them.
type modesRegistry []sensors.Sensor

func (m modesRegistry) List() []sensors.Sensor { return m }
func (m modesRegistry) Get(id string) (sensors.Sensor, bool) {
	for _, s := range m {
		if s.ID == id {
			return s, true
		}
	}
	return sensors.Sensor{}, false
}

// TestMLATAnswersMatchOpenAPI (issue 31): a multilaterated Mode S-only
// track, an aircraft whose ADS-B claim was contradicted (on the track, its
// threat row and its signal-integrity evidence) and a Mode S receiver with
// its clock and sync state, each answer validated against the OpenAPI
// document by do.
func TestMLATAnswersMatchOpenAPI(t *testing.T) {
	s := fusion.NewStore(fusion.Config{TTL: time.Minute})
	now := time.Now().UnixNano()
	s.ApplyMLAT(fusion.MLATFix{ICAO: "3C0001", T: now, Lat: 52.001, Lon: 4.001, MLATInfo: fusion.MLATInfo{Sensors: 5, ResidualM: 13.5, ErrorM: 32.1}})
	s.ApplyMLAT(fusion.MLATFix{ICAO: "3C0002", T: now, Lat: 52.0005, Lon: 4, MLATInfo: fusion.MLATInfo{Sensors: 4, ResidualM: 9, ErrorM: 40}})
	s.SetVerification("3C0002", fusion.Verification{Status: "contradicted", ResidualM: 999.2, DistanceM: 1560.5, Sensors: 5, T: now})
	zone := gate.Geofence{ID: "z", Name: "Z", Class: gate.ClassAirport, Center: []float64{52, 4}, RadiusM: 500}
	snap := &zones.Snapshot{Geofences: []gate.Geofence{zone}, Allow: gate.NewAllowIndex(gate.AllowList{})}
	b := board.New(board.Config{Store: s, Zones: func() *zones.Snapshot { return snap }}, nil)
	b.Sweep(context.Background())
	delay := -12.5
	reg := modesRegistry{events.Sensor{ID: "beast-in-192-0-2-11", Kind: "modes", ExpectSeconds: 60, Clock: "12mhz",
		Position: &events.SensorPosition{Lat: 47.3, Lon: 8.5, AltM: 455, Source: "configured"},
		MLAT:     &events.SensorMLAT{Receptions: 1234, SyncPairs: 3, SyncGood: 2}},
		events.Sensor{ID: "beast-in-192-0-2-12", Kind: "modes", ExpectSeconds: 60, Clock: "gps",
			Position: &events.SensorPosition{Lat: 47.4, Lon: 8.6, AltM: 430, Source: "configured"},
			MLAT:     &events.SensorMLAT{Receptions: 99, DelayNS: &delay}},
		// A receiver on NATS stating its own position (Cuas-Sensor-Position).
		events.Sensor{ID: "mast-3", Kind: "modes", ExpectSeconds: 60, Clock: "gps",
			Position: &events.SensorPosition{Lat: 47.2, Lon: 8.4, AltM: 512.5, Source: "reported"},
			MLAT:     &events.SensorMLAT{Receptions: 50, SyncPairs: 0, PositionMoves: 1}}}
	h := newTestServer(t, Deps{Threats: b, Tracks: s, Sensors: reg})

	var tr events.Track
	rec := do(t, h, http.MethodGet, testBase+"/v1/tracks/adsb:3C0001", nil)
	if err := json.Unmarshal(rec.Body.Bytes(), &tr); err != nil || tr.PositionSource != "mlat" || tr.MLAT == nil || tr.MLAT.Sensors != 5 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	rec = do(t, h, http.MethodGet, testBase+"/v1/tracks/adsb:3C0002", nil)
	if err := json.Unmarshal(rec.Body.Bytes(), &tr); err != nil || tr.Verification == nil || tr.Verification.Status != "contradicted" {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	do(t, h, http.MethodGet, testBase+"/v1/tracks", nil)
	rec = do(t, h, http.MethodGet, testBase+"/v1/threats/active", nil)
	body := rec.Body.String()
	if !strings.Contains(body, `"verification":"contradicted"`) || !strings.Contains(body, "multilateration puts the transmitter 1560.5 m from its claimed position") {
		t.Errorf("threat board lacks the contradiction: %s", body)
	}
	rec = do(t, h, http.MethodGet, testBase+"/v1/sensors", nil)
	if !strings.Contains(rec.Body.String(), `"mlat":{"receptions":1234,"sync_pairs":3,"sync_good":2,"position_moves":0}`) ||
		!strings.Contains(rec.Body.String(), `"mlat":{"receptions":99,"sync_pairs":0,"sync_good":0,"delay_ns":-12.5,"position_moves":0}`) ||
		!strings.Contains(rec.Body.String(), `"source":"reported"},`) || !strings.Contains(rec.Body.String(), `"position_moves":1}`) {
		t.Errorf("sensors: %s", rec.Body)
	}
	do(t, h, http.MethodGet, testBase+"/v1/sensors/beast-in-192-0-2-11", nil)
	do(t, h, http.MethodGet, testBase+"/v1/sensors/beast-in-192-0-2-12", nil)
	do(t, h, http.MethodGet, testBase+"/v1/sensors/mast-3", nil)
}
