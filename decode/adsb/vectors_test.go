package adsb

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The vectors in testdata/adsb.json are copied verbatim from
// ../shared/vectors/adsb.json. Each carries its source; `expect` holds the
// values the source published, `derived_here` what the vector authors
// computed independently (DF, CRC remainder, type code), and
// `crosscheck_here` what dump1090-mutability printed for the same frames.
// Every vector is a case below; every expect key is either checked or
// listed in notChecked with the reason.

type vector struct {
	ID         string          `json:"id"`
	Kind       string          `json:"kind"`
	Hex        string          `json:"hex"`
	Note       string          `json:"note"`
	Even       json.RawMessage `json:"even"`
	Odd        json.RawMessage `json:"odd"`
	Newest     string          `json:"newest"`
	RefLat     *float64        `json:"ref_lat"`
	RefLon     *float64        `json:"ref_lon"`
	Raw        *rawCPR         `json:"raw"`
	Expect     map[string]any  `json:"expect"`
	Source     string          `json:"source"`
	Derived    map[string]any  `json:"derived_here"`
	Crosscheck struct {
		Decoder string         `json:"decoder"`
		Result  map[string]any `json:"result"`
	} `json:"crosscheck_here"`
}

type rawCPR struct {
	Lat   uint32 `json:"cpr_lat"`
	Lon   uint32 `json:"cpr_lon"`
	FFlag int    `json:"fflag"`
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	b, err := os.ReadFile("testdata/adsb.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // keep the printed precision of every expected number
	var vs []vector
	if err := dec.Decode(&vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) != 115 {
		t.Fatalf("testdata/adsb.json holds %d vectors, want the 115 of the shared file", len(vs))
	}
	return vs
}

// notChecked lists expect keys that no single-frame (or single-pair)
// decoder can reproduce, with why. A key found in a vector that is neither
// checked nor listed here fails the test, so nothing is skipped silently.
var notChecked = map[string]string{
	"note":                               "free text",
	"tolerance_deg":                      "a tolerance, used when comparing lat/lon",
	"tolerance_rel":                      "a tolerance, used when comparing lat/lon",
	"decimals":                           "printed precision, used when comparing lat/lon",
	"should_be_rejected_by_plausibility": "plausibility across frames is the tracker's job; the decoder must decode the frame (checked) and the pipeline must reject the jump",
	"gap_s":                              "time between frames, input to the tracker's plausibility check",
	"reason":                             "free text explaining the expected rejection",
	"ref_used":                           "free text; the reference is Dublin airport, used below",
	"interpretation":                     "free text; the consequence (reject the pair) is tested in adsbjson",
	"result":                             "null: the expected rejection is checked by kind",
}

// statefulKeys are values dump1090 printed from its per-aircraft state
// (other frames of the same aircraft), for the vectors that say so.
var statefulKeys = map[string]map[string]string{
	"adsbx-1bit-fixed-a48e3a": {
		"lat":   "dump1090's stateful global decode; the partner frame is not given",
		"lon":   "dump1090's stateful global decode; the partner frame is not given",
		"nic":   "NIC needs the NIC supplements from the aircraft's operational status messages",
		"nac_p": "from the aircraft's operational status messages, not this frame",
		"sil":   "from the aircraft's operational status messages, not this frame",
	},
}

func TestVectors(t *testing.T) {
	vs := loadVectors(t)
	kinds := map[string]int{}
	for _, v := range vs {
		kinds[v.Kind]++
		t.Run(v.ID, func(t *testing.T) {
			c := &checker{t: t, v: v, used: map[string]bool{}}
			switch {
			case v.Raw != nil:
				c.rawLocal()
			case strings.HasSuffix(v.Kind, "_raw"):
				c.rawGlobal()
			case len(v.Even) > 0:
				c.pair()
			default:
				c.single()
			}
			for k := range v.Expect {
				if c.used[k] {
					continue
				}
				if _, ok := notChecked[k]; ok {
					continue
				}
				if _, ok := statefulKeys[v.ID][k]; ok {
					continue
				}
				t.Errorf("expect key %q is neither checked nor listed as not checkable", k)
			}
		})
	}
	t.Logf("%d vectors in %d kinds", len(vs), len(kinds))
}

type checker struct {
	t    *testing.T
	v    vector
	used map[string]bool
}

// exp returns an expected value and marks the key used.
func (c *checker) exp(k string) (any, bool) {
	if _, stateful := statefulKeys[c.v.ID][k]; stateful {
		return nil, false
	}
	x, ok := c.v.Expect[k]
	if ok {
		c.used[k] = true
	}
	return x, ok
}

func mustFrame(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil {
		t.Fatalf("vector hex %q: %v", s, err)
	}
	return b
}

// decodeVector decodes a vector frame. Frames whose CRC the vector authors
// derived as bad (synthetic or zeroed parity) must fail Decode with ErrCRC;
// their payload is then decoded with IgnoreCRC, as the vector asks.
func decodeVector(t *testing.T, hx string, derived map[string]any) *Message {
	t.Helper()
	f := mustFrame(t, hx)
	m := new(Message)
	err := Decode(f, m)
	if derived != nil {
		if ok, isBool := derived["crc_ok"].(bool); isBool && !ok {
			if !errors.Is(err, ErrCRC) {
				t.Errorf("frame %s: derived_here says the CRC fails, Decode returned %v", hx, err)
			}
			if m.Kind != KindNone || m.TypeCode != 0 || m.HasCPR || m.HasAltitude {
				t.Errorf("frame %s failed its CRC but its payload was decoded: %+v", hx, m)
			}
			if err2 := DecodeWith(f, m, Options{IgnoreCRC: true}); !errors.Is(err2, ErrCRC) {
				t.Errorf("IgnoreCRC must still report ErrCRC, got %v", err2)
			}
			if m.CRC != CRCBad {
				t.Errorf("IgnoreCRC decode: CRC status %v, want CRCBad", m.CRC)
			}
			return m
		}
	}
	if err != nil {
		t.Fatalf("Decode(%s): %v", hx, err)
	}
	return m
}

func (c *checker) single() {
	t := c.t
	m := decodeVector(t, c.v.Hex, sub(c.v.Derived, "hex"))
	c.derived(m, sub(c.v.Derived, "hex"))
	c.crosscheck(m, c.v.Crosscheck.Result["hex"])
	switch c.v.Kind {
	case "cpr_local_airborne", "cpr_local_surface":
		ref := LatLon{*c.v.RefLat, *c.v.RefLon}
		lat, lon, err := LocalPosition(m, ref)
		if err != nil {
			t.Fatalf("LocalPosition: %v", err)
		}
		c.latlon(lat, lon)
		if _, ok := c.v.Expect["dlat"]; ok {
			span := 360.0
			if m.IsSurface() {
				span = 90
			}
			l := cprLocalIndices(m.CPR, ref.Lat, ref.Lon, span)
			c.num("dlat", l.dlat)
			c.num("dlon", l.dlon)
			c.num("j", l.j)
			c.num("m", l.m)
		}
		return
	case "crc_1bit_corrected":
		c.oneBit(m)
	case "crc_invalid":
		if x, _ := c.exp("must_reject_without_correction"); x == true {
			if err := Decode(mustFrame(t, c.v.Hex), new(Message)); !errors.Is(err, ErrCRC) {
				t.Errorf("Decode of a corrupt frame returned %v, want ErrCRC", err)
			}
		}
	case "crc_valid_phantom":
		nb, _ := c.exp("neighbour_hex")
		n := decodeVector(t, nb.(string), nil)
		c.fields(n, "neighbour_")
	}
	c.fields(m, "")
}

func sub(m map[string]any, k string) map[string]any {
	if m == nil {
		return nil
	}
	x, _ := m[k].(map[string]any)
	return x
}

// oneBit checks single-bit correction: the vector's frame is the corrected
// one and dump1090 printed the syndrome of the frame as received.
func (c *checker) oneBit(fixed *Message) {
	t := c.t
	x, _ := c.exp("crc_syndrome_before_fix")
	syn, err := strconv.ParseUint(x.(string), 16, 32)
	if err != nil {
		t.Fatal(err)
	}
	good := mustFrame(t, c.v.Hex)
	// Which single bit gives that syndrome? Recompute bit by bit, without
	// the package's syndrome table.
	pos := -1
	for i := 0; i < 112; i++ {
		f := slices.Clone(good)
		f[i/8] ^= 0x80 >> (i % 8)
		if uint64(bitwiseSyndrome(f)) == syn {
			if pos >= 0 {
				t.Fatalf("syndrome %06X matches two bit positions", syn)
			}
			pos = i
		}
	}
	if pos < 0 {
		t.Fatalf("no single bit error gives syndrome %06X", syn)
	}
	bad := slices.Clone(good)
	bad[pos/8] ^= 0x80 >> (pos % 8)
	var m Message
	if err := Decode(bad, &m); !errors.Is(err, ErrCRC) {
		t.Fatalf("corrupted frame decoded without FixOneBit: %v", err)
	}
	if uint64(m.CRCRemainder) != syn {
		t.Errorf("remainder %06X, want %06X", m.CRCRemainder, syn)
	}
	if err := DecodeWith(bad, &m, Options{FixOneBit: true}); err != nil {
		t.Fatalf("FixOneBit: %v", err)
	}
	if !bytes.Equal(m.Bytes(), good) {
		t.Errorf("corrected frame %X, want %X", m.Bytes(), good)
	}
	if uint64(m.CRCRemainder) != syn {
		t.Errorf("CRCRemainder after fix = %06X, want the received syndrome %06X", m.CRCRemainder, syn)
	}
	c.num("bit_errors_fixed", float64(m.BitErrorsFixed))
	if fixed.BitErrorsFixed != 0 {
		t.Errorf("an intact frame reports %d fixed bits", fixed.BitErrorsFixed)
	}
}

// pair handles the vectors that carry an even and an odd frame.
func (c *checker) pair() {
	t := c.t
	var eh, oh string
	if err := json.Unmarshal(c.v.Even, &eh); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(c.v.Odd, &oh); err != nil {
		t.Fatal(err)
	}
	even := decodeVector(t, eh, sub(c.v.Derived, "even"))
	odd := decodeVector(t, oh, sub(c.v.Derived, "odd"))
	c.derived(even, sub(c.v.Derived, "even"))
	c.derived(odd, sub(c.v.Derived, "odd"))
	c.crosscheck(even, c.v.Crosscheck.Result["even"])
	c.crosscheck(odd, c.v.Crosscheck.Result["odd"])
	newestOdd := c.v.Newest == "odd"
	var ref *LatLon
	if c.v.RefLat != nil {
		ref = &LatLon{*c.v.RefLat, *c.v.RefLon}
	}
	lat, lon, err := GlobalPosition(even, odd, newestOdd, ref)

	switch c.v.Kind {
	case "cpr_global_airborne_reject":
		// The even frame is a surface report: the frames cannot pair.
		if !errors.Is(err, ErrMixedPosition) {
			t.Errorf("GlobalPosition = (%v, %v, %v), want ErrMixedPosition", lat, lon, err)
		}
		// The source test feeds the raw CPR values to the airborne
		// decoder: they resolve beyond 90° and must be rejected.
		_, _, err = CPRGlobalAirborne(even.CPR, odd.CPR, newestOdd)
		if !errors.Is(err, ErrLatRange) {
			t.Errorf("CPRGlobalAirborne(raw) error %v, want ErrLatRange", err)
		}
		lat0, _ := cprGlobalLat(even.CPR, odd.CPR, 360)
		if math.Abs(lat0-113.22) > 0.01 && math.Abs(lat0-(113.22-360)) > 0.01 {
			t.Logf("even latitude %.4f (note says ≈113.22)", lat0)
		}
		// And the note's second case: a pair across a zone edge.
		_, _, err = CPRGlobalAirborne(CPR{Lat: 8192}, CPR{Lat: 114688, Odd: true}, true)
		if !errors.Is(err, ErrZone) {
			t.Errorf("zone-mismatch pair: error %v, want ErrZone", err)
		}
		return
	case "cpr_pathological":
		if err != nil {
			t.Fatalf("GlobalPosition: %v", err)
		}
		x, _ := c.exp("pyModeS_pair_output")
		c.near("pyModeS_pair_output", lat, lon, x, 1e-5)
		// The reporter's reference: Dublin airport (EIDW, 53.4214 N,
		// 6.2701 W). The local decodes disagree by about 5° of longitude.
		dub := LatLon{53.4214, -6.2701}
		la, lo, err := LocalPosition(even, dub)
		if err != nil {
			t.Fatal(err)
		}
		x, _ = c.exp("pyModeS_even_with_ref")
		c.near("pyModeS_even_with_ref", la, lo, x, 1e-5)
		la2, lo2, err := LocalPosition(odd, dub)
		if err != nil {
			t.Fatal(err)
		}
		x, _ = c.exp("pyModeS_odd_with_ref")
		c.near("pyModeS_odd_with_ref", la2, lo2, x, 1e-5)
		if math.Abs(lo-lo2) < 1 {
			t.Errorf("the two local decodes agree (%v vs %v); the vector says they disagree by ~5°", lo, lo2)
		}
		return
	}
	if err != nil {
		t.Fatalf("GlobalPosition: %v", err)
	}
	c.latlon(lat, lon)
	c.num("even_cpr_lat", float64(even.CPR.Lat))
	c.num("even_cpr_lon", float64(even.CPR.Lon))
	c.num("odd_cpr_lat", float64(odd.CPR.Lat))
	c.num("odd_cpr_lon", float64(odd.CPR.Lon))
	span := 360.0
	if even.IsSurface() {
		span = 90
	}
	c.num("j", float64(cprLatIndex(even.CPR, odd.CPR)))
	lat0, lat1 := cprGlobalLat(even.CPR, odd.CPR, span)
	if span == 90 && ref != nil {
		lat0, lat1 = surfaceQuadrant(lat0, ref.Lat), surfaceQuadrant(lat1, ref.Lat)
	}
	c.num("lat_even", lat0)
	c.num("lat_odd", lat1)
	c.num("nl", float64(NL(lat)))
	c.num("m", float64(cprLonIndex(even.CPR, odd.CPR, NL(lat))))
	newest := even
	if newestOdd {
		newest = odd
	}
	if x, ok := c.exp("altitude"); ok {
		c.eqNum("altitude", float64(even.Altitude), x)
		c.eqNum("altitude", float64(odd.Altitude), x)
	}
	if x, ok := c.exp("altitude_newest"); ok {
		c.eqNum("altitude_newest", float64(newest.Altitude), x)
	}
	if x, ok := c.exp("even_altitude"); ok {
		c.eqNum("even_altitude", float64(even.Altitude), x)
	}
	if x, ok := c.exp("odd_altitude"); ok {
		c.eqNum("odd_altitude", float64(odd.Altitude), x)
	}
	if x, ok := c.exp("typecode"); ok {
		c.eqNum("typecode", float64(newest.TypeCode), x)
	}
}

func (c *checker) rawGlobal() {
	var e, o rawCPR
	if err := json.Unmarshal(c.v.Even, &e); err != nil {
		c.t.Fatal(err)
	}
	if err := json.Unmarshal(c.v.Odd, &o); err != nil {
		c.t.Fatal(err)
	}
	even := CPR{Lat: e.Lat, Lon: e.Lon}
	odd := CPR{Lat: o.Lat, Lon: o.Lon, Odd: true}
	newestOdd := c.v.Newest == "odd"
	var lat, lon float64
	var err error
	switch c.v.Kind {
	case "cpr_global_airborne_raw":
		lat, lon, err = CPRGlobalAirborne(even, odd, newestOdd)
	case "cpr_global_surface_raw":
		lat, lon, err = CPRGlobalSurface(even, odd, newestOdd, *c.v.RefLat, *c.v.RefLon)
		if c.v.ID == "d1090-cpr-global-surf-pole-+44" {
			// "Same expected result for newest=odd."
			la2, lo2, err2 := CPRGlobalSurface(even, odd, !newestOdd, *c.v.RefLat, *c.v.RefLon)
			if err2 != nil || la2 != lat || lo2 != lon {
				c.t.Errorf("newest=odd gives (%v, %v, %v), newest=even (%v, %v)", la2, lo2, err2, lat, lon)
			}
		}
	default:
		c.t.Fatalf("unknown raw kind %s", c.v.Kind)
	}
	if err != nil {
		c.t.Fatalf("%s: %v", c.v.Kind, err)
	}
	c.latlon(lat, lon)
}

func (c *checker) rawLocal() {
	cpr := CPR{Lat: c.v.Raw.Lat, Lon: c.v.Raw.Lon, Odd: c.v.Raw.FFlag == 1}
	var lat, lon float64
	var err error
	switch c.v.Kind {
	case "cpr_local_airborne_raw":
		lat, lon, err = CPRLocalAirborne(cpr, *c.v.RefLat, *c.v.RefLon)
	case "cpr_local_surface_raw":
		lat, lon, err = CPRLocalSurface(cpr, *c.v.RefLat, *c.v.RefLon)
	default:
		c.t.Fatalf("unknown raw kind %s", c.v.Kind)
	}
	if err != nil {
		c.t.Fatalf("%s: %v", c.v.Kind, err)
	}
	c.latlon(lat, lon)
}

// latlon compares a resolved position with expect lat/lon using the
// vector's tolerance: tolerance_deg, tolerance_rel, decimals, or else the
// printed precision of the expected values.
func (c *checker) latlon(lat, lon float64) {
	xl, ok1 := c.exp("lat")
	xo, ok2 := c.exp("lon")
	if !ok1 || !ok2 {
		c.t.Fatalf("vector has no expected lat/lon")
	}
	el, eo := f64(c.t, xl), f64(c.t, xo)
	tolLat, tolLon := printedTol(xl), printedTol(xo)
	if x, ok := c.v.Expect["tolerance_deg"]; ok {
		tolLat, tolLon = f64(c.t, x), f64(c.t, x)
	}
	if x, ok := c.v.Expect["tolerance_rel"]; ok {
		r := f64(c.t, x)
		tolLat, tolLon = math.Abs(el)*r, math.Abs(eo)*r
	}
	if x, ok := c.v.Expect["decimals"]; ok {
		d := f64(c.t, x)
		tolLat = math.Pow(10, -d)
		tolLon = tolLat
	}
	if math.Abs(lat-el) > tolLat+1e-12 || math.Abs(lon-eo) > tolLon+1e-12 {
		c.t.Errorf("position (%.7f, %.7f), want (%v, %v) ± (%g, %g)", lat, lon, xl, xo, tolLat, tolLon)
	}
}

func (c *checker) near(key string, lat, lon float64, x any, tol float64) {
	p, ok := x.([]any)
	if !ok || len(p) != 2 {
		c.t.Fatalf("%s: want a [lat, lon] pair, got %v", key, x)
	}
	if math.Abs(lat-f64(c.t, p[0])) > tol || math.Abs(lon-f64(c.t, p[1])) > tol {
		c.t.Errorf("%s: got (%.5f, %.5f), want %v", key, lat, lon, p)
	}
}

// printedTol is one unit in the last printed decimal of an expected
// number: sources print rounded (pyModeS rounds speeds to integers,
// headings to one decimal), so agreeing to that unit is agreeing.
func printedTol(x any) float64 {
	n, ok := x.(json.Number)
	if !ok {
		return 0
	}
	s := string(n)
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return math.Pow(10, -float64(len(s)-i-1))
	}
	return 1
}

