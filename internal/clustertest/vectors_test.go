package clustertest

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/internal/testshared"
)

// adsbVector is the part of a shared/vectors/adsb.json entry the cluster
// test uses. The expectations are the vectors' own (pyModeS, rs1090,
// dump1090, the 1090 MHz riddle), never values computed here.
type adsbVector struct {
	ID     string          `json:"id"`
	Kind   string          `json:"kind"`
	Hex    json.RawMessage `json:"hex"`
	Even   json.RawMessage `json:"even"`
	Odd    json.RawMessage `json:"odd"`
	Newest string          `json:"newest"`
	Expect struct {
		ICAO         string   `json:"icao"`
		Callsign     string   `json:"callsign"`
		Lat          *float64 `json:"lat"`
		Lon          *float64 `json:"lon"`
		ToleranceDeg float64  `json:"tolerance_deg"`
		ToleranceRel float64  `json:"tolerance_rel"`
	} `json:"expect"`
	Derived struct {
		Hex struct {
			DF    int  `json:"df"`
			CRCOK bool `json:"crc_ok"`
		} `json:"hex"`
	} `json:"derived_here"`
}

// bulkFrame is one frame the stream sends over and over.
type bulkFrame struct {
	vector string
	hex    string
	// icao is the vector's expected address; empty for a frame that must
	// be rejected (dead letter).
	icao     string
	callsign string
}

// cprPair is an even/odd airborne position pair with the position the
// vector gives when the newest frame is the one named.
type cprPair struct {
	vector    string
	icao      string
	even, odd string
	newestOdd bool
	lat, lon  float64
	latTol    float64
	lonTol    float64
}

func str(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// chooseFrames picks, from the shared ADS-B vectors, the frames the stream
// sends (DF17 frames with a valid CRC and an expected ICAO address, plus
// the one frame whose CRC must fail) and the CPR pairs whose global
// position the surviving instance must resolve. No address is in both
// sets, so a pair starts on a track with no position.
func chooseFrames(t *testing.T) ([]bulkFrame, []cprPair) {
	t.Helper()
	b, err := os.ReadFile(testshared.Path(t, "vectors", "adsb.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []adsbVector
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	var pairs []cprPair
	inPair := map[string]bool{}
	for _, v := range vs {
		if v.Kind != "cpr_global_airborne" || v.Expect.Lat == nil || v.Expect.Lon == nil {
			continue
		}
		even, odd := str(v.Even), str(v.Odd)
		if len(even) != 28 || len(odd) != 28 {
			continue
		}
		// The address field of DF17 is bytes 1-3; both frames must agree.
		icao := strings.ToUpper(even[2:8])
		if strings.ToUpper(odd[2:8]) != icao || inPair[icao] {
			continue // one pair per aircraft: a second would be a position jump
		}
		lat, lon := *v.Expect.Lat, *v.Expect.Lon
		latTol, lonTol := v.Expect.ToleranceDeg, v.Expect.ToleranceDeg
		switch {
		case v.Expect.ToleranceRel > 0:
			latTol, lonTol = abs(lat)*v.Expect.ToleranceRel, abs(lon)*v.Expect.ToleranceRel
		case latTol == 0:
			// The vectors print at least 4-5 decimals; the track API rounds
			// to 6.
			latTol, lonTol = 1e-4, 1e-4
		}
		inPair[icao] = true
		pairs = append(pairs, cprPair{vector: v.ID, icao: icao, even: even, odd: odd, newestOdd: v.Newest == "odd",
			lat: lat, lon: lon, latTol: latTol, lonTol: lonTol})
	}
	var bulk []bulkFrame
	seen := map[string]bool{}
	for _, v := range vs {
		h := strings.ToUpper(str(v.Hex))
		if h == "" || seen[h] {
			continue
		}
		switch {
		case v.Kind == "crc_invalid":
			seen[h] = true
			bulk = append(bulk, bulkFrame{vector: v.ID, hex: h})
		case v.Derived.Hex.DF == 17 && v.Derived.Hex.CRCOK && v.Expect.ICAO != "" &&
			!inPair[strings.ToUpper(v.Expect.ICAO)] && !strings.Contains(v.Kind, "corrected"):
			seen[h] = true
			bulk = append(bulk, bulkFrame{vector: v.ID, hex: h, icao: strings.ToUpper(v.Expect.ICAO), callsign: v.Expect.Callsign})
		}
	}
	valid := 0
	for _, f := range bulk {
		if f.icao != "" {
			valid++
		}
	}
	if valid < 8 || len(bulk) == valid || len(pairs) < 4 {
		t.Fatalf("the shared vectors gave %d valid frames, %d invalid and %d CPR pairs; want at least 8, 1 and 4",
			valid, len(bulk)-valid, len(pairs))
	}
	return bulk, pairs
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
