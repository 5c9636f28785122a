package fusion

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/worker"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/events/eventstest"
	"github.com/cuasd/cuasd/internal/testshared"
)

// issue 21 tests: readsb's per-aircraft ADS-B fields.

// workerObs decodes a frame with the pipeline's ADS-B worker.
func workerObs(t *testing.T, hexFrame string, recv int64) decode.Observation {
	t.Helper()
	var f [14]byte
	n, err := adsb.ParseHex(&f, hexFrame)
	if err != nil {
		t.Fatal(err)
	}
	out, err := (&worker.ADSB{}).Decode(f[:n], worker.Meta{}, nil)
	if err != nil || len(out) != 1 {
		t.Fatalf("%s: %v, %d observations", hexFrame, err, len(out))
	}
	o := out[0]
	o.Protocol, o.Sensor, o.TimeUnixNano = decode.ADSB, "s", recv
	return o
}

// TestNICRcTable: NIC and Rc by type code, version and supplements,
// transcribed from DO-260B tables 2-14 (airborne) and 2-15 (surface) and
// their version 0/1 counterparts as readsb's compute_nic/compute_rc
// apply them (Rc in metres, rounded up; 0 unknown).
func TestNICRcTable(t *testing.T) {
	for _, c := range []struct {
		tc, v      uint8
		a, b, cc   bool
		nic        uint8
		rc         uint16
		annotation string
	}{
		{9, 2, false, false, false, 11, 8, "Rc < 7.5 m"},
		{10, 0, false, false, false, 10, 25, "Rc < 25 m"},
		{11, 0, false, false, false, 8, 186, "v0: Rc < 0.1 NM"},
		{11, 1, true, false, false, 9, 75, "v1 NIC supplement: Rc < 75 m"},
		{11, 2, true, false, false, 8, 186, "v2 needs NIC-A and NIC-B for 75 m"},
		{11, 2, true, true, false, 9, 75, ""},
		{12, 2, false, false, false, 7, 371, "Rc < 0.2 NM"},
		{13, 2, false, true, false, 6, 556, "Rc < 0.3 NM"},
		{13, 2, false, false, false, 6, 926, "Rc < 0.5 NM"},
		{13, 2, true, true, false, 6, 1112, "Rc < 0.6 NM"},
		{13, 2, true, false, false, 6, 0, "combination not defined"},
		{13, 1, true, false, false, 6, 1112, ""},
		{14, 0, false, false, false, 5, 1852, "Rc < 1 NM"},
		{15, 2, false, false, false, 4, 3704, "Rc < 2 NM"},
		{16, 0, false, false, false, 2, 18520, "v0: Rc < 10 NM"},
		{16, 1, true, false, false, 2, 7408, "v1: NIC 2 with Rc < 4 NM (readsb)"},
		{16, 2, true, true, false, 3, 7408, "Rc < 4 NM"},
		{16, 2, false, false, false, 2, 14816, "Rc < 8 NM"},
		{17, 2, false, false, false, 1, 37040, "Rc < 20 NM"},
		{18, 2, false, false, false, 0, 0, "unknown"},
		{20, 2, false, false, false, 11, 8, "GNSS altitude"},
		{21, 0, false, false, false, 10, 25, ""},
		{22, 2, false, false, false, 0, 0, ""},
		{5, 2, false, false, false, 11, 8, "surface"},
		{7, 2, true, false, false, 9, 75, ""},
		{7, 2, true, false, true, 8, 186, ""},
		{8, 2, true, false, true, 7, 371, ""},
		{8, 2, true, false, false, 6, 556, ""},
		{8, 2, false, false, true, 6, 926, ""},
		{8, 2, false, false, false, 0, 0, ""},
		{8, 1, true, false, true, 0, 0, "v1: unknown"},
	} {
		if n, r := nicOf(c.tc, c.v, c.a, c.b, c.cc), rcOf(c.tc, c.v, c.a, c.b, c.cc); n != c.nic || r != c.rc {
			t.Errorf("TC %d v%d A%v B%v C%v: NIC %d Rc %d, want %d %d (%s)", c.tc, c.v, c.a, c.b, c.cc, n, r, c.nic, c.rc, c.annotation)
		}
	}
}