func f64(t *testing.T, x any) float64 {
	t.Helper()
	switch n := x.(type) {
	case json.Number:
		f, err := n.Float64()
		if err != nil {
			t.Fatal(err)
		}
		return f
	case float64:
		return n
	}
	t.Fatalf("not a number: %v (%T)", x, x)
	return 0
}

// num compares a float result with an expected number (if the vector has
// the key) to the printed precision.
func (c *checker) num(key string, got float64) {
	x, ok := c.exp(key)
	if !ok {
		return
	}
	if x == nil {
		c.t.Errorf("%s: expected null, got %v", key, got)
		return
	}
	want := f64(c.t, x)
	if math.Abs(got-want) > printedTol(x)+1e-9 {
		c.t.Errorf("%s = %v, want %v (± %g)", key, got, x, printedTol(x))
	}
}

// eqNum compares an integer-valued result exactly.
func (c *checker) eqNum(key string, got float64, x any) {
	if want := f64(c.t, x); got != want {
		c.t.Errorf("%s = %v, want %v", key, got, want)
	}
}

func (c *checker) exact(key string, got float64) {
	if x, ok := c.exp(key); ok {
		c.eqNum(key, got, x)
	}
}

func (c *checker) str(key, got string) {
	if x, ok := c.exp(key); ok {
		if s, _ := x.(string); !strings.EqualFold(s, got) {
			c.t.Errorf("%s = %q, want %q", key, got, x)
		}
	}
}

