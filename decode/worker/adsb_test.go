package worker

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/internal/testshared"
)

// TestADSBObservationsFromVectors checks the conversion of decoded ADS-B
// claims into the observation's SI units against the reference vectors'
// values (knots, degrees, feet per minute, feet).
func TestADSBObservationsFromVectors(t *testing.T) {
	raw, err := os.ReadFile(testshared.Path(t, "vectors", "adsb.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vecs []struct {
		ID, Kind string
		Hex      string `json:"hex"`
		Expect   map[string]any
	}
	if err := json.Unmarshal(raw, &vecs); err != nil {
		t.Fatal(err)
	}
	d := &ADSB{}
	checked := 0
	for _, v := range vecs {
		if v.Hex == "" {
			continue
		}
		frame, err := hex.DecodeString(v.Hex)
		if err != nil {
			continue
		}
		out, err := d.Decode(frame, Meta{Sensor: "s"}, nil)
		switch v.Kind {
		case "airborne_velocity":
			if err != nil || len(out) != 1 || !out[0].HasVelocity {
				t.Errorf("%s: %v %+v", v.ID, err, out)
				continue
			}
			o := out[0]
			if gs, ok := v.Expect["groundspeed"].(float64); ok && math.Abs(o.SpeedMps-gs*0.514444) > 0.6*0.514444 {
				t.Errorf("%s: speed %.2f m/s, reference %.1f kt", v.ID, o.SpeedMps, gs)
			}
			if tr, ok := v.Expect["track"].(float64); ok && math.Abs(o.HeadingDeg-tr) > printed(tr) {
				t.Errorf("%s: heading %.2f, reference %.2f", v.ID, o.HeadingDeg, tr)
			}
			if vr, ok := v.Expect["vertical_rate"].(float64); ok && math.Abs(o.VRateMps-vr*0.00508) > 1e-9 {
				t.Errorf("%s: vertical rate %.4f m/s, reference %.0f ft/min", v.ID, o.VRateMps, vr)
			}
			checked++
		case "airborne_position_alt":
			alt, ok := v.Expect["altitude"].(float64)
			if !ok {
				continue
			}
			if err != nil || len(out) != 1 || !out[0].HasAltitude || math.Abs(out[0].AltM-alt*0.3048) > 1e-9 || !out[0].HasCPR {
				t.Errorf("%s: %v %+v, reference %.0f ft", v.ID, err, out, alt)
			}
			checked++
		case "identification":
			cs, _ := v.Expect["callsign"].(string)
			if err != nil || len(out) != 1 || out[0].Callsign != cs || out[0].ICAO == "" || out[0].Key != out[0].ICAO {
				t.Errorf("%s: %v %+v, reference %q", v.ID, err, out, cs)
			}
			checked++
		case "target_state", "operational_status":
			nacp, ok := v.Expect["nac_p"].(float64)
			if !ok {
				continue
			}
			// DO-260B table 2-70, 95% EPU: NACp 7 < 0.1 NM, 8 < 0.05 NM,
			// 9 < 30 m, 10 < 10 m, 11 < 3 m.
			want := map[float64]float64{7: 185.2, 8: 92.6, 9: 30, 10: 10, 11: 3}[nacp]
			if err != nil || len(out) != 1 || want == 0 || out[0].HAccuracyM != want {
				t.Errorf("%s: NACp %v gave %v %+v, want %.1f m", v.ID, nacp, err, out, want)
			}
			checked++
		case "crc_invalid":
			var de *decodeError
			if !errors.As(err, &de) || de.Reason() != "crc" || len(out) != 0 {
				t.Errorf("%s: a frame failing its CRC gave %v %+v", v.ID, err, out)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Fatalf("only %d vectors checked", checked)
	}
}

// printed is half a unit of the last digit a reference printed: 170 was
// rounded to the degree, 182.88 to the hundredth.
func printed(v float64) float64 {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	d := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		d = len(s) - i - 1
	}
	return 0.5*math.Pow(10, -float64(d)) + 1e-9
}

// TestADSBCommBObservation: a Comm-B reply carries its MB field to fusion
// undecoded (pyModeS's 5,0 vector, tests/test_bds_commb.py line 649 @
// a49921bb); an empty register carries nothing.
func TestADSBCommBObservation(t *testing.T) {
	d := &ADSB{}
	for _, c := range []struct {
		hex  string
		want uint64
	}{
		{"A000139381951536E024D4CCF6B5", 0x81951536E024D4},
		{"A0000638FA81C10000000081A92F", 0xFA81C100000000},
		{"A800178D10010080F50000D5893C", 0x10010080F50000},
	} {
		t.Run(c.hex, func(t *testing.T) {
			frame, _ := hex.DecodeString(c.hex)
			out, err := d.Decode(frame, Meta{}, nil)
			if err != nil || len(out) != 1 || !out[0].HasCommB || out[0].CommB != c.want || !out[0].ModeSReply {
				t.Errorf("%s: %v %+v", c.hex, err, out)
			}
		})
	}
	// A reply whose MB field is all zeros (176 of the 488 replies in the real
	// Beast capture are) carries no register.
	frame, _ := hex.DecodeString("A0001838000000000000" + "000000")
	out, _ := d.Decode(frame, Meta{}, nil)
	if len(out) == 1 && out[0].HasCommB {
		t.Errorf("empty register carried: %+v", out[0])
	}
}
