package remoteid

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode"
)

// The expected values are those the vectors give for pack_5_msgs.
func TestFrameObservationPack(t *testing.T) {
	var f Frame
	if err := DecodeCarrier(CarrierAuto, mustHex(t, findVector(t, "wifi_beacon_pack5").Hex), &f); err != nil {
		t.Fatal(err)
	}
	o := FrameObservation(&f, 1234, "s1")
	if o.Protocol != decode.RemoteID || o.Key != "1596F350A1B2C3D4E5" || o.UASID != o.Key || o.Sensor != "s1" || o.TimeUnixNano != 1234 {
		t.Errorf("identity: %+v", o)
	}
	if o.OperatorID != "FIN87astrdge12k8" || o.Category != "helicopter_or_multirotor" {
		t.Errorf("operator/category: %q %q", o.OperatorID, o.Category)
	}
	if !o.HasPosition || math.Abs(o.Lat-45.539309) > 1e-9 || math.Abs(o.Lon+122.966389) > 1e-9 || o.PositionMethod != "remoteid" {
		t.Errorf("position: %+v", o)
	}
	if !o.HasAltitude || o.AltM != 110 || o.AltKind != "geo" {
		t.Errorf("altitude: %v %v %v", o.HasAltitude, o.AltM, o.AltKind)
	}
	if !o.HasVelocity || o.SpeedMps != 5.5 || o.HeadingDeg != 216 || o.VRateMps != -1 {
		t.Errorf("velocity: %+v", o)
	}
	if !o.HasOperatorPosition || math.Abs(o.OperatorLat-45.539) > 1e-9 || math.Abs(o.OperatorLon+122.966) > 1e-9 {
		t.Errorf("operator position: %+v", o)
	}
	if len(o.Warnings) != 0 {
		t.Errorf("warnings: %v", o.Warnings)
	}
}

// Messages heard in separate frames of one transmitter are associated by
// its address; another transmitter's messages never mix in.
func TestAssociatorByTransmitter(t *testing.T) {
	pack := mustHex(t, findVector(t, "pack_5_msgs").Hex)
	a := NewAssociator(30 * time.Second)
	macA := [6]byte{0xA, 1, 2, 3, 4, 5}
	macB := [6]byte{0xB, 1, 2, 3, 4, 5}
	send := func(mac [6]byte, i int, at int64) decode.Observation {
		ad := append([]byte{30, 0x16, 0xFA, 0xFF, 0x0D, byte(i)}, pack[3+i*25:3+(i+1)*25]...)
		var f Frame
		if err := DecodeBLEAdvData(ad, &f); err != nil {
			t.Fatal(err)
		}
		f.Transmitter, f.HasTransmitter = mac, true
		return a.Observe(&f, at, "s")
	}
	o := send(macA, 1, 1) // Location first: no UAS ID yet
	if o.Key != "mac:0a:01:02:03:04:05" || !o.HasPosition {
		t.Errorf("before Basic ID: key %q position %v", o.Key, o.HasPosition)
	}
	send(macB, 4, 2) // other transmitter's Operator ID
	send(macA, 0, 3)
	o = send(macA, 3, 4)
	if o.Key != "1596F350A1B2C3D4E5" || !o.HasPosition || !o.HasOperatorPosition || o.OperatorID != "" {
		t.Errorf("merged: %+v", o)
	}
	if a.Len() != 2 {
		t.Errorf("%d transmitters", a.Len())
	}
	// After the TTL the state is forgotten.
	o = send(macA, 4, 4+int64(time.Minute))
	if o.Key != "mac:0a:01:02:03:04:05" || o.HasPosition || o.OperatorID != "FIN87astrdge12k8" {
		t.Errorf("after TTL: %+v", o)
	}
}

func TestObservationOperatorFar(t *testing.T) {
	var loc, sys [MessageSize]byte
	if err := EncodeLocation(&loc, 2, &LocationData{Direction: 10, SpeedHorizontal: 5, Latitude: 48.0, Longitude: 11.0,
		AltitudeBaro: -1000, AltitudeGeo: 500, Height: -1000, Timestamp: 10}); err != nil {
		t.Fatal(err)
	}
	if err := EncodeSystem(&sys, 2, &SystemData{OperatorLatitude: 49.0, OperatorLongitude: 11.0, AreaCount: 1,
		AreaCeiling: -1000, AreaFloor: -1000, OperatorAltitudeGeo: -1000}); err != nil {
		t.Fatal(err)
	}
	pack, err := AppendPack(nil, 2, loc, sys)
	if err != nil {
		t.Fatal(err)
	}
	var f Frame
	if err := DecodeCarrier(CarrierPack, pack, &f); err != nil {
		t.Fatal(err)
	}
	if !f.Pack.Warnings.Has(WarnOperatorFarFromAircraft) {
		t.Fatalf("pack warnings %v", f.Pack.Warnings.List())
	}
	o := FrameObservation(&f, 0, "")
	if len(o.Warnings) != 1 || !strings.HasPrefix(o.Warnings[0], "operator_far_from_aircraft: operator position is 111") {
		t.Errorf("warnings %v", o.Warnings)
	}
}

// The stated accuracy of every valid Location vector reaches the
// observation (the CoT ce/le and the track's h_accuracy_m come from it): the
// bound opendroneid-core-c decodes, for the altitude the observation took;
// code 0 is unknown, not the table's worst bound.
func TestObservationAccuracyFromVectors(t *testing.T) {
	n := 0
	for _, v := range loadVectors(t).Vectors {
		if !v.Valid || v.Kind != "location" {
			continue
		}
		var m Message
		if err := Decode(mustHex(t, v.Hex), &m); err != nil {
			t.Fatalf("%s: %v", v.ID, err)
		}
		var exp map[string]float64
		_ = json.Unmarshal(v.Expect, &exp) // non-numeric fields are left out
		want := func(code, metres string) float64 {
			if exp[code] == 0 {
				return 0
			}
			if exp[metres] == 7808 { // the library's typo for 4 NM (see values.go)
				return 7408
			}
			return exp[metres]
		}
		s := &uasState{loc: m.Location, hasLoc: true}
		var o decode.Observation
		s.location(&o)
		if o.HasPosition {
			if w := want("horiz_accuracy", "horiz_accuracy_m"); o.HAccuracyM != w {
				t.Errorf("%s: h accuracy %v, want %v", v.ID, o.HAccuracyM, w)
			}
		} else if o.HAccuracyM != 0 {
			t.Errorf("%s: h accuracy %v without a position", v.ID, o.HAccuracyM)
		}
		wantV := 0.0
		switch o.AltKind {
		case "geo":
			wantV = want("vert_accuracy", "vert_accuracy_m")
		case "baro":
			wantV = want("baro_accuracy", "baro_accuracy_m")
		}
		if o.VAccuracyM != wantV {
			t.Errorf("%s: v accuracy %v (%s altitude), want %v", v.ID, o.VAccuracyM, o.AltKind, wantV)
		}
		n++
	}
	if n < 5 {
		t.Fatalf("only %d location vectors", n)
	}
	t.Logf("%d location vectors", n)
}