func (c *checker) boolean(key string, got bool) {
	if x, ok := c.exp(key); ok {
		if b, _ := x.(bool); b != got {
			c.t.Errorf("%s = %v, want %v", key, got, x)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// fields checks every per-frame expect key (with an optional prefix, for
// the neighbour frames of the phantom vectors).
func (c *checker) fields(m *Message, p string) {
	t := c.t
	me := m.ME()
	c.exact(p+"df", float64(m.DF))
	c.str(p+"icao", m.ICAO())
	c.str(p+"icao_via_crc", m.ICAO())
	c.str(p+"address", m.ICAO())
	c.exact(p+"typecode", float64(m.TypeCode))
	c.str(p+"bds", m.Kind.BDS())
	c.str(p+"callsign", m.Callsign.String())
	if x, ok := c.exp(p + "category"); ok {
		switch x := x.(type) {
		case string:
			if got := m.EmitterCategory(); got != x {
				t.Errorf("category = %q, want %q", got, x)
			}
		default:
			c.eqNum("category", float64(m.Category), x)
		}
	}
	c.str(p+"wake_vortex", m.EmitterCategoryDescription())
	c.boolean(p+"crc_valid", m.CRC == CRCValid)
	c.exact(p+"crc_remainder", float64(m.CRCRemainder))
	c.str(p+"crc", fmt.Sprintf("%06X", m.CRCRemainder))
	c.exact(p+"parity_encode", float64(CRC24(m.Bytes()[:m.Len-3])))
	c.str(p+"parity_hex", fmt.Sprintf("%06X", CRC24(m.Bytes()[:m.Len-3])))
	c.str(p+"generator_bits", strconv.FormatUint(CRCGenerator, 2))
	c.exact(p+"ca", float64(m.CA))
	c.exact(p+"cf", float64(m.CF))
	if x, ok := c.exp(p + "cf_name"); ok {
		// rs1090's names of the DF18 control field values.
		names := map[string]uint8{"ADSB_ES_NT": 0, "ADSB_ES_NT_ALT": 1, "TISB_FINE": 2, "TISB_COARSE": 3, "TISB_ADSR_MNG": 4, "TISB_ADSB_RELAY": 5, "ADSR": 6, "RESERVED": 7}
		if cf, ok := names[x.(string)]; !ok || cf != m.CF {
			t.Errorf("cf_name %v does not name CF %d", x, m.CF)
		}
	}
	c.str(p+"me_hex", fmt.Sprintf("%014X", me))
	c.str(p+"pi_hex", fmt.Sprintf("%06X", m.Parity()))
	if x, ok := c.exp(p + "address_type"); ok {
		var good bool
		switch x {
		case "ADS-R":
			good = m.AddressType.IsADSR()
		case "TIS-B":
			good = m.AddressType.IsTISB()
		case "unknown addressing scheme":
			good = m.AddressType == AddrUnknown
		default:
			t.Fatalf("unknown address_type label %v", x)
		}
		if !good {
			t.Errorf("address_type %v, want %v", m.AddressType, x)
		}
	}
	if x, ok := c.exp(p + "altitude"); ok {
		if !m.HasAltitude {
			t.Errorf("no altitude, want %v", x)
		} else {
			c.eqNum("altitude", float64(m.Altitude), x)
		}
	}
	if x, ok := c.exp(p + "cpr_format"); ok {
		c.eqNum("cpr_format", b2f(m.CPR.Odd), x)
	}
	if x, ok := c.exp(p + "nuc_p"); ok {
		c.eqNum("nuc_p", float64(m.NUCp()), x)
	}
	c.exact(p+"cpr_lat", float64(m.CPR.Lat))
	c.exact(p+"cpr_lon", float64(m.CPR.Lon))
	c.exact(p+"movement_code", float64(m.Movement))
	if x, ok := c.exp(p + "groundspeed"); ok {
		if x == nil {
			if m.HasGroundspeed {
				t.Errorf("groundspeed %v, want none", m.Groundspeed)
			}
		} else {
			c.num(p+"groundspeed", m.Groundspeed)
		}
	}
	c.num(p+"track", m.Track)
	if x, ok := c.exp(p + "vertical_rate"); ok {
		c.eqNum("vertical_rate", float64(m.VerticalRate), x)
	}
	if x, ok := c.exp(p + "vr_source"); ok {
		want := map[string]uint8{"GNSS": 0, "barometric": 1}[x.(string)]
		if m.VRSource != want {
			t.Errorf("vr_source %d, want %v", m.VRSource, x)
		}
	}
	c.exact(p+"geo_minus_baro", float64(m.GeoMinusBaro))
	if x, ok := c.exp(p + "speed_type"); ok {
		switch x {
		case "GS":
			if !m.HasGroundspeed {
				t.Errorf("speed_type GS but no groundspeed")
			}
		case "TAS", "IAS":
			if !m.HasAirspeed || m.AirspeedType.String() != x {
				t.Errorf("speed_type %v, got airspeed %v %v", x, m.HasAirspeed, m.AirspeedType)
			}
		}
	}
	c.exact(p+"nac_v", float64(m.NACv))
	// Raw velocity fields, read straight from the ME bits.
	c.exact(p+"raw_vew", float64(bits(me, 15, 24)))
	c.exact(p+"raw_sew", float64(bits(me, 14, 14)))
	c.exact(p+"raw_vns", float64(bits(me, 26, 35)))
	c.exact(p+"raw_sns", float64(bits(me, 25, 25)))
	c.exact(p+"raw_vr", float64(bits(me, 38, 46)))
	c.exact(p+"raw_svr", float64(bits(me, 37, 37)))
	c.exact(p+"raw_vrsrc", float64(m.VRSource))
	c.exact(p+"raw_dalt", float64(bits(me, 50, 56)))
	c.exact(p+"subtype", float64(m.Subtype))
	if x, ok := c.exp(p + "squawk"); ok {
		if !m.HasSquawk || m.Squawk.String() != x {
			t.Errorf("squawk %v (present %v), want %v", m.Squawk, m.HasSquawk, x)
		}
	}
	c.exact(p+"emergency_state", float64(m.EmergencyState))
	c.boolean(p+"is_emergency", m.HasEmergency && m.EmergencyState != 0)
	c.str(p+"emergency", EmergencyName(m.EmergencyState))
	c.exact(p+"selected_altitude", float64(m.SelectedAltitude))
	if x, ok := c.exp(p + "selected_altitude_source"); ok {
		fms := x == "FMS"
		if m.SelectedAltitudeFMS != fms {
			t.Errorf("selected altitude from FMS = %v, want source %v", m.SelectedAltitudeFMS, x)
		}
	}
	c.num(p+"baro_pressure_setting", m.BaroSetting)
	c.num(p+"qnh", m.BaroSetting)
	c.num(p+"selected_heading", m.SelectedHeading)
	c.boolean(p+"heading_valid", m.HasSelectedHeading)
	c.exact(p+"nac_p", float64(m.NACp))
	c.exact(p+"nic_baro", float64(m.NICbaro))
	c.exact(p+"sil", float64(m.SIL))
	c.boolean(p+"autopilot", m.NavModes&NavAutopilot != 0)
	c.boolean(p+"vnav_mode", m.NavModes&NavVNAV != 0)
	c.boolean(p+"altitude_hold_mode", m.NavModes&NavAltitudeHold != 0)
	c.boolean(p+"approach_mode", m.NavModes&NavApproach != 0)
	c.boolean(p+"lnav_mode", m.NavModes&NavLNAV != 0)
	c.boolean(p+"tcas_operational", m.ACASOperational)
	c.boolean(p+"acas_operational", m.ACASOperational)
	if x, ok := c.exp(p + "nav_modes"); ok {
		var want []string
		for _, s := range x.([]any) {
			want = append(want, s.(string))
		}
		got := navModeNames(m.NavModes)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("nav_modes %v, want %v", got, want)
		}
	}
	c.exact(p+"version", float64(m.Version))
	c.exact(p+"nic_a", float64(m.NICa))
	c.exact(p+"nic_c", float64(m.NICc))
	c.exact(p+"gva", float64(m.GVA))
	c.exact(p+"sda", float64(m.SDA))
	c.exact(p+"lw", float64(m.LengthWidth))
	if x, ok := c.exp(p + "capability"); ok {
		want := strings.Fields(x.(string))
		got := capabilityNames(m.Capability)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("capability %v, want %v", got, want)
		}
	}
	if x, ok := c.exp(p + "operational_modes"); ok {
		var want []string
		for _, f := range strings.Fields(x.(string)) {
			if v, ok := strings.CutPrefix(f, "SDA="); ok {
				if strconv.Itoa(int(m.SDA)) != v {
					t.Errorf("SDA %d, want %s", m.SDA, v)
				}
				continue
			}
			want = append(want, f)
		}
		got := opModeNames(m.OperationalMode)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("operational modes %v, want %v", got, want)
		}
	}
	if x, ok := c.exp(p + "hrd"); ok {
		want := map[string]uint8{"true north": 0, "true heading": 0, "magnetic north": 1, "magnetic heading": 1}[x.(string)]
		if m.HRD != want {
			t.Errorf("hrd %d, want %v", m.HRD, x)
		}
	}
	if x, ok := c.exp(p + "sil_type"); ok {
		want := map[string]uint8{"per hour": 0, "per flight hour": 0, "per sample": 1}[x.(string)]
		if m.SILSupplement != want {
			t.Errorf("SIL supplement %d, want %v", m.SILSupplement, x)
		}
	}
	if x, ok := c.exp(p + "bds65"); ok && x == "Reserved" {
		if m.Kind != KindOperationalStatus || !m.Unsupported {
			t.Errorf("bds65 Reserved: kind %v unsupported %v", m.Kind, m.Unsupported)
		}
	}
	if x, ok := c.exp(p + "decoded_as"); ok {
		var good bool
		switch x {
		case "No position information":
			good = m.Kind == KindNoPosition && !m.HasCPR
		case "Unknown":
			good = m.Unsupported
		case "Aircraft operational status (reserved)":
			good = m.Kind == KindOperationalStatus && m.Unsupported
		default:
			t.Fatalf("unknown decoded_as label %v", x)
		}
		if !good {
			t.Errorf("decoded_as %v: kind %v unsupported %v", x, m.Kind, m.Unsupported)
		}
	}
	c.exact(p+"iid", float64(m.IID))
	c.exact(p+"vs", float64(m.VS))
	c.exact(p+"cc", float64(m.CC))
	c.exact(p+"sl", float64(m.SL))
	c.exact(p+"ri", float64(m.RI))
	c.exact(p+"fs", float64(m.FS))
	c.exact(p+"dr", float64(m.DR))
}

