package mavlink

// crcTables are the slicing-by-4 tables of MAVLink's checksum,
// CRC-16/MCRF4XX (the X.25 polynomial 0x1021, reflected as 0x8408, initial
// value 0xFFFF, no final XOR). crcTables[0] is the classic byte-wise table;
// crcTables[k][i] is the checksum register after byte i and k zero bytes.
// Four bytes then cost four independent loads instead of a chain of four
// dependent ones: the checksum is most of the framing cost.
var crcTables = func() (t [4][256]uint16) {
	for i := range t[0] {
		c := uint16(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0x8408
			} else {
				c >>= 1
			}
		}
		t[0][i] = c
	}
	for k := 1; k < 4; k++ {
		for i := range t[k] {
			p := t[k-1][i]
			t[k][i] = p>>8 ^ t[0][byte(p)]
		}
	}
	return t
}()

// crcInit is the checksum's initial value.
const crcInit uint16 = 0xFFFF

// crcUpdate folds p into the running checksum crc.
func crcUpdate(crc uint16, p []byte) uint16 {
	t := &crcTables
	for len(p) >= 4 {
		x := crc ^ (uint16(p[0]) | uint16(p[1])<<8)
		crc = t[3][byte(x)] ^ t[2][x>>8] ^ t[1][p[2]] ^ t[0][p[3]]
		p = p[4:]
	}
	for _, b := range p {
		crc = crc>>8 ^ t[0][byte(crc)^b]
	}
	return crc
}

// crcByte folds one byte into the running checksum crc.
func crcByte(crc uint16, b byte) uint16 {
	return crc>>8 ^ crcTables[0][byte(crc)^b]
}

// Checksum returns the MAVLink checksum of a frame's bytes after the magic
// byte up to the end of its payload, seeded with the message's CRC_EXTRA.
// It is what a sender writes in the frame's two checksum bytes
// (little-endian).
func Checksum(headerAndPayload []byte, crcExtra uint8) uint16 {
	return crcByte(crcUpdate(crcInit, headerAndPayload), crcExtra)
}