// TestADSBInfoVersion0Pair: a version 0 aircraft (no operational status)
// whose pair of TC 11 positions (pyModeS' 40058B pair) decodes: readsb
// reports nic 8 and sil 2 for a TC 11 position of such an aircraft (the
// adsbx-1bit-fixed-a48e3a vector, dump1090 output), Rc < 0.1 NM, and the
// type is mode_s before the first position, adsb_icao from it on.
func TestADSBInfoVersion0Pair(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	t0 := c.t.UnixNano()
	even := workerObs(t, "8D40058B58C901375147EFD09357", t0)
	s.Apply(&even)
	tr, _ := s.Get("adsb:40058B")
	if tr.ADSB == nil || tr.ADSB.AddressType != adsb.AddrModeS || tr.ADSB.HasNIC || tr.HasPosition {
		t.Fatalf("before the pair: %+v", tr.ADSB)
	}
	odd := workerObs(t, "8D40058B58C904A87F402D3B8C59", t0+int64(time.Second))
	s.Apply(&odd)
	tr, _ = s.Get("adsb:40058B")
	a := tr.View(false).ADSB
	if !tr.HasPosition || a == nil || a.AddressType != "adsb_icao" || a.NIC == nil || *a.NIC != 8 || *a.RcM != 186 ||
		a.SIL == nil || *a.SIL != 2 || a.SILType != "unknown" || a.Version != nil || a.AirGround != "airborne" {
		t.Fatalf("after the pair: position %v, %+v", tr.HasPosition, a)
	}
}

// TestADSBInfoSurface: the EHAM surface pair of "The 1090 MHz Riddle"
// (DF17 CA 4, TC 7) puts an airborne aircraft on the ground; an
// airborne position (CA 5) takes it back up.
func TestADSBInfoSurface(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	t0 := c.t.UnixNano()
	o := decode.Observation{Protocol: decode.ADSB, Key: "484175", ICAO: "484175", TimeUnixNano: t0,
		AddrType: uint8(adsb.AddrADSBICAO), AirGround: decode.AirGroundAirborne}
	s.Apply(&o)
	for i, h := range []string{"8C4841753AAB238733C8CD4020B1", "8C4841753A8A35323FAEBDAC702D"} {
		o := workerObs(t, h, t0+int64(i+1)*int64(time.Second))
		s.Apply(&o)
	}
	if tr, _ := s.Get("adsb:484175"); tr.ADSB == nil || tr.ADSB.AirGround != decode.AirGroundGround {
		t.Fatalf("after surface positions: %+v", tr.ADSB)
	}
	// An uncertain Mode S reply does not undo a CPR frame's ground.
	o = decode.Observation{Protocol: decode.ADSB, Key: "484175", TimeUnixNano: t0 + 4e9, ModeSReply: true,
		AddrType: uint8(adsb.AddrModeS), AirGround: decode.AirGroundUncertain}
	s.Apply(&o)
	if tr, _ := s.Get("adsb:484175"); tr.ADSB.AirGround != decode.AirGroundGround {
		t.Fatalf("after an uncertain reply: %v", tr.ADSB.AirGround)
	}
	o = workerObs(t, "8D40058B58C901375147EFD09357", t0+5e9) // an airborne position, CA 5
	o.Key, o.ICAO = "484175", "484175"
	s.Apply(&o)
	if tr, _ := s.Get("adsb:484175"); tr.ADSB.AirGround != decode.AirGroundAirborne {
		t.Fatalf("after an airborne position: %v", tr.ADSB.AirGround)
	}
}

// TestAddressTypeHysteresis: readsb's rule — the first message sets the
// type, a more direct one replaces it only after 45 s, a less direct one
// after 90 s.
func TestAddressTypeHysteresis(t *testing.T) {
	var a adsbState
	steps := []struct {
		typ  adsb.AddressType
		at   int64 // seconds
		want adsb.AddressType
	}{
		{adsb.AddrTISBICAO, 0, adsb.AddrTISBICAO},
		{adsb.AddrADSRICAO, 10, adsb.AddrTISBICAO},   // better, too soon
		{adsb.AddrADSRICAO, 46, adsb.AddrADSRICAO},   // better, after 45 s
		{adsb.AddrTISBOther, 100, adsb.AddrADSRICAO}, // worse, too soon
		{adsb.AddrTISBOther, 137, adsb.AddrTISBOther},
		{adsb.AddrADSBICAO, 200, adsb.AddrModeS}, // DF17 before an ADS-B position
	}
	for _, st := range steps {
		a.updateType(st.typ, st.at*1e9, false)
		if a.AddressType != st.want {
			t.Fatalf("at %d s after %s: %s, want %s", st.at, st.typ, a.AddressType, st.want)
		}
	}
}

// captureOracle is what dump1090's verbose decode of the capture
// (../shared/data/adsb/…dump1090_decoded.txt) last said per aircraft.
type captureOracle struct {
	version, sil map[string]int
	silType      map[string]string // from operational status messages
	navHeading   map[string]float64
	nucp         map[string]map[int]bool
}

