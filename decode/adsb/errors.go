package adsb

// Error is the one error type of this package. Its values are constants, so
// returning one never allocates and callers compare with == or errors.Is.
type Error string

func (e Error) Error() string { return string(e) }

// Frame errors.
const (
	// ErrLength: a Mode S frame is 7 bytes (56 bits, DF 0-15) or 14 bytes
	// (112 bits, DF 16-31), and the first bits of the DF field fix which.
	ErrLength Error = "adsb: frame length does not match its downlink format (want 7 bytes for DF 0-15, 14 for DF 16-31)"
	// ErrCRC: the CRC-24 remainder of a DF11, DF17 or DF18 frame is not
	// zero (not an interrogator code for DF11), so the frame was corrupted
	// in reception and its payload is not decoded.
	ErrCRC Error = "adsb: CRC check failed"
	// ErrHex: the text is not an even number of hexadecimal digits.
	ErrHex Error = "adsb: not hexadecimal"
)

// CPR errors.
const (
	// ErrZone: the even and odd latitudes fall in different longitude-zone
	// bands (NL differs), typically because the aircraft crossed a zone
	// boundary between the two reports; the pair must not be combined.
	ErrZone Error = "adsb: CPR pair straddles a latitude-zone boundary"
	// ErrLatRange: the decoded latitude is outside ±90°, so at least one
	// report is corrupt or the two do not belong together.
	ErrLatRange Error = "adsb: CPR latitude out of range"
	// ErrNotPair: a global decode needs one even (F=0) and one odd (F=1)
	// report.
	ErrNotPair Error = "adsb: CPR reports are not one even and one odd"
	// ErrNotPosition: the message carries no CPR position.
	ErrNotPosition Error = "adsb: message carries no CPR position"
	// ErrAddressMismatch: the two frames of a pair come from different
	// addresses.
	ErrAddressMismatch Error = "adsb: CPR pair comes from different addresses"
	// ErrMixedPosition: one frame is an airborne and the other a surface
	// position report.
	ErrMixedPosition Error = "adsb: CPR pair mixes airborne and surface reports"
	// ErrReference: the reference position is not a valid latitude/longitude,
	// or the answer would be more than half a zone away from it.
	ErrReference Error = "adsb: reference position is invalid or too far away"
)

// Receiver-format errors.
const (
	// ErrIncomplete: the buffer ends inside a frame; more input is needed.
	ErrIncomplete Error = "adsb: incomplete frame, need more input"
	// ErrSync: bytes that do not start a frame were skipped.
	ErrSync Error = "adsb: not at a frame boundary"
	// ErrFormat: the input is not in the expected receiver format.
	ErrFormat Error = "adsb: malformed receiver-format record"
)
