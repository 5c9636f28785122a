package mavlink

import "fmt"

// ProblemKind classifies what the parser found wrong with a candidate frame.
type ProblemKind uint8

// The kinds of problem the parser reports.
const (
	// ProblemBadCRC: a frame of a known message whose checksum did not
	// verify with the message's CRC_EXTRA (corrupted, or sent with another
	// definition of the message).
	ProblemBadCRC ProblemKind = iota + 1
	// ProblemBadSignature: a signed frame whose signature did not verify
	// with the configured key.
	ProblemBadSignature
	// ProblemHeader: a MAVLink 2 header with an incompatibility flag other
	// than "signed"; such frames must be dropped.
	ProblemHeader
	// ProblemIncomplete: the input ended inside a candidate frame.
	ProblemIncomplete
	// ProblemUnframed: a candidate frame of an unknown message id that was
	// not followed by another frame or the end of the input, so it was taken
	// for a false start (its CRC cannot be checked).
	ProblemUnframed
)

var problemNames = [...]string{
	ProblemBadCRC:       "bad CRC",
	ProblemBadSignature: "bad signature",
	ProblemHeader:       "unknown incompatibility flags",
	ProblemIncomplete:   "incomplete frame",
	ProblemUnframed:     "unframed unknown message",
}

// String returns a short description of the kind.
func (k ProblemKind) String() string {
	if int(k) < len(problemNames) && problemNames[k] != "" {
		return problemNames[k]
	}
	return "problem"
}

// Problem describes one rejected candidate frame.
type Problem struct {
	Kind ProblemKind
	// Offset is the position of the candidate's magic byte in the stream.
	Offset int64
	// Version, MsgID and PayloadLen are what the candidate's header claimed.
	Version    uint8
	MsgID      uint32
	PayloadLen uint8
	// Flags is the MAVLink 2 incompatibility flags byte (ProblemHeader).
	Flags uint8
	// Need and Have are the frame length the header called for and the
	// bytes that were left (ProblemIncomplete).
	Need, Have int
	// Counted is false when the candidate lay inside a frame already
	// counted as bad, so that the statistics did not count it again.
	Counted bool
}

// Error describes the problem, e.g. "bad CRC at offset 12 (v1 msgid 0
// HEARTBEAT, payload 9 bytes)".
func (p Problem) Error() string {
	switch p.Kind {
	case ProblemHeader:
		return fmt.Sprintf("%s 0x%02x at offset %d (v2 msgid %d)", p.Kind, p.Flags, p.Offset, p.MsgID)
	case ProblemIncomplete:
		hdr := headerLenV1
		if p.Version == 2 {
			hdr = headerLenV2
		}
		switch {
		case p.Need == 0:
			return fmt.Sprintf("%s at offset %d: header cut short, %d bytes left", p.Kind, p.Offset, p.Have)
		case p.Have < hdr:
			return fmt.Sprintf("%s at offset %d (v%d): needs %d bytes, %d left", p.Kind, p.Offset, p.Version, p.Need, p.Have)
		}
		return fmt.Sprintf("%s at offset %d (v%d msgid %d%s): needs %d bytes, %d left",
			p.Kind, p.Offset, p.Version, p.MsgID, nameSuffix(p.MsgID), p.Need, p.Have)
	default:
		return fmt.Sprintf("%s at offset %d (v%d msgid %d%s, payload %d bytes)",
			p.Kind, p.Offset, p.Version, p.MsgID, nameSuffix(p.MsgID), p.PayloadLen)
	}
}

func nameSuffix(id uint32) string {
	if d := Lookup(id); d != nil {
		return " " + d.Name
	}
	return ""
}

// Error is the error type of package mavlink: malformed input that could
// not be parsed at all (bad hex, a tlog cut inside its first timestamp, no
// valid frame).
type Error struct {
	// Op names what failed ("hex", "base64", "tlog", "parse", "key").
	Op string
	// Msg says what was wrong.
	Msg string
	// Problems are the rejected candidates behind a "no valid frame" error.
	Problems []Problem
}

func (e *Error) Error() string { return "mavlink: " + e.Op + ": " + e.Msg }