func readCaptureOracle(t *testing.T) captureOracle {
	t.Helper()
	raw, err := os.ReadFile(testshared.Path(t, "data", "adsb", "beastblackbox_ulss7_2018-04-03.dump1090_decoded.txt"))
	if err != nil {
		t.Fatal(err)
	}
	o := captureOracle{map[string]int{}, map[string]int{}, map[string]string{}, map[string]float64{}, map[string]map[int]bool{}}
	aa := regexp.MustCompile(`^DF:1[78] AA:([0-9A-F]{6})`)
	val := regexp.MustCompile(`^\s+(Version|SIL|Target heading|CPR NUCp/NIC):\s+(\d+)(?: \((per hour|per sample)\))?`)
	var cur string
	opstatus := false
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		l := sc.Text()
		if m := aa.FindStringSubmatch(l); m != nil {
			cur, opstatus = m[1], false
			continue
		}
		if bytes.Contains([]byte(l), []byte("Aircraft Operational Status:")) {
			opstatus = true
		}
		m := val.FindStringSubmatch(l)
		if m == nil || cur == "" {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		switch m[1] {
		case "Version":
			o.version[cur] = n
		case "SIL":
			o.sil[cur] = n
			if opstatus {
				o.silType[cur] = map[string]string{"per hour": "perhour", "per sample": "persample"}[m[3]]
			}
		case "Target heading":
			o.navHeading[cur] = float64(n)
		case "CPR NUCp/NIC":
			if o.nucp[cur] == nil {
				o.nucp[cur] = map[int]bool{}
			}
			o.nucp[cur][n] = true
		}
	}
	return o
}

// TestADSBInfoFromCapture runs the real Beast capture through the
// pipeline's decoder and the store and compares each aircraft's version,
// SIL, SIL type (of its operational status) and selected heading with the
// last ones dump1090 decoded; aircraft whose positions were all TC 11
// (NUCp 7 in dump1090's text) of version 2 without NIC supplements
// (none in the capture) have NIC 8 and Rc < 0.1 NM (DO-260B table
// 2-14). The track events carrying the block match their schema.
func TestADSBInfoFromCapture(t *testing.T) {
	raw, err := os.ReadFile(testshared.Path(t, "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin"))
	if err != nil {
		t.Fatal(err)
	}
	want := readCaptureOracle(t)
	c := &clock{time.Unix(1_522_782_148, 0)}
	s := newTestStore(c)
	d := &worker.ADSB{}
	var out []decode.Observation
	for f, err := range adsb.BeastFrames(raw) {
		if err != nil || f.Type == adsb.BeastModeAC {
			continue
		}
		out, _ = d.Decode(f.Bytes(), worker.Meta{}, out[:0])
		for i := range out {
			o := &out[i]
			o.Protocol, o.Sensor = decode.ADSB, "capture"
			o.TimeUnixNano = c.t.UnixNano() + int64(f.Micros()*1e3)
			s.Apply(o)
		}
	}
	counts := map[string]int{}
	for _, tr := range s.List(Filter{}) {
		v := tr.View(false)
		a, icao := v.ADSB, tr.ICAO
		if a == nil {
			t.Errorf("%s: no ADS-B block", icao)
			continue
		}
		checkOracle(t, icao, a, want, counts)
		if tr.HasPosition {
			counts["positions"]++
			if a.AddressType != "adsb_icao" || a.AirGround == "ground" || a.NIC == nil {
				t.Errorf("%s: type %s, air/ground %s, nic %v", icao, a.AddressType, a.AirGround, a.NIC)
			}
			if n := want.nucp[icao]; len(n) == 1 && n[7] && a.Version != nil && *a.Version == 2 {
				counts["nic"]++
				if *a.NIC != 8 || *a.RcM != 186 {
					t.Errorf("%s: TC 11 positions, version 2: nic %d rc %d, want 8, 186", icao, *a.NIC, *a.RcM)
				}
			}
		}
		ev := events.TrackEvent{Header: events.Header{V: 1, Type: events.TypeTrackUpdate, Time: c.t, Instance: "test"}, Track: v}
		b, _ := json.Marshal(ev)
		eventstest.Validate(t, bus.TrackSubject("adsb", icao), b)
	}
	t.Logf("checked against dump1090: %v", counts)
	for k, min := range map[string]int{"version": 3, "sil": 3, "sil_type": 3, "nav_heading": 2, "positions": 10, "nic": 1} {
		if counts[k] < min {
			t.Errorf("%d aircraft checked for %s, want at least %d", counts[k], k, min)
		}
	}
}