func navModeNames(n NavModes) []string {
	var s []string
	for _, x := range []struct {
		f    NavModes
		name string
	}{{NavAutopilot, "autopilot"}, {NavVNAV, "vnav"}, {NavAltitudeHold, "althold"}, {NavApproach, "approach"}, {NavTCAS, "tcas"}, {NavLNAV, "lnav"}} {
		if n&x.f != 0 {
			s = append(s, x.name)
		}
	}
	return s
}

func capabilityNames(c Capability) []string {
	var s []string
	for _, x := range []struct {
		f    Capability
		name string
	}{{CapACAS, "ACAS"}, {CapCDTI, "CDTI"}, {CapARV, "ARV"}, {CapTS, "TS"}, {CapTC1, "TC"}, {CapTC2, "TC"}, {CapUATIn, "UAT"}, {CapPOA, "POA"}, {CapB2Low, "B2LOW"}} {
		if c&x.f != 0 && !slices.Contains(s, x.name) {
			s = append(s, x.name)
		}
	}
	return s
}

func opModeNames(o OperationalMode) []string {
	var s []string
	for _, x := range []struct {
		f    OperationalMode
		name string
	}{{OpACASRA, "RA"}, {OpIdent, "IDENT"}, {OpATC, "ATC"}, {OpSAF, "SAF"}} {
		if o&x.f != 0 {
			s = append(s, x.name)
		}
	}
	return s
}

