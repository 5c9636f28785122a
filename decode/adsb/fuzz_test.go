package adsb

import (
	"bytes"
	"math"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to Decode and DecodeWith and checks the
// properties every decoded message must have.
func FuzzDecode(f *testing.F) {
	for _, fr := range df17Mix {
		f.Add(fr, false)
	}
	f.Fuzz(func(t *testing.T, frame []byte, fix bool) {
		var m Message
		err := DecodeWith(frame, &m, Options{FixOneBit: fix})
		if err == ErrLength {
			return
		}
		if int(m.Len) != len(frame) {
			t.Fatalf("Len %d for %d bytes", m.Len, len(frame))
		}
		if m.CRCRemainder != Syndrome(frame) {
			t.Fatalf("remainder %06X, Syndrome %06X", m.CRCRemainder, Syndrome(frame))
		}
		if err == ErrCRC {
			if m.Kind != KindNone || m.HasCPR || m.HasAltitude || m.HasCallsign || m.HasSquawk {
				t.Fatalf("payload decoded from a frame that failed its CRC: %+v", m)
			}
			return
		}
		if err != nil {
			t.Fatalf("unexpected error %v", err)
		}
		if m.DF == 17 || m.DF == 18 {
			if m.CRC != CRCValid || Syndrome(m.Bytes()) != 0 {
				t.Fatalf("DF%d decoded with CRC status %v", m.DF, m.CRC)
			}
			if m.BitErrorsFixed > 0 && (!fix || bytes.Equal(m.Bytes(), frame)) {
				t.Fatalf("fixed %d bits (fix=%v)", m.BitErrorsFixed, fix)
			}
		}
		if m.HasCPR && (m.CPR.Lat >= 1<<17 || m.CPR.Lon >= 1<<17) {
			t.Fatalf("CPR out of range %+v", m.CPR)
		}
		if m.HasTrack && (m.Track < 0 || m.Track >= 360) || m.HasHeading && (m.Heading < 0 || m.Heading >= 360) {
			t.Fatalf("angle out of range: track %v heading %v", m.Track, m.Heading)
		}
		if m.Squawk&0x8888 != 0 {
			t.Fatalf("squawk %04X has a non-octal digit", uint16(m.Squawk))
		}
		// Decoding is a pure function of the (repaired) frame.
		var again Message
		if err := Decode(m.Bytes(), &again); err != nil {
			t.Fatalf("re-decoding the decoded frame: %v", err)
		}
		again.CRCRemainder, again.BitErrorsFixed = m.CRCRemainder, m.BitErrorsFixed
		if again != m {
			t.Fatalf("re-decoding differs:\n%+v\n%+v", again, m)
		}
		_ = m.EmitterCategory()
		_ = m.Callsign.String()
		_ = m.Kind.String()
	})
}

// FuzzParseAVR checks ParseAVR never panics and that what it accepts
// re-encodes to an equivalent line.
func FuzzParseAVR(f *testing.F) {
	f.Add([]byte("*8D406B902015A678D4D220AA4BDA;"))
	f.Add([]byte("@0123456789AB5dab3d17d4ba29;\r\n"))
	f.Add([]byte("<0123456789ABC88D406B902015A678D4D220AA4BDA;"))
	f.Fuzz(func(t *testing.T, line []byte) {
		var a AVRFrame
		if err := ParseAVR(line, &a); err != nil {
			return
		}
		if a.Len != 2 && a.Len != 7 && a.Len != 14 {
			t.Fatalf("length %d", a.Len)
		}
		var b AVRFrame
		if err := ParseAVR([]byte("*"+hexString(a.Bytes())+";"), &b); err != nil || b.Data != a.Data || b.Len != a.Len {
			t.Fatalf("re-encoding: %v %+v", err, b)
		}
		for range AVRFrames(line) {
		}
	})
}

// FuzzParseBeast checks the Beast parser on arbitrary streams: it never
// panics or loops, always makes progress on errors other than
// ErrIncomplete, and what it accepts re-encodes to the bytes it consumed.
func FuzzParseBeast(f *testing.F) {
	rec := AppendBeast(nil, &BeastFrame{Type: BeastModeSLong, Len: 14, Timestamp: 0x1A001A, Signal: 0x1A, Data: [14]byte(df17Mix[0])})
	f.Add(rec)
	f.Add(append([]byte{0x1a, '1', 0, 0, 0, 0, 0, 0, 9, 0x12, 0x34}, rec...))
	f.Fuzz(func(t *testing.T, b []byte) {
		var fr BeastFrame
		for rest := b; len(rest) > 0; {
			n, err := ParseBeast(rest, &fr)
			if n < 0 || n > len(rest) {
				t.Fatalf("consumed %d of %d", n, len(rest))
			}
			if err == ErrIncomplete {
				if n != 0 {
					t.Fatalf("ErrIncomplete consumed %d", n)
				}
				break
			}
			if n == 0 {
				t.Fatalf("no progress with error %v", err)
			}
			if err == nil && !bytes.Equal(AppendBeast(nil, &fr), rest[:n]) {
				t.Fatalf("record % X re-encodes as % X", rest[:n], AppendBeast(nil, &fr))
			}
			rest = rest[n:]
		}
		for range BeastFrames(b) {
		}
	})
}

// FuzzParseSBS checks ParseSBS never panics.
func FuzzParseSBS(f *testing.F) {
	f.Add([]byte("MSG,3,1,1,780A5C,1,2018/04/03,19:02:28.298,2018/04/10,21:24:39.437,,33000,,,59.73459,31.99796,,,,,,0"))
	f.Add([]byte("MSG,1,1,1,424263,1,2018/04/03,19:02:28.521,2018/04/10,21:24:39.437,UTA470  ,,,,,,,,,,,0"))
	f.Fuzz(func(t *testing.T, line []byte) {
		var m SBSMessage
		if err := ParseSBS(line, &m); err == nil && (m.TransmissionType < 1 || m.TransmissionType > 8) {
			t.Fatalf("transmission type %d", m.TransmissionType)
		}
	})
}

// FuzzCPR checks that every CPR decode either fails with an error or
// returns a latitude and longitude in range.
func FuzzCPR(f *testing.F) {
	f.Add(uint32(93000), uint32(51372), uint32(74158), uint32(50194), false, 52.258, 3.918)
	f.Add(uint32(0), uint32(0), uint32(0), uint32(0), true, 44.0, -180.0)
	f.Fuzz(func(t *testing.T, lat0, lon0, lat1, lon1 uint32, newestOdd bool, refLat, refLon float64) {
		even := CPR{Lat: lat0 & 0x1FFFF, Lon: lon0 & 0x1FFFF}
		odd := CPR{Lat: lat1 & 0x1FFFF, Lon: lon1 & 0x1FFFF, Odd: true}
		check := func(name string, lat, lon float64, err error) {
			if err != nil {
				return
			}
			if !(lat >= -90 && lat <= 90 && lon >= -180 && lon < 180) {
				t.Fatalf("%s: (%v, %v) out of range", name, lat, lon)
			}
		}
		lat, lon, err := CPRGlobalAirborne(even, odd, newestOdd)
		check("global airborne", lat, lon, err)
		lat, lon, err = CPRGlobalSurface(even, odd, newestOdd, refLat, refLon)
		check("global surface", lat, lon, err)
		lat, lon, err = CPRLocalAirborne(even, refLat, refLon)
		check("local airborne", lat, lon, err)
		lat, lon, err = CPRLocalSurface(odd, refLat, refLon)
		check("local surface", lat, lon, err)

	})
}

func hexString(b []byte) string {
	const d = "0123456789ABCDEF"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, d[c>>4], d[c&15])
	}
	return string(out)
}

