package adsb

// Callsign is the 8-character identification of ES type codes 1-4, as
// transmitted: upper-case letters, digits and spaces, space padded. A
// character with no defined meaning is stored as '#'. It is a fixed array
// so that decoding allocates nothing.
type Callsign [8]byte

// callsignChars maps the 6-bit character codes of DO-260B (a subset of
// IA-5) to ASCII; '#' marks codes with no character.
const callsignChars = "#ABCDEFGHIJKLMNOPQRSTUVWXYZ##### ###############0123456789######"

// String returns the callsign without its trailing padding, e.g. "EZY85MH".
func (c Callsign) String() string { return string(c[:c.Len()]) }

// Len is the length of the callsign without its trailing padding: c[:Len]
// is String's text without allocating it.
func (c Callsign) Len() int {
	n := len(c)
	for n > 0 && (c[n-1] == ' ' || c[n-1] == 0) {
		n--
	}
	return n
}

// Valid reports whether every character is a letter, a digit or a space:
// a callsign with an undefined character code is not usable as an
// identity, although it is still reported.
func (c Callsign) Valid() bool {
	for _, ch := range c {
		if !(ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == ' ') {
			return false
		}
	}
	return true
}
