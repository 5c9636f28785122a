package worker

import (
	"math"
	"testing"
)

func TestDecodeSBS(t *testing.T) {
	var d ADSB
	// Lines of dump1090's SBS output of the shared capture.
	obs, err := d.Decode([]byte("MSG,3,1,1,400159,1,2018/04/03,19:03:29.021,2018/04/10,21:24:39.724,,2625,,,59.74472,30.57192,,,,,,0\r\n"), Meta{}, nil)
	if err != nil || len(obs) != 1 {
		t.Fatal(obs, err)
	}
	o := obs[0]
	if o.Key != "400159" || o.ICAO != "400159" || !o.HasPosition || o.Lat != 59.74472 || o.Lon != 30.57192 ||
		o.PositionMethod != "sbs" || !o.HasAltitude || math.Abs(o.AltM-800.1) > 0.01 {
		t.Fatalf("MSG,3: %+v", o)
	}
	obs, err = d.Decode([]byte("MSG,4,1,1,400159,1,2018/04/03,19:02:28.337,2018/04/10,21:24:39.437,,,203,314,,,-640,,,,,"), Meta{}, nil)
	if err != nil || !obs[0].HasVelocity || math.Abs(obs[0].SpeedMps-104.43) > 0.01 || obs[0].HeadingDeg != 314 || math.Abs(obs[0].VRateMps+3.2512) > 1e-3 {
		t.Fatalf("MSG,4: %+v %v", obs, err)
	}
	obs, err = d.Decode([]byte("MSG,1,1,1,400159,1,2018/04/03,19:02:28.337,2018/04/10,21:24:39.437,SDM6244,,,,,,,,,,,0"), Meta{}, nil)
	if err != nil || obs[0].Callsign != "SDM6244" {
		t.Fatalf("MSG,1: %+v %v", obs, err)
	}
	if _, err := d.Decode([]byte("MSG,3,1,1,XYZ,1,,,,,,,,,,,,,,,,"), Meta{}, nil); err == nil || Reason(err) != "sbs" {
		t.Fatalf("bad line: %v", err)
	}
}