// derived compares with the values the vector authors computed themselves.
func (c *checker) derived(m *Message, d map[string]any) {
	if d == nil {
		return
	}
	t := c.t
	if x, ok := d["df"]; ok {
		want, _ := strconv.Atoi(x.(json.Number).String())
		if want >= 24 {
			want = 24 // DF 24-31 are one format (Comm-D): two DF bits
		}
		if int(m.DF) != want {
			t.Errorf("derived df %v, got %d", x, m.DF)
		}
	}
	if x, ok := d["crc_remainder_hex"]; ok {
		if got := fmt.Sprintf("%06X", m.CRCRemainder); got != x {
			t.Errorf("derived crc remainder %v, got %s", x, got)
		}
	}
	if x, ok := d["typecode"]; ok {
		if got := fmt.Sprint(m.TypeCode); got != x.(json.Number).String() {
			t.Errorf("derived typecode %v, got %s", x, got)
		}
	}
	if x, ok := d["crc_ok"]; ok {
		if got := m.CRC == CRCValid; got != x {
			t.Errorf("derived crc_ok %v, got %v", x, got)
		}
	}
}

var (
	reDF   = regexp.MustCompile(`^(\d+) (?:AA|addr):([0-9A-F]{6})(.*)$`)
	reKV   = regexp.MustCompile(`(\w+):([0-9A-F]+)`)
	reType = regexp.MustCompile(`\((\d+)(?:/(\d+))?\)$`)
	reInt  = regexp.MustCompile(`^(-?\d+)`)
)

