package adsb

import "math"

// signedBits reads bits a..b as a sign bit (a) followed by a magnitude:
// the Comm-B sign convention, which is two's complement over the whole
// field (sign set and magnitude 0 is the most negative value).
func signedBits(mb uint64, a, b uint) int32 {
	v := int32(bits(mb, a, b))
	if bit(mb, a) {
		v -= 1 << (b - a + 1)
	}
	return v
}

// wrongStatus reports a status-gated field whose status bit is clear but
// whose value bits a..b are not all zero: a register that does not hold
// a value sends zeros, so such a payload is some other register.
func wrongStatus(mb uint64, status, a, b uint) bool {
	return !bit(mb, status) && bits(mb, a, b) != 0
}

// wrap360 puts an angle into [0, 360).
func wrap360(d float64) float64 {
	d = math.Mod(d, 360)
	if d < 0 {
		d += 360
	}
	return d
}

func isBDS10(mb uint64) bool {
	if mb>>48 != 0x10 || bits(mb, 10, 14) != 0 {
		return false
	}
	// pyModeS's consistency rule: overlay command capability came with
	// subnetwork version 5 (DO-181E); without it the version is at most 4.
	ovc, subnet := bit(mb, 15), bits(mb, 17, 23)
	return ovc == (subnet >= 5)
}

func isBDS17(mb uint64) bool {
	// 2,0 (bit 7) is mandatory for anyone announcing 1,7, and bits 25-56
	// are zero (pyModeS's stricter rule; the standard reserves 29-56).
	return bit(mb, 7) && mb&(1<<32-1) == 0
}

func isBDS20(mb uint64) bool {
	if mb>>48 != 0x20 {
		return false
	}
	for i := range 8 {
		if callsignChars[(mb>>(42-6*i))&0x3F] == '#' {
			return false
		}
	}
	return true
}

func isBDS30(mb uint64) bool {
	// Bits 16-22 are reserved for ACAS III; pyModeS accepts values below 48.
	return mb>>48 == 0x30 && bits(mb, 16, 22) < 48 && bits(mb, 29, 30) != 3
}

func isBDS40(mb uint64) bool {
	if wrongStatus(mb, 1, 2, 13) || wrongStatus(mb, 14, 15, 26) || wrongStatus(mb, 27, 28, 39) ||
		wrongStatus(mb, 48, 49, 51) || wrongStatus(mb, 54, 55, 56) {
		return false
	}
	return bits(mb, 40, 47) == 0 && bits(mb, 52, 53) == 0
}

func isBDS44(mb uint64) bool {
	if bits(mb, 1, 4) > 4 || !bit(mb, 5) ||
		wrongStatus(mb, 35, 36, 46) || wrongStatus(mb, 47, 48, 49) || wrongStatus(mb, 50, 51, 56) {
		return false
	}
	speed, dir, temp := bits(mb, 6, 14), bits(mb, 15, 23), signedBits(mb, 24, 34)
	if speed > 250 || temp < -320 || temp > 240 { // -80 °C .. +60 °C
		return false
	}
	return speed != 0 || dir != 0 || temp != 0
}

func isBDS45(mb uint64) bool {
	// A 1,7 capability map (bit 7 and 32 zero bits) passes 4,5's checks
	// too; 1,7 is the stricter shape, so it wins.
	if isBDS17(mb) || bits(mb, 52, 56) != 0 {
		return false
	}
	for s := uint(1); s <= 13; s += 3 { // five hazards: status + 2 bits
		if wrongStatus(mb, s, s+1, s+2) {
			return false
		}
	}
	if wrongStatus(mb, 16, 17, 26) || wrongStatus(mb, 27, 28, 38) || wrongStatus(mb, 39, 40, 51) {
		return false
	}
	if bit(mb, 16) {
		if t := signedBits(mb, 17, 26); t < -320 || t > 240 {
			return false
		}
	}
	return true
}

func isBDS50(mb uint64) bool {
	if wrongStatus(mb, 1, 2, 11) || wrongStatus(mb, 12, 13, 23) || wrongStatus(mb, 24, 25, 34) ||
		wrongStatus(mb, 35, 36, 45) || wrongStatus(mb, 46, 47, 56) {
		return false
	}
	// |roll| ≤ 35° (pyModeS 3 tightened the format's ±90°: airliners do
	// not bank further, and wider rolls were other registers), ground
	// speed and TAS ≤ 600 kt, and the two within 200 kt of each other.
	if bit(mb, 1) && math.Abs(float64(signedBits(mb, 2, 11))*45/256) > 35 {
		return false
	}
	gs, tas := bits(mb, 25, 34)*2, bits(mb, 47, 56)*2
	if bit(mb, 24) && gs > 600 || bit(mb, 46) && tas > 600 {
		return false
	}
	return !(bit(mb, 24) && bit(mb, 46) && absDiff(gs, tas) > 200)
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

func isBDS60(mb uint64) bool {
	if wrongStatus(mb, 1, 2, 12) || wrongStatus(mb, 13, 14, 23) || wrongStatus(mb, 24, 25, 34) ||
		wrongStatus(mb, 35, 36, 45) || wrongStatus(mb, 46, 47, 56) {
		return false
	}
	// IAS ≤ 500 kt, Mach ≤ 1 (raw 250), vertical rates within ±6000 ft/min.
	if bit(mb, 13) && bits(mb, 14, 23) > 500 || bit(mb, 24) && bits(mb, 25, 34) > 250 {
		return false
	}
	const maxRate = 6000 / 32
	if bit(mb, 35) && abs32(signedBits(mb, 36, 45)) > maxRate {
		return false
	}
	return !(bit(mb, 46) && abs32(signedBits(mb, 47, 56)) > maxRate)
}

func abs32(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}

// inferCommB returns the registers whose format the payload fits, in the
// order of pyModeS's two phases: the self-identifying registers (at most
// one), then every heuristic one that fits.
func inferCommB(mb uint64, meteo bool) BDSSet {
	var s BDSSet
	if mb == 0 {
		return s
	}
	switch id := mb >> 48; {
	case id == 0x10 && isBDS10(mb):
		s.add(BDS10)
	case isBDS17(mb):
		s.add(BDS17)
	case id == 0x20 && isBDS20(mb):
		s.add(BDS20)
	case id == 0x30 && isBDS30(mb):
		s.add(BDS30)
	}
	heuristic := [...]struct {
		r  BDS
		ok func(uint64) bool
	}{{BDS40, isBDS40}, {BDS50, isBDS50}, {BDS60, isBDS60}, {BDS44, isBDS44}, {BDS45, isBDS45}}
	for i, h := range heuristic {
		if i >= 3 && !meteo {
			break
		}
		if h.ok(mb) {
			s.add(h.r)
		}
	}
	return s
}
