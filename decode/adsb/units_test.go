package adsb

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"testing"
)

// The generated tables, re-derived independently.

func TestCRCTable(t *testing.T) {
	for i := range 256 {
		if got, want := CRC24([]byte{byte(i), 0, 0}), bitwiseCRC([]byte{byte(i), 0, 0}); got != want {
			t.Fatalf("CRC24(%02X 00 00) = %06X, bitwise %06X", i, got, want)
		}
	}
	// Random-looking data, all lengths.
	data := []byte("\x8d\x40\x6b\x90\x20\x15\xa6\x78\xd4\xd2\x20\xaa\x4b\xda")
	for n := range len(data) + 1 {
		if got, want := CRC24(data[:n]), bitwiseCRC(data[:n]); got != want {
			t.Errorf("CRC24 over %d bytes = %06X, bitwise %06X", n, got, want)
		}
	}
	if CRCGenerator != 0x1FFF409 {
		t.Errorf("generator %X", CRCGenerator)
	}
}

func TestSyndromeMatchesBitwise(t *testing.T) {
	// A deterministic pseudo-random walk over frames of every length the
	// fast paths and the general path handle.
	x := uint64(0x9E3779B97F4A7C15)
	for n := 4; n <= 14; n++ {
		f := make([]byte, n)
		for range 2000 {
			for i := range f {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				f[i] = byte(x)
			}
			if got, want := Syndrome(f), bitwiseSyndrome(f); got != want {
				t.Fatalf("Syndrome(%X) = %06X, bitwise %06X", f, got, want)
			}
		}
	}
}

func TestSyndromeTable(t *testing.T) {
	seen := map[uint32]int{}
	for i := range 112 {
		var f [14]byte
		f[i/8] = 0x80 >> (i % 8)
		if got, want := syndrome112[i], bitwiseSyndrome(f[:]); got != want {
			t.Errorf("syndrome112[%d] = %06X, bitwise %06X", i, got, want)
		}
		if j, dup := seen[syndrome112[i]]; dup {
			t.Errorf("bits %d and %d share a syndrome: 1-bit correction would be ambiguous", j, i)
		}
		seen[syndrome112[i]] = i
	}
}

func TestNLTable(t *testing.T) {
	// The closed form of DO-260B A.1.7.2, evaluated away from the
	// transition latitudes where rounding could differ.
	nlFormula := func(lat float64) int {
		if lat == 0 {
			return 59
		}
		if math.Abs(lat) > 87 {
			return 1
		}
		a := 1 - math.Cos(math.Pi/30)
		c := math.Cos(math.Pi / 180 * math.Abs(lat))
		return int(math.Floor(2 * math.Pi / math.Acos(1-a/(c*c))))
	}
	for lat := -89.995; lat < 90; lat += 0.01 {
		if got, want := NL(lat), nlFormula(lat); got != want {
			t.Errorf("NL(%v) = %d, formula %d", lat, got, want)
		}
	}
	// dump1090's table, to its 8 decimals.
	for _, c := range []struct {
		lat float64
		nl  int
	}{{10.47047129, 59}, {10.47047131, 58}, {14.82817436, 58}, {14.82817438, 57}, {86.99999999, 2}, {87, 2}, {87.00000001, 1}, {-87.5, 1}, {0, 59}} {
		t.Run(fmt.Sprint(c.lat), func(t *testing.T) {
			if got := NL(c.lat); got != c.nl {
				t.Errorf("NL(%v) = %d, want %d", c.lat, got, c.nl)
			}
		})
	}
}