// crosscheck compares with what dump1090-mutability printed for the frame.
// Its vertical-rate source label is inverted (fixed upstream in 2018) and
// its surface speeds use another quantisation table, so those two are not
// compared; its speeds and headings are printed as integers.
func (c *checker) crosscheck(m *Message, r any) {
	t := c.t
	switch r := r.(type) {
	case nil:
		return
	case string:
		// Not output: dump1090 dropped it for a bad CRC, or because it is
		// an address/parity frame from an aircraft it had not seen.
		if m.CRC == CRCValid {
			t.Errorf("dump1090 dropped the frame but its CRC is valid here")
		}
		return
	case map[string]any:
		if x, ok := r["CRC"].(string); ok {
			if got := fmt.Sprintf("%06X", m.CRCRemainder); !strings.EqualFold(got, x) {
				t.Errorf("dump1090 CRC %s, got %s", x, got)
			}
		}
		if x, ok := r["DF"].(string); ok {
			g := reDF.FindStringSubmatch(x)
			if g == nil {
				t.Fatalf("dump1090 DF line %q", x)
			}
			if g[1] != strconv.Itoa(int(m.DF)) || g[2] != m.ICAO() {
				t.Errorf("dump1090 DF %s address %s, got DF %d address %s", g[1], g[2], m.DF, m.ICAO())
			}
			for _, kv := range reKV.FindAllStringSubmatch(g[3], -1) {
				v, _ := strconv.ParseUint(kv[2], 16, 64)
				dec, _ := strconv.ParseUint(kv[2], 10, 64)
				var got, want uint64
				switch kv[1] {
				case "CA":
					got, want = uint64(m.CA), dec
				case "CF":
					got, want = uint64(m.CF), dec
				case "IID":
					got, want = uint64(m.IID), dec
				case "VS":
					got, want = uint64(m.VS), dec
				case "CC":
					got, want = uint64(m.CC), dec
				case "SL":
					got, want = uint64(m.SL), dec
				case "RI":
					got, want = uint64(m.RI), dec
				case "ME":
					got, want = m.ME(), v
				case "AC":
					w := uint32(m.Frame[2])<<8 | uint32(m.Frame[3])
					got, want = uint64(w&0x1FFF), dec
				default:
					continue
				}
				if got != want {
					t.Errorf("dump1090 %s:%s, got %d", kv[1], kv[2], got)
				}
			}
		}
		if x, ok := r["Altitude"].(string); ok {
			want := mustInt(t, x)
			if !m.HasAltitude || int(m.Altitude) != want {
				t.Errorf("dump1090 altitude %q, got %d (present %v)", x, m.Altitude, m.HasAltitude)
			}
		}
		if x, ok := r["CPR odd flag"].(string); ok && (x == "odd") != m.CPR.Odd {
			t.Errorf("dump1090 CPR flag %s, got odd=%v", x, m.CPR.Odd)
		}
		if x, ok := r["CPR latitude"].(string); ok && mustInt(t, x) != int(m.CPR.Lat) {
			t.Errorf("dump1090 CPR lat %s, got %d", x, m.CPR.Lat)
		}
		if x, ok := r["CPR longitude"].(string); ok && mustInt(t, x) != int(m.CPR.Lon) {
			t.Errorf("dump1090 CPR lon %s, got %d", x, m.CPR.Lon)
		}
		if x, ok := r["Ident"].(string); ok && x != m.Callsign.String() {
			t.Errorf("dump1090 ident %q, got %q", x, m.Callsign.String())
		}
		if x, ok := r["Category"].(string); ok && x != m.EmitterCategory() {
			t.Errorf("dump1090 category %q, got %q", x, m.EmitterCategory())
		}
		if x, ok := r["Squawk"].(string); ok && x != m.Squawk.String() {
			t.Errorf("dump1090 squawk %q, got %q", x, m.Squawk)
		}
		if x, ok := r["Speed"].(string); ok && m.Kind == KindAirborneVelocity {
			want := float64(mustInt(t, x))
			got := m.Groundspeed
			if strings.Contains(x, "TAS") || strings.Contains(x, "IAS") {
				got = m.Airspeed
			}
			if math.Abs(got-want) > 1 {
				t.Errorf("dump1090 speed %q, got %v", x, got)
			}
		}
		// dump1090-mutability's ground track for velocity subtypes 1-2 is
		// consistently 1.1-1.2° above atan2 of the velocity components
		// (182.88 printed as 184) while pyModeS, adsb_deku and dump1090-fa
		// agree with atan2 (checked through expect and the capture test),
		// so only its airspeed-heading and surface track are compared.
		if x, ok := r["Heading"].(string); ok && !(m.Kind == KindAirborneVelocity && m.Subtype <= 2) {
			want := float64(mustInt(t, x))
			got := m.Track
			if m.HasHeading {
				got = m.Heading
			}
			if d := math.Abs(got - want); d > 1 && d < 359 {
				t.Errorf("dump1090 heading %q, got %v", x, got)
			}
		}
		if x, ok := r["Vertical rate"].(string); ok && mustInt(t, x) != int(m.VerticalRate) {
			t.Errorf("dump1090 vertical rate %q, got %d", x, m.VerticalRate)
		}
		if x, ok := r["GNSS delta"].(string); ok && mustInt(t, x) != int(m.GeoMinusBaro) {
			t.Errorf("dump1090 GNSS delta %q, got %d", x, m.GeoMinusBaro)
		}
		if x, ok := r["type"].(string); ok {
			if g := reType.FindStringSubmatch(x); g != nil && m.DF >= 17 && m.DF <= 18 {
				if g[1] != strconv.Itoa(int(m.TypeCode)) {
					t.Errorf("dump1090 type %q, got type code %d", x, m.TypeCode)
				}
				if g[2] != "" && g[2] != strconv.Itoa(int(m.Subtype)) {
					t.Errorf("dump1090 type %q, got subtype %d", x, m.Subtype)
				}
			}
		}
	}
}

func mustInt(t *testing.T, s string) int {
	t.Helper()
	g := reInt.FindStringSubmatch(strings.TrimSpace(s))
	if g == nil {
		t.Fatalf("no integer in %q", s)
	}
	n, _ := strconv.Atoi(g[1])
	return n
}

// bitwiseSyndrome is the remainder of a frame computed bit by bit: the
// parity of the data bits XOR the parity field.
func bitwiseSyndrome(f []byte) uint32 {
	n := len(f)
	return bitwiseCRC(f[:n-3]) ^ (uint32(f[n-3])<<16 | uint32(f[n-2])<<8 | uint32(f[n-1]))
}

// bitwiseCRC is the textbook bit-at-a-time CRC-24, independent of the
// package's table.
func bitwiseCRC(f []byte) uint32 {
	const poly = 0xFFF409
	var c uint32
	for _, x := range f {
		for k := 7; k >= 0; k-- {
			top := (c >> 23) & 1
			c = (c << 1) & 0xFFFFFF
			if top^uint32(x>>k)&1 != 0 {
				c ^= poly
			}
		}
	}
	return c
}
