package reference

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/decode/adsb"
)

// checkADSBSample re-decodes an ADS-B sample: one frame ("hex", with a
// reference position for a local CPR decode), or an even/odd pair resolved
// by the global CPR decode.
func checkADSBSample(t *testing.T, c *sampleCheck) {
	if _, pair := c.s.Input["even"]; pair {
		checkADSBPair(t, c)
		return
	}
	h, ok := c.s.Input["hex"].(string)
	if !ok {
		t.Fatalf("input has neither hex nor an even/odd pair: %v", c.s.Input)
	}
	frame := adsbFrame(t, h)
	var m adsb.Message
	err := adsb.Decode(frame, &m)
	if x, ok := c.exp("must_reject_without_correction"); ok {
		if x != true {
			t.Fatalf("must_reject_without_correction = %v", x)
		}
		if !errors.Is(err, adsb.ErrCRC) {
			t.Errorf("Decode = %v, want ErrCRC", err)
		}
		if m.Kind != adsb.KindNone || m.HasAltitude || m.HasCPR || m.HasCallsign {
			t.Errorf("a frame failing its CRC had its payload decoded: %+v", m)
		}
	}
	switch {
	case !c.s.Valid && err == nil:
		t.Fatalf("invalid sample decoded without error")
	case c.s.Valid && err != nil:
		t.Fatalf("Decode: %v", err)
	}
	if c.s.Kind == "cpr_local_airborne" {
		ref := adsb.LatLon{Lat: inputFloat(t, c, "ref_lat"), Lon: inputFloat(t, c, "ref_lon")}
		lat, lon, err := adsb.LocalPosition(&m, ref)
		if err != nil {
			t.Fatalf("LocalPosition: %v", err)
		}
		adsbLatLon(t, c, lat, lon)
	}
	adsbFields(t, c, &m)
}

// checkADSBPair resolves an even/odd pair with the global airborne decode.
func checkADSBPair(t *testing.T, c *sampleCheck) {
	even := adsbDecoded(t, c, "even")
	odd := adsbDecoded(t, c, "odd")
	var newestOdd bool
	switch c.s.Input["newest"] {
	case "odd":
		newestOdd = true
	case "even":
	default:
		t.Fatalf("input newest = %v, want even or odd", c.s.Input["newest"])
	}
	lat, lon, err := adsb.GlobalPosition(even, odd, newestOdd, nil)
	if c.s.Valid {
		if err != nil {
			t.Fatalf("GlobalPosition: %v", err)
		}
		// The same pair through the raw CPR entry point.
		la, lo, err := adsb.CPRGlobalAirborne(even.CPR, odd.CPR, newestOdd)
		if err != nil || la != lat || lo != lon {
			t.Errorf("CPRGlobalAirborne = (%v, %v, %v), GlobalPosition (%v, %v)", la, lo, err, lat, lon)
		}
		adsbLatLon(t, c, lat, lon)
		return
	}
	// A pair that must be rejected: no position at all.
	if x, ok := c.exp("result"); !ok || x != nil {
		t.Fatalf("invalid pair without expect.result = null: %v", c.expect)
	}
	if err == nil {
		t.Errorf("GlobalPosition = (%v, %v), want a rejection", lat, lon)
	}
	// The stated reason: the pair's CPR values resolve beyond ±90°. (The
	// frames themselves cannot pair at all: the even one is a surface
	// report, type code 7, so GlobalPosition refuses them as mixed; the
	// source test fed the raw CPR integers to the airborne decode.)
	if x, ok := c.exp("reason"); ok {
		if !strings.Contains(fmt.Sprint(x), "|lat|>90") {
			t.Fatalf("reason %q is not one this test knows how to check", x)
		}
		if _, _, err := adsb.CPRGlobalAirborne(even.CPR, odd.CPR, newestOdd); !errors.Is(err, adsb.ErrLatRange) {
			t.Errorf("CPRGlobalAirborne of the pair's CPR values: %v, want ErrLatRange", err)
		}
	}
}

func adsbFrame(t *testing.T, h string) []byte {
	t.Helper()
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatalf("hex %q: %v", h, err)
	}
	return b
}

