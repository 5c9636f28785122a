package adsb

// CRCGenerator is the Mode S CRC-24 generator polynomial, 25 bits including
// the leading x^24 term (ICAO Annex 10 Vol IV, 3.1.2.3.3).
const CRCGenerator = 0x1FFF409

// CRC24 returns the Mode S CRC-24 parity of the data bits b: the
// remainder of b·x^24 divided by [CRCGenerator], with no initial value and
// no final XOR (ICAO Annex 10 Vol IV 3.1.2.3.3). For a frame, the parity
// over all bytes but the last three, XOR those three, is the remainder
// ([Syndrome]). It does not allocate.
func CRC24(b []byte) uint32 {
	var c uint32
	for _, x := range b {
		c = (c<<8 ^ crcTable[byte(c>>16)^x]) & 0xFFFFFF
	}
	return c
}

// Syndrome returns the CRC remainder of a whole frame: the parity computed
// over its data bits XOR the parity field it carries (its last three
// bytes). It is zero for an intact DF17/DF18 frame, the interrogator code
// for an intact DF11 and the address for the address/parity formats; this
// is the value pyModeS and dump1090 print as the CRC. Frames shorter than
// 4 bytes give 0.
func Syndrome(frame []byte) uint32 {
	switch len(frame) {
	case 14:
		// Independent lookups, one per data byte (see crcPos).
		f := frame[:14]
		return crcPos[0][f[0]] ^ crcPos[1][f[1]] ^ crcPos[2][f[2]] ^ crcPos[3][f[3]] ^
			crcPos[4][f[4]] ^ crcPos[5][f[5]] ^ crcPos[6][f[6]] ^ crcPos[7][f[7]] ^
			crcPos[8][f[8]] ^ crcPos[9][f[9]] ^ crcPos[10][f[10]] ^
			(uint32(f[11])<<16 | uint32(f[12])<<8 | uint32(f[13]))
	case 7:
		f := frame[:7]
		return crcPos[7][f[0]] ^ crcPos[8][f[1]] ^ crcPos[9][f[2]] ^ crcPos[10][f[3]] ^
			(uint32(f[4])<<16 | uint32(f[5])<<8 | uint32(f[6]))
	}
	n := len(frame)
	if n < 4 {
		return 0
	}
	p := uint32(frame[n-3])<<16 | uint32(frame[n-2])<<8 | uint32(frame[n-1])
	return CRC24(frame[:n-3]) ^ p
}

// fixOneBit tries to repair a single bit error in a 112-bit frame whose
// remainder is rem. It never touches the first five bits (the DF field):
// flipping those would change which rules apply to the frame, and a
// "corrected" DF is a guess, not a repair. It reports whether a bit was
// flipped.
func fixOneBit(f *[14]byte, rem uint32) bool {
	for i := 5; i < 112; i++ {
		if syndrome112[i] == rem {
			f[i/8] ^= 0x80 >> (i % 8)
			return true
		}
	}
	return false
}
