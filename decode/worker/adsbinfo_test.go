package worker

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/internal/testshared"
)

// issue 21: the ADS-B block of the observation against the reference
// vectors' published values (pyModeS, adsb_deku): version, NIC supplements
// A and C, NACv, SIL and its type, the selected heading.
func TestADSBInfoFromVectors(t *testing.T) {
	raw, err := os.ReadFile(testshared.Path(t, "vectors", "adsb.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vecs []struct {
		ID     string         `json:"id"`
		Hex    string         `json:"hex"`
		Expect map[string]any `json:"expect"`
	}
	if err := json.Unmarshal(raw, &vecs); err != nil {
		t.Fatal(err)
	}
	// The vectors' sil_type texts in readsb's words.
	silTypes := map[string]string{"per flight hour": "perhour", "per hour": "perhour", "per sample": "persample"}
	d := &ADSB{}
	counts := map[string]int{}
	for _, v := range vecs {
		frame, err := hex.DecodeString(v.Hex)
		if err != nil || v.Hex == "" {
			continue
		}
		out, err := d.Decode(frame, Meta{}, nil)
		if err != nil || len(out) != 1 {
			continue // a CRC-failing synthetic frame is refused, and tested so elsewhere
		}
		o := out[0]
		num := func(k string) (float64, bool) { f, ok := v.Expect[k].(float64); return f, ok }
		if want, ok := num("version"); ok {
			counts["version"]++
			if !o.HasVersion || float64(o.Version) != want {
				t.Errorf("%s: version %v %d, reference %v", v.ID, o.HasVersion, o.Version, want)
			}
		}
		for _, s := range []struct {
			key      string
			has, val bool
		}{{"nic_a", o.HasNICA, o.NICA}, {"nic_c", o.HasNICC, o.NICC}} {
			if want, ok := num(s.key); ok {
				counts[s.key]++
				if !s.has || s.val != (want == 1) {
					t.Errorf("%s: %s %v %v, reference %v", v.ID, s.key, s.has, s.val, want)
				}
			}
		}
		if want, ok := num("nac_v"); ok {
			counts["nac_v"]++
			if !o.HasNACv || float64(o.NACv) != want {
				t.Errorf("%s: nac_v %v %d, reference %v", v.ID, o.HasNACv, o.NACv, want)
			}
		}
		if want, ok := num("sil"); ok && o.PosTypeCode == 0 { // a position's SIL is derived by fusion
			counts["sil"]++
			if !o.HasSIL || float64(o.SIL) != want {
				t.Errorf("%s: sil %v %d, reference %v", v.ID, o.HasSIL, o.SIL, want)
			}
		}
		if want, ok := v.Expect["sil_type"].(string); ok {
			counts["sil_type"]++
			if o.SILType.String() != silTypes[want] {
				t.Errorf("%s: sil_type %s, reference %q", v.ID, o.SILType, want)
			}
		}
		if want, ok := num("selected_heading"); ok {
			counts["selected_heading"]++
			if !o.HasNavHeading || math.Abs(o.NavHeadingDeg-want) > 0.01 {
				t.Errorf("%s: nav heading %v %v, reference %v", v.ID, o.HasNavHeading, o.NavHeadingDeg, want)
			}
		}
	}
	// The vectors hold 5 versions (one frame fails its CRC on purpose),
	// 4 NIC-A, 1 NIC-C, 2 NACv, 10 SIL of status messages, 2 SIL types,
	// 4 selected headings (one CRC-failing).
	for k, min := range map[string]int{"version": 5, "nic_a": 4, "nic_c": 1, "nac_v": 2, "sil": 9, "sil_type": 2, "selected_heading": 3} {
		if counts[k] < min {
			t.Errorf("only %d vectors checked %s, want %d", counts[k], k, min)
		}
	}
	t.Logf("checked: %v", counts)
}

// TestADSBAddressTypeAndAirGround: readsb's address type and air/ground
// reading of vectors whose DF, CA, CF and IMF bit are stated by the
// references (expected values written from readsb's mode_s.c: DF17 is
// adsb_icao; DF18 CF 0 adsb_icao_nt, 1 adsb_other, 2 tisb_icao, 5
// tisb_other, 6 adsr_icao; the IMF bit turns tisb_icao into
// tisb_trackfile and adsr_icao into adsr_other; address/parity replies are
// mode_s. CA 4 and surface positions are on the ground, CA 5 airborne, FS
// 2 and VS 0 uncertain).
func TestADSBAddressTypeAndAirGround(t *testing.T) {
	for _, c := range []struct {
		id, hex, typ string
		ag           decode.AirGround
	}{
		{"book-ident-klm1023 (DF17 CA5)", "8D4840D6202CC371C32CE0576098", "adsb_icao", decode.AirGroundAirborne},
		{"deku-df18-adsr-ident (CF6)", "96A082FB213B1CF2113820D6EDDF", "adsr_icao", decode.AirGroundNone},
		{"deku-df18-tisb-alt-700 (CF5)", "95298FCA680946499671468C7ACA", "tisb_other", decode.AirGroundNone},
		{"deku-df18-adsr-alt-2000 (CF6, IMF 1)", "96130D9D910F86188A7A71EF6DCB", "adsr_other", decode.AirGroundNone},
		{"deku-df18-adsr-vel (CF6, IMF 0)", "96A6C24699141E0E8018074AA959", "adsr_icao", decode.AirGroundNone},
		{"deku-df18-tc31-reserved (CF2, IMF 1)", "92479249fcb22e16fbdc3bac5b56", "tisb_trackfile", decode.AirGroundNone},
		{"pms-surf-movement-24 (DF17 CA4, TC7)", "8c3461cf398d60597b4ea434c4d7", "adsb_icao", decode.AirGroundGround},
		{"pms-surf-lfbo-local (DF18 CF0, surface)", "903a23ff426a4e65f7487a775d17", "adsb_icao_nt", decode.AirGroundGround},
		{"pms-df5-0356 (FS 2)", "2A00516D492B80", "mode_s", decode.AirGroundUncertain},
		{"deku-df0-45000 (VS 0)", "02e19cb02512c3", "mode_s", decode.AirGroundUncertain},
	} {
		frame, _ := hex.DecodeString(c.hex)
		out, err := (&ADSB{}).Decode(frame, Meta{}, nil)
		if err != nil || len(out) != 1 {
			t.Errorf("%s: %v, %d observations", c.id, err, len(out))
			continue
		}
		if got := adsb.AddressType(out[0].AddrType).String(); got != c.typ || out[0].AirGround != c.ag {
			t.Errorf("%s: type %s, air/ground %q; want %s, %q", c.id, got, out[0].AirGround, c.typ, c.ag)
		}
	}
}

// TestADSBPositionNICInputs: a position carries its type code and NIC
// supplement B for fusion; other messages carry none.
func TestADSBPositionNICInputs(t *testing.T) {
	for _, c := range []struct {
		id, hex string
		tc      uint8
		nicB    bool
	}{
		// adsbx-1bit-fixed-a48e3a: ME 58 31 ... TC 11, ME bit 8 = 0.
		{"adsbx-1bit-fixed-a48e3a", "8da48e3a5831d5652ab9d932a61b", 11, false},
		// pms-crc-ok-45cab3: ME 90 c3 ... TC 18, bit 8 = 0.
		{"pms-crc-ok-45cab3", "8d45cab390c39509496ca9a32912", 18, false},
		// pms-surf-movement-24: TC 7, a surface position has no NIC-B.
		{"pms-surf-movement-24", "8c3461cf398d60597b4ea434c4d7", 7, false},
		// book-ident-klm1023: identification, no position.
		{"book-ident-klm1023", "8D4840D6202CC371C32CE0576098", 0, false},
	} {
		frame, _ := hex.DecodeString(c.hex)
		out, err := (&ADSB{}).Decode(frame, Meta{}, nil)
		if err != nil || len(out) != 1 || out[0].PosTypeCode != c.tc || out[0].NICB != c.nicB {
			t.Errorf("%s: %v %+v", c.id, err, out)
		}
	}
}
