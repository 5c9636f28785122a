package fusion

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/events/eventstest"
)

// TestApplyMLATMakesModeSOnlyTrack: a multilaterated fix of an aircraft
// with no track makes one, positioned, with position_source mlat and its
// quality, valid against the event schema; a fresh ADS-B position is not
// replaced by a later fix, an old one is; a verdict lands on the track.
func TestApplyMLATMakesModeSOnlyTrack(t *testing.T) {
	now := time.Unix(1_764_000_000, 0)
	s := NewStore(Config{Now: func() time.Time { return now }})
	at := now.UnixNano()
	if !s.ApplyMLAT(MLATFix{ICAO: "3C6586", T: at, Lat: 48.1, Lon: 9.2, MLATInfo: MLATInfo{Sensors: 5, ResidualM: 12.3, ErrorM: 40}}) {
		t.Fatal("fix refused")
	}
	tr, ok := s.Get("adsb:3C6586")
	if !ok || !tr.HasPosition || tr.Lat != 48.1 || tr.PositionMethod != PositionMLAT || tr.MLAT == nil || tr.MLAT.Sensors != 5 {
		t.Fatalf("track %+v (found %v)", tr, ok)
	}
	v := tr.View(true)
	if v.PositionSource != "mlat" || v.MLAT == nil || v.MLAT.ErrorM != 40 {
		t.Fatalf("view: source %q, mlat %+v", v.PositionSource, v.MLAT)
	}
	data, _ := json.Marshal(v)
	eventstest.Validate(t, "cuas.track.adsb.3C6586", wrapTrackEvent(t, data))

	// An ADS-B track with a fresh position keeps it.
	o := decode.Observation{Protocol: decode.ADSB, Key: "4CA1FA", ICAO: "4CA1FA", Sensor: "rx1", TimeUnixNano: at,
		HasPosition: true, Lat: 50, Lon: 8, PositionMethod: "sbs"}
	s.Apply(&o)
	if s.ApplyMLAT(MLATFix{ICAO: "4CA1FA", T: at + 1e9, Lat: 50.001, Lon: 8, MLATInfo: MLATInfo{Sensors: 4}}) {
		t.Error("a fix replaced an ADS-B position 1 s old")
	}
	if !s.ApplyMLAT(MLATFix{ICAO: "4CA1FA", T: at + 20e9, Lat: 50.01, Lon: 8, MLATInfo: MLATInfo{Sensors: 4}}) {
		t.Error("a fix did not replace an ADS-B position 20 s old")
	}
	if !s.SetVerification("4CA1FA", Verification{Status: "contradicted", ResidualM: 400, DistanceM: 1200, Sensors: 5, T: at}) {
		t.Fatal("verdict refused")
	}
	tr, _ = s.Get("adsb:4CA1FA")
	if tr.Verification == nil || tr.Verification.Status != "contradicted" || tr.View(false).Verification.DistanceM != 1200 {
		t.Fatalf("verification %+v", tr.Verification)
	}
	if s.SetVerification("000001", Verification{Status: "verified"}) {
		t.Error("a verdict for an aircraft with no track was taken")
	}
}

// wrapTrackEvent makes a track.update event around a track's JSON.
func wrapTrackEvent(t *testing.T, track []byte) []byte {
	t.Helper()
	return []byte(`{"v":1,"type":"track.update","time":"2026-11-28T00:00:00Z","instance":"a","track":` + string(track) + `}`)
}