// adsbDecoded decodes one frame of a pair; each must be intact.
func adsbDecoded(t *testing.T, c *sampleCheck, key string) *adsb.Message {
	t.Helper()
	h, ok := c.s.Input[key].(string)
	if !ok {
		t.Fatalf("input %s is not hex text", key)
	}
	m := new(adsb.Message)
	if err := adsb.Decode(adsbFrame(t, h), m); err != nil {
		t.Fatalf("%s frame: %v", key, err)
	}
	if !m.HasCPR {
		t.Fatalf("%s frame carries no CPR position", key)
	}
	return m
}

func inputFloat(t *testing.T, c *sampleCheck, key string) float64 {
	t.Helper()
	f, ok := c.s.Input[key].(float64)
	if !ok {
		t.Fatalf("input %s = %v, want a number", key, c.s.Input[key])
	}
	return f
}

// adsbLatLon compares a resolved position with expect lat/lon within the
// sample's tolerance_deg.
func adsbLatLon(t *testing.T, c *sampleCheck, lat, lon float64) {
	t.Helper()
	xl, ok1 := c.exp("lat")
	xo, ok2 := c.exp("lon")
	xt, ok3 := c.exp("tolerance_deg")
	if !ok1 || !ok2 || !ok3 {
		t.Fatalf("expect needs lat, lon and tolerance_deg: %v", c.expect)
	}
	tol := number(t, "tolerance_deg", xt)
	el, eo := number(t, "lat", xl), number(t, "lon", xo)
	if math.Abs(lat-el) > tol || math.Abs(lon-eo) > tol {
		t.Errorf("position (%.6f, %.6f), want (%v, %v) ± %v", lat, lon, xl, xo, xt)
	}
}