func TestGillhamAltitudes(t *testing.T) {
	// Gillham 100 ft code: round trip over every altitude it can express,
	// with an encoder written from the Annex 10 description (reflected
	// Gray code of the 500 ft count; 5-state code for the 100 ft step,
	// reversed on odd 500 ft counts).
	// C1 C2 C4 for the 1st..5th 100 ft step: 001 011 010 110 100, written
	// as the digit C (C1 = 1, C2 = 2, C4 = 4).
	grayC := [5]Squawk{4, 6, 2, 3, 1}
	for alt := int32(-1200); alt <= 126700; alt += 100 {
		n := alt/100 + 12 // 0 .. 1279
		fives, hundreds := n/5, n%5
		if fives%2 == 1 {
			hundreds = 4 - hundreds
		}
		g := Squawk(fives ^ fives>>1) // reflected binary Gray code
		// Gray bits, MSB first: D2 D4 A1 A2 A4 B1 B2 B4.
		var s Squawk
		put := func(bit int, nib Squawk) {
			if g>>bit&1 != 0 {
				s |= nib
			}
		}
		put(7, 0x0002) // D2
		put(6, 0x0004) // D4
		put(5, 0x1000) // A1
		put(4, 0x2000) // A2
		put(3, 0x4000) // A4
		put(2, 0x0100) // B1
		put(1, 0x0200) // B2
		put(0, 0x0400) // B4
		s |= grayC[hundreds] << 4
		h, ok := gillham(s)
		if !ok || h*100 != alt {
			t.Fatalf("altitude %d: code %v decodes as %d00 (ok %v)", alt, s, h, ok)
		}
	}
}

