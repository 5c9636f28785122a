package adsb

// ParseHex reads the hexadecimal text of one frame into dst and returns the
// number of bytes written. Upper and lower case are accepted, and so are
// spaces, tabs and line breaks anywhere (frames are often pasted in
// groups); an AVR-style leading '*' and trailing ';' are tolerated too.
// It returns ErrHex for any other character or an odd number of digits
// and ErrLength for more than 14 bytes. It does not allocate.
func ParseHex(dst *[14]byte, s string) (int, error) {
	n := 0
	half := false
	var hi byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		v, ok := hexDigit(c)
		if !ok {
			switch {
			case isHexSpace(c):
				continue
			case c == '*' && n == 0 && !half:
				continue
			case c == ';' && isSpaceTail(s[i+1:]):
				i = len(s)
				continue
			default:
				return 0, ErrHex
			}
		}
		if !half {
			hi, half = v, true
			continue
		}
		if n == len(dst) {
			return 0, ErrLength
		}
		dst[n] = hi<<4 | v
		n++
		half = false
	}
	if half {
		return 0, ErrHex
	}
	return n, nil
}

// hexDigit is the value of the hexadecimal digit c, either case.
func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// isHexSpace reports the white space allowed between hex digits.
func isHexSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func isSpaceTail(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHexSpace(s[i]) {
			return false
		}
	}
	return true
}

// AppendAddress appends a 24-bit Mode S address as six upper-case
// hexadecimal digits, the form cuasd's keys, SBS lines and readsb's
// outputs use ("4CA1FA"). It does not allocate beyond b.
func AppendAddress(b []byte, a uint32) []byte {
	const digits = "0123456789ABCDEF"
	// One append, one capacity check: SBS writes it on every line.
	return append(b, digits[a>>20&0xf], digits[a>>16&0xf], digits[a>>12&0xf], digits[a>>8&0xf], digits[a>>4&0xf], digits[a&0xf])
}

// AddressString is AppendAddress as a string.
func AddressString(a uint32) string {
	var b [6]byte
	return string(AppendAddress(b[:0], a))
}