// adsbFields compares every per-frame key of the sample's expect with the
// decoded message. Where the sample's name is not the decoder's, the
// mapping is spelled out; nothing unmapped is skipped (see leftover).
func adsbFields(t *testing.T, c *sampleCheck, m *adsb.Message) {
	t.Helper()
	me := m.ME()
	exact := func(key string, present bool, got int64) {
		x, ok := c.exp(key)
		if !ok {
			return
		}
		if !present {
			t.Errorf("%s: not in the decode, want %v", key, x)
			return
		}
		if want := number(t, key, x); float64(got) != want {
			t.Errorf("%s = %d, want %v", key, got, x)
		}
	}
	str := func(key, got string, fold bool) {
		x, ok := c.exp(key)
		if !ok {
			return
		}
		want, _ := x.(string)
		if got != want && !(fold && strings.EqualFold(got, want)) {
			t.Errorf("%s = %q, want %v", key, got, x)
		}
	}
	boolean := func(key string, got bool) {
		if x, ok := c.exp(key); ok && x != got {
			t.Errorf("%s = %v, want %v", key, got, x)
		}
	}
	// adsbNum compares a decoded float with a value the source printed
	// rounded (pyModeS rounds speeds to integers and tracks to two
	// decimals): within half a unit of the last printed digit.
	adsbNum := func(key string, present bool, got float64) {
		x, ok := c.exp(key)
		if !ok {
			return
		}
		if !present {
			t.Errorf("%s: not in the decode, want %v", key, x)
			return
		}
		n := x.(json.Number)
		if d := math.Abs(got - number(t, key, n)); d > halfLastDigit(n) {
			t.Errorf("%s = %v, want %v (± %g)", key, got, x, halfLastDigit(n))
		}
	}
	exact("df", true, int64(m.DF))
	str("icao", m.ICAO(), true)
	exact("ca", true, int64(m.CA))
	exact("typecode", m.Kind != adsb.KindModeS && m.Kind != adsb.KindNone, int64(m.TypeCode))
	exact("subtype", true, int64(m.Subtype))
	str("bds", m.Kind.BDS(), false)
	boolean("crc_valid", m.CRC == adsb.CRCValid)
	exact("crc_remainder", true, int64(m.CRCRemainder))
	// parity_encode is the parity a transmitter computes over the data
	// bits: the frame's own parity field when it is intact.
	exact("parity_encode", true, int64(adsb.CRC24(m.Bytes()[:m.Len-3])))
	str("me_hex", fmt.Sprintf("%014X", me), true)
	str("pi_hex", fmt.Sprintf("%06X", m.Parity()), true)

	str("callsign", m.Callsign.String(), false)
	if x, ok := c.exp("category"); ok {
		// pyModeS gives the 3-bit ME field, adsb_deku the set and number.
		switch x := x.(type) {
		case string:
			if got := m.EmitterCategory(); got != x {
				t.Errorf("category = %q, want %q", got, x)
			}
		default:
			if number(t, "category", x) != float64(m.Category) {
				t.Errorf("category = %d, want %v", m.Category, x)
			}
		}
	}
	str("wake_vortex", m.EmitterCategoryDescription(), true)

	exact("altitude", m.HasAltitude, int64(m.Altitude))
	if x, ok := c.exp("cpr_format"); ok {
		odd := int64(0)
		if m.CPR.Odd {
			odd = 1
		}
		if !m.HasCPR || float64(odd) != number(t, "cpr_format", x) {
			t.Errorf("cpr_format: CPR present %v, odd %v; want %v", m.HasCPR, m.CPR.Odd, x)
		}
	}
	exact("cpr_lat", m.HasCPR, int64(m.CPR.Lat))
	exact("cpr_lon", m.HasCPR, int64(m.CPR.Lon))
	exact("nuc_p", m.NUCp() >= 0, int64(m.NUCp()))

	exact("movement_code", m.IsSurface(), int64(m.Movement))
	adsbNum("groundspeed", m.HasGroundspeed, m.Groundspeed)
	adsbNum("track", m.HasTrack, m.Track)
	if x, ok := c.exp("speed_type"); ok {
		switch x {
		case "GS":
			if !m.HasGroundspeed || m.HasAirspeed {
				t.Errorf("speed_type GS: groundspeed %v, airspeed %v", m.HasGroundspeed, m.HasAirspeed)
			}
		case "IAS", "TAS":
			if !m.HasAirspeed || m.AirspeedType.String() != x {
				t.Errorf("speed_type %v: airspeed %v (%v)", x, m.HasAirspeed, m.AirspeedType)
			}
		default:
			t.Errorf("speed_type %v: unknown label", x)
		}
	}
	exact("vertical_rate", m.HasVerticalRate, int64(m.VerticalRate))
	if x, ok := c.exp("vr_source"); ok {
		// 0 GNSS, 1 barometric (the fixed flag sense; see the sample note).
		want, known := map[any]uint8{"GNSS": 0, "barometric": 1}[x]
		if !known || !m.HasVerticalRate || m.VRSource != want {
			t.Errorf("vr_source = %d, want %v", m.VRSource, x)
		}
	}
	exact("geo_minus_baro", m.HasGeoMinusBaro, int64(m.GeoMinusBaro))
	exact("nac_v", m.HasNACv, int64(m.NACv))
	// The raw velocity subfields (ME bit numbers of DO-260B, 1-based),
	// read straight from the frame: they pin the sample's bytes.
	exact("raw_sew", true, int64(meBits(me, 14, 14)))
	exact("raw_vew", true, int64(meBits(me, 15, 24)))
	exact("raw_sns", true, int64(meBits(me, 25, 25)))
	exact("raw_vns", true, int64(meBits(me, 26, 35)))
	exact("raw_vrsrc", m.HasVerticalRate, int64(m.VRSource))
	exact("raw_svr", true, int64(meBits(me, 37, 37)))
	exact("raw_vr", true, int64(meBits(me, 38, 46)))
	exact("raw_dalt", true, int64(meBits(me, 50, 56)))

	exact("emergency_state", m.HasEmergency, int64(m.EmergencyState))
	boolean("is_emergency", m.HasEmergency && m.EmergencyState != 0)
	if x, ok := c.exp("squawk"); ok && (!m.HasSquawk || m.Squawk.String() != x) {
		t.Errorf("squawk = %v (present %v), want %v", m.Squawk, m.HasSquawk, x)
	}
}

// meBits returns ME bits from..to (1-based, bit 1 the most significant of
// the 56).
func meBits(me uint64, from, to uint) uint64 {
	return me >> (56 - to) & (1<<(to-from+1) - 1)
}
