package readsbjson

import (
	"encoding/hex"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/worker"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/fusion"
)

// issue 21: readsb's type, nic, rc, version, nac_v, sil, sil_type,
// nav_heading and alt_baro "ground", from reference frames run through
// the pipeline's decoder and the track store, as cuasd serve does.

// pipelineEntries decodes the frames (one second apart) and returns the
// aircraft.json entry of each resulting track, by hex.
func pipelineEntries(t *testing.T, frames ...string) map[string]map[string]any {
	t.Helper()
	now := time.Unix(1_700_000_000, 0)
	s := fusion.NewStore(fusion.Config{TTL: time.Hour, Now: func() time.Time { return now }})
	d := &worker.ADSB{}
	for i, h := range frames {
		f, err := hex.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		out, err := d.Decode(f, worker.Meta{}, nil)
		if err != nil || len(out) != 1 {
			t.Fatalf("%s: %v", h, err)
		}
		o := &out[0]
		o.Protocol, o.Sensor, o.TimeUnixNano = decode.ADSB, "s", now.UnixNano()+int64(i)*int64(time.Second)
		s.Apply(o)
	}
	entries := map[string]map[string]any{}
	for _, tr := range s.List(fusion.Filter{}) {
		v := tr.View(false)
		m := decodeEntry(t, AppendAircraft(nil, &v, now.Add(time.Duration(len(frames))*time.Second)))
		entries[m["hex"].(string)] = m
	}
	return entries
}

func TestADSBFieldsFromVectors(t *testing.T) {
	entries := pipelineEntries(t,
		// pyModeS' TC 11 pair of 40058B, a version 0 aircraft: readsb's
		// nic 8 and sil 2 for such a position (vector
		// adsbx-1bit-fixed-a48e3a, dump1090 output), Rc < 0.1 NM, version
		// 0 assumed; altitude 39000 ft (pyModeS test_adsb).
		"8D40058B58C901375147EFD09357", "8D40058B58C904A87F402D3B8C59",
		// adsb_deku testing04: operational status v2, SIL 3 per flight
		// hour; no position: readsb's mode_s.
		"8dacc040f8210002004ab8569c35",
		// adsb_deku target state 14016: selected heading 229.92188, SIL 3.
		"8da08f94ea1b785e8f3c088ab467",
		// adsb_deku testing_df_18: ADS-R (CF 6) surface operational
		// status v2, NACv 1, SIL 3; an ADS-R target has no ADS-B version.
		"96A4D01FF900210600493075E234",
		// "The 1090 MHz Riddle": EHAM surface positions, DF17 CA 4.
		"8C4841753AAB238733C8CD4020B1", "8C4841753A8A35323FAEBDAC702D",
	)
	for hex, want := range map[string]map[string]any{
		"40058b": {"type": "adsb_icao", "nic": 8.0, "rc": 186.0, "version": 0.0, "sil": 2.0, "sil_type": "unknown", "alt_baro": 39000.0},
		"acc040": {"type": "mode_s", "version": 2.0, "sil": 3.0, "sil_type": "perhour", "nic": nil, "nac_v": nil},
		"a08f94": {"type": "mode_s", "nav_heading": 229.92, "sil": 3.0, "sil_type": "unknown", "version": 0.0},
		"a4d01f": {"type": "adsr_icao", "nac_v": 1.0, "sil": 3.0, "sil_type": "perhour", "version": nil},
		"484175": {"type": "mode_s", "alt_baro": "ground"},
	} {
		m, ok := entries[hex]
		if !ok {
			t.Errorf("%s: no entry (have %d)", hex, len(entries))
			continue
		}
		for k, v := range want {
			if m[k] != v {
				t.Errorf("%s: %s = %v, want %v", hex, k, m[k], v)
			}
		}
	}
}

// TestGroundHidesBaroAltitude: on the ground readsb writes "ground" for
// alt_baro, never a number; a geometric altitude stays.
func TestGroundHidesBaroAltitude(t *testing.T) {
	tr := aircraftTrack()
	tr.ADSB = &events.ADSBInfo{AddressType: "adsb_icao", AirGround: "ground"}
	m := decodeEntry(t, AppendAircraft(nil, &tr, t0))
	if m["alt_baro"] != "ground" || m["alt_geom"] != nil {
		t.Fatalf("alt_baro %v, alt_geom %v", m["alt_baro"], m["alt_geom"])
	}
	tr.AltKind = "geo"
	if m := decodeEntry(t, AppendAircraft(nil, &tr, t0)); m["alt_baro"] != "ground" || m["alt_geom"] != 35000.0 {
		t.Fatalf("geometric: alt_baro %v, alt_geom %v", m["alt_baro"], m["alt_geom"])
	}
	tr.ADSB.AirGround = "airborne"
	if m := decodeEntry(t, AppendAircraft(nil, &tr, t0)); m["alt_baro"] != nil {
		t.Fatalf("airborne, geometric altitude: alt_baro %v", m["alt_baro"])
	}
}

// TestTISBHasNoVersion: readsb writes the ADS-B version only; a TIS-B
// target's is kept apart.
func TestTISBHasNoVersion(t *testing.T) {
	tr := aircraftTrack()
	tr.ADSB = &events.ADSBInfo{AddressType: "tisb_icao", Version: ptr(2)}
	if m := decodeEntry(t, AppendAircraft(nil, &tr, t0)); m["type"] != "tisb_icao" || m["version"] != nil {
		t.Fatalf("type %v, version %v", m["type"], m["version"])
	}
}
