package mavlink

// crcTable is the byte-wise table of MAVLink's checksum, CRC-16/MCRF4XX
// (the X.25 polynomial 0x1021, reflected as 0x8408, initial value 0xFFFF,
// no final XOR). A table step is one load and two XORs per byte where the
// bit-wise form MAVLink's C library uses takes about ten operations.
var crcTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0x8408
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}()

// crcInit is the checksum's initial value.
const crcInit uint16 = 0xFFFF

// crcUpdate folds p into the running checksum crc.
func crcUpdate(crc uint16, p []byte) uint16 {
	for _, b := range p {
		crc = crc>>8 ^ crcTable[byte(crc)^b]
	}
	return crc
}

// crcByte folds one byte into the running checksum crc.
func crcByte(crc uint16, b byte) uint16 {
	return crc>>8 ^ crcTable[byte(crc)^b]
}

// Checksum returns the MAVLink checksum of a frame's bytes after the magic
// byte up to the end of its payload, seeded with the message's CRC_EXTRA.
// It is what a sender writes in the frame's two checksum bytes
// (little-endian).
func Checksum(headerAndPayload []byte, crcExtra uint8) uint16 {
	return crcByte(crcUpdate(crcInit, headerAndPayload), crcExtra)
}