// FuzzDecodeCommB checks the Comm-B decoder on arbitrary MB fields and
// known states: it never panics, its candidates and rejections are
// disjoint registers, the chosen register is a candidate, and the decoded
// angles and ranges stay inside their formats.
func FuzzDecodeCommB(f *testing.F) {
	for _, mb := range []uint64{0xFFBAA11E200472, 0x30800000000000, 0x10010080F50000, 0x202CC371C31DE0,
		0x85E42F31300000, 0x81951536E024D4, 0x8F39F91A7E27C4, 0x185BD5CF400000, 0x0001FB80000000} {
		f.Add(mb, true, 240.0, 359.0, int32(35000))
	}
	f.Fuzz(func(t *testing.T, mb uint64, meteo bool, gs, trk float64, alt int32) {
		var c CommB
		k := KnownState{HasGroundspeed: true, Groundspeed: gs, HasTrack: true, Track: trk, HasAltitude: true, Altitude: alt}
		for _, known := range []*KnownState{nil, &k} {
			DecodeCommB(mb, known, CommBOptions{Meteo: meteo}, &c)
			if c.Candidates&c.Rejected != 0 {
				t.Fatalf("%#x: candidates %v and rejected %v overlap", mb, c.Candidates.Append(nil), c.Rejected.Append(nil))
			}
			if c.BDS != 0 && !c.Candidates.Has(c.BDS) || c.BDS == 0 && c.Candidates != 0 {
				t.Fatalf("%#x: BDS %v, candidates %v", mb, c.BDS, c.Candidates.Append(nil))
			}
			tt, h := c.TrackTurn, c.HeadingSpeed
			if tt.Track < 0 || tt.Track >= 360 || h.Heading < 0 || h.Heading >= 360 || math.Abs(tt.Roll) > 35 {
				t.Fatalf("%#x: track %v heading %v roll %v", mb, tt.Track, h.Heading, tt.Roll)
			}
		}
	})
}
