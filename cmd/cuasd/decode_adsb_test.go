package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/decode/adsb/adsbjson"
)

// The expected values are the shared vectors' (pyModeS, the 1090 MHz
// Riddle): decode/adsb/testdata/adsb.json.

func runADSB(t *testing.T, args ...string) (adsbjson.Response, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"decode", "adsb"}, args...), func(string) string { return "" }, &out, &errOut)
	var resp adsbjson.Response
	if err == nil {
		if jerr := json.Unmarshal(out.Bytes(), &resp); jerr != nil {
			t.Fatalf("output is not the endpoint's JSON: %v\n%s", jerr, out.String())
		}
	}
	return resp, out.String(), err
}

func TestDecodeADSBCommand(t *testing.T) {
	resp, out, err := runADSB(t, "8D406B902015A678D4D220AA4BDA")
	if err != nil {
		t.Fatal(err)
	}
	if m := resp.Messages[0]; m.ICAO != "406B90" || m.Callsign != "EZY85MH" || *m.TypeCode != 4 {
		t.Errorf("%+v", m)
	}
	// The same JSON as the endpoint's library call.
	h := "8D406B902015A678D4D220AA4BDA"
	want, _ := adsbjson.Decode(adsbjson.Request{Hex: &h})
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	_ = enc.Encode(want)
	if out != buf.String() {
		t.Errorf("CLI output differs from the endpoint's JSON:\n%s\nvs\n%s", out, buf.String())
	}

	// A batch.
	resp, _, err = runADSB(t, "5dab3d17d4ba29", "nothex")
	if err != nil || len(resp.Messages) != 2 || resp.Messages[0].ICAO != "AB3D17" || resp.Messages[1].Error == "" {
		t.Errorf("batch: %v %+v", err, resp.Messages)
	}

	// A pair (book-cpr-global-52n) and a local decode (pms-cpr-local-even).
	resp, _, err = runADSB(t, "--even", "8D40621D58C382D690C8AC2863A7", "--odd", "8D40621D58C386435CC412692AD6", "--newest", "even")
	if err != nil || resp.Position == nil || math.Abs(resp.Position.Lat-52.2572021484375) > 1e-9 {
		t.Errorf("pair: %v %+v", err, resp.Position)
	}
	resp, _, err = runADSB(t, "--ref", "49,6", "8D40058B58C901375147EFD09357")
	if err != nil || resp.Position == nil || math.Abs(resp.Position.Lat-49.8241) > 1e-3 || math.Abs(resp.Position.Lon-6.06785) > 1e-3 {
		t.Errorf("local: %v %+v", err, resp.Position)
	}

	// Single-bit correction.
	resp, _, err = runADSB(t, "--fix", "8D406B902015A678D4D220AA4BDB")
	if err != nil || *resp.Messages[0].BitErrorsFixed != 1 {
		t.Errorf("fix: %v %+v", err, resp.Messages)
	}

	for _, args := range [][]string{
		{},
		{"8d4ca251204994b1c36e60a5343d"}, // bad CRC
		{"--ref", "north", "5dab3d17d4ba29"},
		{"--even", "8D40621D58C382D690C8AC2863A7", "--odd", "8D40621D58C386435CC412692AD6"}, // no --newest
		{"--even", "8D40621D58C382D690C8AC2863A7", "5dab3d17d4ba29"},
	} {
		if _, _, err := runADSB(t, args...); err == nil || !strings.HasPrefix(err.Error(), "decode adsb") {
			t.Errorf("%v: error %v", args, err)
		}
	}
}

// TestDecodeADSBCommB: pyModeS's 6,0 vector (tests/test_bds_commb.py line
// 735 @ a49921bb) and its 5,0/6,0 ambiguous payload (tests/test_infer.py
// line 94) in a DF20 frame whose parity gives address B9B320, separated
// by --known.
func TestDecodeADSBCommB(t *testing.T) {
	resp, _, err := runADSB(t, "A00004128F39F91A7E27C46ADC21")
	if m := resp.Messages; err != nil || m[0].BDS != "6,0" || m[0].CommB == nil || m[0].CommB.BDS60 == nil || *m[0].CommB.BDS60.IAS != 252 {
		t.Errorf("6,0: %v %+v", err, m)
	}
	const amb = "A0000000FFBAA11E2004724B6A3D"
	resp, _, err = runADSB(t, amb)
	if m := resp.Messages; err != nil || len(m[0].BDSCandidates) != 2 || !m[0].CommB.Ambiguous {
		t.Errorf("ambiguous: %v %+v", err, m)
	}
	resp, _, err = runADSB(t, "--known", ",355,", amb)
	if m := resp.Messages; err != nil || m[0].BDS != "6,0" || m[0].BDSCandidates != nil {
		t.Errorf("--known ,355,: %v %+v", err, m)
	}
	resp, _, err = runADSB(t, "--meteo", "A0001692185BD5CF400000DFC696")
	if m := resp.Messages; err != nil || m[0].CommB == nil || m[0].CommB.BDS44 == nil {
		t.Errorf("--meteo: %v %+v", err, m)
	}
	for _, k := range []string{"240", "x,,", ",400,"} {
		t.Run(k, func(t *testing.T) {
			if _, _, err := runADSB(t, "--known", k, amb); err == nil || !strings.HasPrefix(err.Error(), "decode adsb") {
				t.Errorf("--known %q: error %v", k, err)
			}
		})
	}
}
