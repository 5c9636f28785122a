package adsb_test

import (
	"encoding/hex"
	"fmt"

	"github.com/cuasd/cuasd/decode/adsb"
)

// Decode one frame into a Message the caller owns and reuses.
func ExampleDecode() {
	frame, _ := hex.DecodeString("8D406B902015A678D4D220AA4BDA")
	var m adsb.Message
	if err := adsb.Decode(frame, &m); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.DF, m.ICAO(), m.TypeCode, m.Callsign, m.EmitterCategory())
	// Output: 17 406B90 4 EZY85MH A0
}

// A frame that fails its CRC is reported, never decoded as if good;
// single-bit correction is opt-in.
func ExampleDecodeWith() {
	frame, _ := hex.DecodeString("8D406B902015A678D4D220AA4BDB") // last bit flipped
	var m adsb.Message
	fmt.Println(adsb.Decode(frame, &m), m.Kind)
	err := adsb.DecodeWith(frame, &m, adsb.Options{FixOneBit: true})
	fmt.Println(err, m.BitErrorsFixed, m.Callsign)
	// Output:
	// adsb: CRC check failed none
	// <nil> 1 EZY85MH
}

// Resolve a position from an even and an odd airborne report; the newest
// one decides.
func ExampleCPRGlobalAirborne() {
	var even, odd adsb.Message
	e, _ := hex.DecodeString("8D40621D58C382D690C8AC2863A7")
	o, _ := hex.DecodeString("8D40621D58C386435CC412692AD6")
	_ = adsb.Decode(e, &even)
	_ = adsb.Decode(o, &odd)
	lat, lon, err := adsb.CPRGlobalAirborne(even.CPR, odd.CPR, false)
	fmt.Printf("%.5f %.5f %v %d ft\n", lat, lon, err, even.Altitude)
	// Output: 52.25720 3.91937 <nil> 38000 ft
}

// Read frames from a Beast byte stream.
func ExampleBeastFrames() {
	stream := []byte{0x1a, '2', 0x03, 0x0b, 0xf1, 0x8c, 0xc2, 0xab, 0x13,
		0x5f, 0x40, 0x01, 0x59, 0x4b, 0x0f, 0xbb}
	var m adsb.Message
	for f, err := range adsb.BeastFrames(stream) {
		if err != nil {
			continue
		}
		_ = adsb.Decode(f.Bytes(), &m)
		fmt.Printf("%.2f µs %.1f dBFS DF%d %s\n", f.Micros(), f.RSSI(), m.DF, m.ICAO())
	}
	// Output: 279152671459.58 µs -22.6 dBFS DF11 400159
}

// A Comm-B reply's register is inferred; an ambiguous payload (pyModeS's
// 5,0/6,0 example) is separated by what ADS-B says about the aircraft.
func ExampleDecodeCommB() {
	var c adsb.CommB
	adsb.DecodeCommB(0xFFBAA11E200472, nil, adsb.CommBOptions{}, &c)
	fmt.Println(c.BDS, c.Candidates.Append(nil), c.Ambiguous)
	known := adsb.KnownState{HasGroundspeed: true, Groundspeed: 238, HasTrack: true, Track: 241}
	adsb.DecodeCommB(0xFFBAA11E200472, &known, adsb.CommBOptions{}, &c)
	fmt.Println(c.BDS, c.Ambiguous, c.TrackTurn.Groundspeed, c.Rejected.Append(nil))
	// Output:
	// 5,0 [5,0 6,0] true
	// 5,0 false 240 [6,0]
}