func TestAltitudeCodes(t *testing.T) {
	for _, c := range []struct {
		ac   uint32
		want int32
		ok   bool
	}{
		{0, 0, false},       // no altitude
		{0x40, 0, false},    // metric
		{0x10, -1000, true}, // Q=1, N=0
		{0x1FBF, 50175, true},
	} {
		t.Run(fmt.Sprintf("%04X", c.ac), func(t *testing.T) {
			got, ok := decodeAC13(c.ac)
			if ok != c.ok || got != c.want {
				t.Errorf("decodeAC13(%04X) = %d, %v; want %d, %v", c.ac, got, ok, c.want, c.ok)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	var m Message
	for _, f := range [][]byte{nil, {0x8d}, make([]byte, 13), make([]byte, 15), make([]byte, 14), append([]byte{0x8d}, make([]byte, 6)...)} {
		t.Run(fmt.Sprintf("%d bytes", len(f)), func(t *testing.T) {
			if err := Decode(f, &m); !errors.Is(err, ErrLength) {
				t.Errorf("Decode(% X) = %v, want ErrLength", f, err)
			}
		})
	}
}

func TestSquawkString(t *testing.T) {
	for s, want := range map[Squawk]string{0x7500: "7500", 0x0000: "0000", 0x1200: "1200", 0x7777: "7777"} {
		t.Run(want, func(t *testing.T) {
			if s.String() != want {
				t.Errorf("%04X → %q, want %q", uint16(s), s.String(), want)
			}
		})
	}
}

func TestParseHex(t *testing.T) {
	var b [14]byte
	for in, want := range map[string]string{
		"8D406B902015A678D4D220AA4BDA":       "8D406B902015A678D4D220AA4BDA",
		" 8d406b90 2015a678\td4d220aa4bda\n": "8D406B902015A678D4D220AA4BDA",
		"*8D406B902015A678D4D220AA4BDA;":     "8D406B902015A678D4D220AA4BDA",
		"*8D406B902015A678D4D220AA4BDA;\r\n": "8D406B902015A678D4D220AA4BDA",
		"5dab3d17d4ba29":                     "5DAB3D17D4BA29",
	} {
		t.Run(in, func(t *testing.T) {
			n, err := ParseHex(&b, in)
			if err != nil || string(hexUpper(b[:n])) != want {
				t.Errorf("ParseHex(%q) = %X, %v; want %s", in, b[:n], err, want)
			}
		})
	}
	for in, want := range map[string]error{
		"8D4":                             ErrHex,
		"8D406B9G":                        ErrHex,
		"0x8D406B":                        ErrHex,
		"8D406B902015A678D4D220AA4BDA00":  ErrLength,
		"8D406B902015A678D4D220AA4BDA;00": ErrHex,
		"8D406B90*2015A678D4D220AA4BDA":   ErrHex,
	} {
		t.Run(in, func(t *testing.T) {
			if _, err := ParseHex(&b, in); err != want {
				t.Errorf("ParseHex(%q) error %v, want %v", in, err, want)
			}
		})
	}
}

func hexUpper(b []byte) []byte {
	const d = "0123456789ABCDEF"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, d[c>>4], d[c&15])
	}
	return out
}

func TestParseAVRForms(t *testing.T) {
	const frame = "8D406B902015A678D4D220AA4BDA"
	for _, c := range []struct {
		line       string
		ts         uint64
		hasTS      bool
		sig        uint8
		hasSig     bool
		wantErr    bool
		wantLength int
	}{
		{line: "*" + frame + ";", wantLength: 14},
		{line: ":" + frame + ";\r\n", wantLength: 14},
		{line: "@0123456789AB" + frame + ";", ts: 0x0123456789AB, hasTS: true, wantLength: 14},
		{line: "%0123456789ab" + frame + ";", ts: 0x0123456789AB, hasTS: true, wantLength: 14},
		{line: "<0123456789ABC8" + frame + ";", ts: 0x0123456789AB, hasTS: true, sig: 0xC8, hasSig: true, wantLength: 14},
		{line: "*5dab3d17d4ba29;", wantLength: 7},
		{line: "*2A00;", wantLength: 2},
		{line: frame, wantErr: true},
		{line: "*" + frame, wantErr: true},
		{line: "*" + frame[:27] + ";", wantErr: true},
		{line: "*" + frame[:26] + "ZZ;", wantErr: true},
		{line: "@0123" + frame + ";", wantErr: true},
		{line: "#" + frame + ";", wantErr: true},
		{line: ";", wantErr: true},
	} {
		t.Run(c.line, func(t *testing.T) {
			var f AVRFrame
			err := ParseAVR([]byte(c.line), &f)
			if (err != nil) != c.wantErr {
				t.Errorf("ParseAVR(%q) error %v", c.line, err)
				return
			}
			if c.wantErr {
				return
			}
			if int(f.Len) != c.wantLength || f.HasTimestamp != c.hasTS || f.Timestamp != c.ts || f.HasSignal != c.hasSig || f.Signal != c.sig {
				t.Errorf("ParseAVR(%q) = %+v", c.line, f)
			}
		})
	}
}

func TestParseBeastStreaming(t *testing.T) {
	in := BeastFrame{Type: BeastModeSLong, Timestamp: 0x1A1A00001A1A, Signal: 0x1A, Len: 14}
	copy(in.Data[:], []byte{0x8d, 0x1a, 0x1a, 0x90, 0x20, 0x15, 0xa6, 0x78, 0xd4, 0xd2, 0x20, 0xaa, 0x4b, 0x1a})
	enc := AppendBeast(nil, &in)
	// Every prefix is incomplete, the whole is one record.
	for n := range len(enc) {
		var f BeastFrame
		if k, err := ParseBeast(enc[:n], &f); err != ErrIncomplete || k != 0 {
			t.Fatalf("prefix %d: (%d, %v), want ErrIncomplete", n, k, err)
		}
	}
	var f BeastFrame
	if k, err := ParseBeast(enc, &f); err != nil || k != len(enc) || f != in {
		t.Fatalf("ParseBeast = (%d, %v) %+v", k, err, f)
	}
	// Garbage before, a truncated record, an unknown type: the iterator
	// reports each and still finds the good records.
	stream := append([]byte{0x00, 0x42}, enc...)
	stream = append(stream, enc[:10]...) // cut short by the next record
	stream = append(stream, enc...)
	stream = append(stream, 0x1a, '9', 0x00)
	stream = append(stream, enc...)
	var good, errs int
	for f, err := range BeastFrames(stream) {
		if err != nil {
			errs++
			continue
		}
		good++
		if f != in {
			t.Errorf("record %+v", f)
		}
	}
	if good != 3 || errs != 3 {
		t.Errorf("%d records and %d errors, want 3 and 3", good, errs)
	}
	// Trailing partial record.
	var last error
	for _, err := range BeastFrames(enc[:len(enc)-1]) {
		last = err
	}
	if last != ErrIncomplete {
		t.Errorf("last error %v, want ErrIncomplete", last)
	}
}

func TestParseSBS(t *testing.T) {
	var m SBSMessage
	line := []byte("MSG,3,1,1,780A5C,1,2018/04/03,19:02:28.298,2018/04/10,21:24:39.437,UTA470 ,33000,418,170,59.73459,31.99796,-64,7500,-1,0,0,0\r\n")
	if err := ParseSBS(line, &m); err != nil {
		t.Fatal(err)
	}
	if m.TransmissionType != 3 || m.Address != 0x780A5C || m.Callsign.String() != "UTA470" || m.Altitude != 33000 ||
		m.Groundspeed != 418 || m.Track != 170 || m.Lat != 59.73459 || m.Lon != 31.99796 || m.VerticalRate != -64 ||
		m.Squawk.String() != "7500" || !m.Alert || m.Emergency || !m.HasOnGround || m.OnGround ||
		m.Generated.Format("2006-01-02T15:04:05.000") != "2018-04-03T19:02:28.298" {
		t.Errorf("ParseSBS = %+v", m)
	}
	for _, bad := range []string{"", "SEL,,,,", "MSG,9,1,1,780A5C,1,,,,,", "MSG,3,1,1,ZZZZZZ,1,,,,,", "MSG,3,1,1,780A5C,1,,,,,,abc,,,,,,,,,,", "MSG,3,1,1,780A5C,1,,,,,,,,,,,,8888,,,,"} {
		t.Run(bad, func(t *testing.T) {
			if err := ParseSBS([]byte(bad), &m); err == nil {
				t.Errorf("ParseSBS(%q) accepted", bad)
			}
		})
	}
}

func TestIntactFrameNeverFixed(t *testing.T) {
	// FixOneBit must leave good frames alone and never touch DF bits.
	f := []byte{0x8d, 0x40, 0x6b, 0x90, 0x20, 0x15, 0xa6, 0x78, 0xd4, 0xd2, 0x20, 0xaa, 0x4b, 0xda}
	var m Message
	if err := DecodeWith(f, &m, Options{FixOneBit: true}); err != nil || m.BitErrorsFixed != 0 {
		t.Fatalf("(%v, %d)", err, m.BitErrorsFixed)
	}
	for i := range 112 {
		g := bytes.Clone(f)
		g[i/8] ^= 0x80 >> (i % 8)
		err := DecodeWith(g, &m, Options{FixOneBit: true})
		switch {
		case i < 5:
			// A flipped DF bit makes another format (or another length);
			// it must not be "repaired" into a DF17.
			if err == nil && m.DF == 17 && m.BitErrorsFixed != 0 {
				t.Errorf("bit %d (DF field) was repaired", i)
			}
		case err != nil || m.BitErrorsFixed != 1 || !bytes.Equal(m.Bytes(), f) || m.Callsign.String() != "EZY85MH":
			t.Errorf("bit %d: (%v, fixed %d, %X)", i, err, m.BitErrorsFixed, m.Bytes())
		}
	}
}

func TestCPRErrors(t *testing.T) {
	if _, _, err := CPRGlobalAirborne(CPR{Odd: true}, CPR{Odd: true}, true); err != ErrNotPair {
		t.Errorf("two odd: %v", err)
	}
	if _, _, err := CPRGlobalSurface(CPR{}, CPR{Odd: true}, true, 91, 0); err != ErrReference {
		t.Errorf("bad reference: %v", err)
	}
	if _, _, err := CPRLocalAirborne(CPR{}, math.NaN(), 0); err != ErrReference {
		t.Errorf("NaN reference: %v", err)
	}
	var a, b Message
	if _, _, err := GlobalPosition(&a, &b, true, nil); err != ErrNotPosition {
		t.Errorf("no CPR: %v", err)
	}
	a.HasCPR, b.HasCPR, b.CPR.Odd = true, true, true
	a.Address = 1
	if _, _, err := GlobalPosition(&a, &b, true, nil); err != ErrAddressMismatch {
		t.Errorf("addresses: %v", err)
	}
	a.Address = 0
	a.Kind, b.Kind = KindSurfacePosition, KindSurfacePosition
	if _, _, err := GlobalPosition(&a, &b, true, nil); err != ErrReference {
		t.Errorf("surface without reference: %v", err)
	}
}
