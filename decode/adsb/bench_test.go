package adsb

import (
	"encoding/hex"
	"os"
	"testing"

	"github.com/cuasd/cuasd/internal/testshared"
)

// df17Mix is a realistic DF17 traffic mix, in the proportions of the real
// Beast capture of TestBeastCaptureAgainstDump1090 (there: 1,498 airborne
// positions, 1,492 velocities, 174 target states, 146 identifications, 78
// operational statuses, 48 aircraft statuses): per 20 frames, 8 positions,
// 8 velocities, and one each of the rest plus a second identification.
// The frames are real ones from the vectors.
var df17Mix = mustHexes(
	"8d42460c90af709ee5fc8c4f2a10", "8d42460c99004bb3a00400ac8b64",
	"8d71be3458b503d2b5553fa0d70c", "8D485020994409940838175B284F",
	"8f400159601333ce391bb63e0d42", "8d3461cf9908388930080f948ea1",
	"8D40058B58C901375147EFD09357", "8da3d42599250129780484712c50",
	"8D406B902015A678D4D220AA4BDA", "8DA05629EA21485CBF3F8CADAEEB",
	"8d4d224f58bf003b221b34aa5b8d", "8d394c0f990c4932780838866883",
	"8D40621D58C386435CC412692AD6", "8d3461cf99085a8f10400f80e6ac",
	"8d0d097ef8230007005ab8547268", "8DA2C1B6E112B600000000760759",
	"8d4845575803c647bcec2a980abc", "8D484556990CB8423008844B2DE1",
	"8d42426320554074df08207b587d", "8d4401e458058645a8ea90496290",
)

func mustHexes(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, h := range s {
		b, err := hex.DecodeString(h)
		if err != nil {
			panic(err)
		}
		out[i] = b
	}
	return out
}

func BenchmarkCRC24(b *testing.B) {
	f := df17Mix[0]
	b.ReportAllocs()
	b.SetBytes(int64(len(f)))
	var sink uint32
	for b.Loop() {
		sink ^= Syndrome(f)
	}
	_ = sink
}

// BenchmarkDecodeDF17Mix is CRC plus full decode, one frame per op.
func BenchmarkDecodeDF17Mix(b *testing.B) {
	var m Message
	for _, f := range df17Mix {
		if err := Decode(f, &m); err != nil {
			b.Fatalf("%X: %v", f, err)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = Decode(df17Mix[i], &m)
		i++
		if i == len(df17Mix) {
			i = 0
		}
	}
}

// BenchmarkDecodeCapture decodes every Mode S frame of the real Beast
// capture in turn: DF11 all-calls, DF0/4/5/16/20/21 replies and DF17.
func BenchmarkDecodeCapture(b *testing.B) {
	raw, err := os.ReadFile(testshared.Path(b, "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin"))
	if err != nil {
		b.Fatal(err)
	}
	var frames [][]byte
	for f, err := range BeastFrames(raw) {
		if err == nil && f.Type != BeastModeAC {
			frames = append(frames, append([]byte(nil), f.Bytes()...))
		}
	}
	var m Message
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = Decode(frames[i], &m)
		i++
		if i == len(frames) {
			i = 0
		}
	}
}

func BenchmarkCPRGlobalAirborne(b *testing.B) {
	even := CPR{Lat: 93000, Lon: 51372}
	odd := CPR{Lat: 74158, Lon: 50194, Odd: true}
	b.ReportAllocs()
	var s float64
	for b.Loop() {
		lat, lon, _ := CPRGlobalAirborne(even, odd, false)
		s += lat + lon
	}
	_ = s
}

func BenchmarkCPRLocalAirborne(b *testing.B) {
	c := CPR{Lat: 93000, Lon: 51372}
	b.ReportAllocs()
	var s float64
	for b.Loop() {
		lat, lon, _ := CPRLocalAirborne(c, 52.258, 3.918)
		s += lat + lon
	}
	_ = s
}

func BenchmarkParseBeast(b *testing.B) {
	var in BeastFrame
	in.Type, in.Len, in.Timestamp, in.Signal = BeastModeSLong, 14, 0x030bf18cc2ab, 0x13
	copy(in.Data[:], df17Mix[0])
	rec := AppendBeast(nil, &in)
	var f BeastFrame
	b.ReportAllocs()
	b.SetBytes(int64(len(rec)))
	for b.Loop() {
		_, _ = ParseBeast(rec, &f)
	}
}

func BenchmarkParseAVR(b *testing.B) {
	line := []byte("@030BF18CC2AB8D406B902015A678D4D220AA4BDA;")
	var f AVRFrame
	b.ReportAllocs()
	for b.Loop() {
		_ = ParseAVR(line, &f)
	}
}

// TestZeroAllocs states the hot path's allocation-free property.
func TestZeroAllocs(t *testing.T) {
	var m Message
	var bf BeastFrame
	var af AVRFrame
	var hx [14]byte
	rec := AppendBeast(nil, &BeastFrame{Type: BeastModeSLong, Len: 14, Data: [14]byte(df17Mix[0])})
	avr := []byte("*8D406B902015A678D4D220AA4BDA;")
	bad := append([]byte(nil), df17Mix[0]...)
	bad[5] ^= 4
	for name, f := range map[string]func(){
		"Decode": func() {
			for _, f := range df17Mix {
				_ = Decode(f, &m)
			}
		},
		"DecodeWith fix": func() { _ = DecodeWith(bad, &m, Options{FixOneBit: true}) },
		"Decode bad CRC": func() { _ = Decode(bad, &m) },
		"CPRGlobalAirborne": func() {
			_, _, _ = CPRGlobalAirborne(CPR{Lat: 93000, Lon: 51372}, CPR{Lat: 74158, Lon: 50194, Odd: true}, false)
		},
		"CPRGlobalSurface": func() {
			_, _, _ = CPRGlobalSurface(CPR{Lat: 105730, Lon: 9259}, CPR{Lat: 29693, Lon: 8997, Odd: true}, true, 52, 0)
		},
		"CPRLocalAirborne": func() { _, _, _ = CPRLocalAirborne(CPR{Lat: 93000, Lon: 51372}, 52.258, 3.918) },
		"ParseBeast":       func() { _, _ = ParseBeast(rec, &bf) },
		"ParseAVR":         func() { _ = ParseAVR(avr, &af) },
		"ParseHex":         func() { _, _ = ParseHex(&hx, "8D406B902015A678D4D220AA4BDA") },
		"BeastFrames": func() {
			for range BeastFrames(rec) {
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			if n := testing.AllocsPerRun(100, f); n != 0 {
				t.Errorf("%s: %v allocations per run, want 0", name, n)
			}
		})
	}
}

// commBMix is the MB fields of pyModeS's Comm-B test vectors, one per
// register, plus the 5,0/6,0 ambiguous one.
var commBMix = [...]uint64{0x10010080F50000, 0xFA81C100000000, 0x202CC371C31DE0, 0x85E42F31300000,
	0x185BD5CF400000, 0x0001FB80000000, 0x81951536E024D4, 0x8F39F91A7E27C4, 0xFFBAA11E200472}

// BenchmarkDecodeCommB infers and decodes Comm-B MB fields against a known
// state (the pipeline's case); it must not allocate.
func BenchmarkDecodeCommB(b *testing.B) {
	var c CommB
	k := KnownState{HasGroundspeed: true, Groundspeed: 240, HasTrack: true, Track: 239, HasAltitude: true, Altitude: 30000}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		DecodeCommB(commBMix[i%len(commBMix)], &k, CommBOptions{Meteo: true}, &c)
	}
}
