package adsb

// decodeID13 turns the 13-bit identity field (C1 A1 C2 A2 C4 A4 X B1 D1 B2
// D2 B4 D4, ICAO Annex 10 Vol IV 3.1.2.6.7.1) into the Mode A code as four
// octal digits ABCD held in the nibbles of a Squawk. The X bit is ignored.
func decodeID13(id uint32) Squawk {
	var s Squawk
	if id&0x1000 != 0 { // C1
		s |= 0x0010
	}
	if id&0x0800 != 0 { // A1
		s |= 0x1000
	}
	if id&0x0400 != 0 { // C2
		s |= 0x0020
	}
	if id&0x0200 != 0 { // A2
		s |= 0x2000
	}
	if id&0x0100 != 0 { // C4
		s |= 0x0040
	}
	if id&0x0080 != 0 { // A4
		s |= 0x4000
	}
	if id&0x0020 != 0 { // B1
		s |= 0x0100
	}
	if id&0x0010 != 0 { // D1 (Q in altitude codes)
		s |= 0x0001
	}
	if id&0x0008 != 0 { // B2
		s |= 0x0200
	}
	if id&0x0004 != 0 { // D2
		s |= 0x0002
	}
	if id&0x0002 != 0 { // B4
		s |= 0x0400
	}
	if id&0x0001 != 0 { // D4
		s |= 0x0004
	}
	return s
}

// gillham converts a Mode C altitude, given as its Mode A style digits
// ABCD (each nibble 0-7, see decodeID13), to hundreds of feet. The pulses
// encode the 500 ft steps (D2 D4 A1 A2 A4 B1 B2 B4) in a reflected Gray
// code and the 100 ft steps (C1 C2 C4) in a 5-state Gray code that runs
// backwards on odd 500 ft steps. ok is false for codes no encoder emits.
func gillham(s Squawk) (hundreds int32, ok bool) {
	// D1 is never used for altitude; C1..C4 all zero is illegal.
	if s&0x8889 != 0 || s&0x00F0 == 0 {
		return 0, false
	}
	oneHundreds := gillhamC(s)
	if oneHundreds > 5 {
		return 0, false
	}
	fiveHundreds := gillhamDAB(s)
	if fiveHundreds&1 != 0 {
		oneHundreds = 6 - oneHundreds
	}
	n := fiveHundreds*5 + oneHundreds - 13
	if n < -12 {
		return 0, false
	}
	return n, true
}

// gillhamC decodes the 100 ft pulses C1 C2 C4, a 5-state Gray code, to
// 1..5 (above 5 for the codes no encoder emits), before the reversal on
// odd 500 ft steps.
func gillhamC(s Squawk) int32 {
	var v int32
	if s&0x0010 != 0 { // C1
		v ^= 7
	}
	if s&0x0020 != 0 { // C2
		v ^= 3
	}
	if s&0x0040 != 0 { // C4
		v ^= 1
	}
	// The 100 ft code has no 6 and swaps 5 and 7.
	if v&5 == 5 {
		v ^= 2
	}
	return v
}

// gillhamDAB decodes the 500 ft pulses D2 D4 A1 A2 A4 B1 B2 B4, a
// reflected Gray code, to the count of 500 ft steps.
func gillhamDAB(s Squawk) int32 {
	var v int32
	if s&0x0002 != 0 { // D2
		v ^= 0xFF
	}
	if s&0x0004 != 0 { // D4
		v ^= 0x7F
	}
	if s&0x1000 != 0 { // A1
		v ^= 0x3F
	}
	if s&0x2000 != 0 { // A2
		v ^= 0x1F
	}
	if s&0x4000 != 0 { // A4
		v ^= 0x0F
	}
	if s&0x0100 != 0 { // B1
		v ^= 0x07
	}
	if s&0x0200 != 0 { // B2
		v ^= 0x03
	}
	if s&0x0400 != 0 { // B4
		v ^= 0x01
	}
	return v
}

// decodeAC13 decodes the 13-bit altitude code of DF0, 4, 16 and 20 to feet.
// Bit 7 (0x40) is M, set for metric altitudes, which nothing in service
// sends and which is not decoded; bit 9 (0x10) is Q: set, the other 11
// bits count 25 ft steps from -1000 ft; clear, they are a Gillham code in
// 100 ft steps. A zero field means "no altitude".
func decodeAC13(ac uint32) (int32, bool) {
	if ac == 0 || ac&0x40 != 0 {
		return 0, false
	}
	if ac&0x10 != 0 {
		n := (ac&0x1F80)>>2 | (ac&0x20)>>1 | ac&0x0F
		return int32(n)*25 - 1000, true
	}
	h, ok := gillham(decodeID13(ac))
	return h * 100, ok
}

// decodeAC12 decodes the 12-bit altitude of an ES airborne position (the
// AC13 code without its M bit) to feet. Zero means "no altitude".
func decodeAC12(ac uint32) (int32, bool) {
	if ac == 0 {
		return 0, false
	}
	if ac&0x10 != 0 {
		n := (ac&0x0FE0)>>1 | ac&0x0F
		return int32(n)*25 - 1000, true
	}
	// Re-insert M=0 to get the 13-bit layout, then decode as Gillham.
	ac13 := (ac&0x0FC0)<<1 | ac&0x3F
	h, ok := gillham(decodeID13(ac13))
	return h * 100, ok
}