func checkOracle(t *testing.T, icao string, a *events.ADSBInfo, want captureOracle, counts map[string]int) {
	t.Helper()
	eqInt := func(name string, got *int, w int, ok bool) {
		if !ok {
			if got != nil {
				t.Errorf("%s: %s %d, dump1090 decoded none", icao, name, *got)
			}
			return
		}
		counts[name]++
		if got == nil || *got != w {
			t.Errorf("%s: %s %v, dump1090 %d", icao, name, got, w)
		}
	}
	v, ok := want.version[icao]
	eqInt("version", a.Version, v, ok)
	sil, ok := want.sil[icao]
	if ok { // a version 0 aircraft's SIL is derived, not decoded
		eqInt("sil", a.SIL, sil, ok)
	}
	if st, ok := want.silType[icao]; ok {
		counts["sil_type"]++
		if a.SILType != st {
			t.Errorf("%s: sil_type %q, dump1090 %q", icao, a.SILType, st)
		}
	}
	if h, ok := want.navHeading[icao]; ok {
		counts["nav_heading"]++
		// dump1090 prints whole degrees.
		if a.NavHeadingDeg == nil || math.Abs(*a.NavHeadingDeg-h) > 1 {
			t.Errorf("%s: nav heading %v, dump1090 %v", icao, a.NavHeadingDeg, h)
		}
	} else if a.NavHeadingDeg != nil {
		t.Errorf("%s: nav heading %v, dump1090 decoded none", icao, *a.NavHeadingDeg)
	}
}

// FuzzADSBInfo drives the issue 21 path end to end with arbitrary
// payloads made CRC-valid (so that the decoder does not refuse them): the
// worker's block, its codec round trip, and the store's state and view.
// Values stay within their fields' ranges and the view within its schema.
func FuzzADSBInfo(f *testing.F) {
	for _, h := range []string{"8dacc040f8210002004ab8569c35", "8da08f94ea1b785e8f3c088ab467", "96A4D01FF900210600493075E234",
		"8C4841753AAB238733C8CD4020B1", "8D40058B58C901375147EFD09357", "2A00516D492B80"} {
		b, _ := hexDecode(h)
		f.Add(b, b)
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		c := &clock{time.Unix(1_700_000_000, 0)}
		s := newTestStore(c)
		d := &worker.ADSB{}
		for i, fr := range [][]byte{a, b} {
			if len(fr) != 14 && len(fr) != 7 {
				return
			}
			fr = append([]byte(nil), fr...)
			if fr[0]>>3 == 17 || fr[0]>>3 == 18 {
				n := len(fr)
				fr[n-3], fr[n-2], fr[n-1] = 0, 0, 0
				p := adsb.Syndrome(fr)
				fr[n-3], fr[n-2], fr[n-1] = byte(p>>16), byte(p>>8), byte(p)
			}
			out, err := d.Decode(fr, worker.Meta{}, nil)
			if err != nil || len(out) != 1 {
				continue
			}
			o := out[0]
			checkBlock(t, &o)
			var back decode.Observation
			if err := back.UnmarshalBinary(o.AppendBinary(nil)); err != nil {
				t.Fatalf("codec: %v", err)
			}
			back.Protocol, back.Sensor, back.TimeUnixNano = decode.ADSB, "s", c.t.UnixNano()+int64(i)*1e9
			s.Apply(&back)
		}
		for _, tr := range s.List(Filter{}) {
			v := tr.View(false).ADSB
			if v == nil {
				continue
			}
			if v.NIC != nil && *v.NIC > 11 || v.SIL != nil && *v.SIL > 3 || v.NavHeadingDeg != nil && (*v.NavHeadingDeg < 0 || *v.NavHeadingDeg > 360) {
				t.Fatalf("view out of range: %+v", v)
			}
		}
	})
}

func hexDecode(h string) ([]byte, error) {
	var f [14]byte
	n, err := adsb.ParseHex(&f, h)
	return f[:n], err
}

// checkBlock: every value of the worker's issue 21 block is within its
// field's range.
func checkBlock(t *testing.T, o *decode.Observation) {
	t.Helper()
	tc := o.PosTypeCode
	if o.AddrType > uint8(adsb.AddrADSROther) || o.AirGround > decode.AirGroundAirborne || o.NACv > 7 || o.SIL > 3 ||
		o.SILType > decode.SILPerSample || o.Version > 7 || tc != 0 && (tc < 5 || tc > 22 || tc == 19) ||
		o.HasNavHeading && (o.NavHeadingDeg < 0 || o.NavHeadingDeg >= 360) || o.HasNICC && o.Version != 2 {
		t.Fatalf("block out of range: %+v", o)
	}
}
