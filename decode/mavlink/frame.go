package mavlink

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
)

// Framing constants of MAVLink 1 and 2.
const (
	// MagicV1 starts a MAVLink 1 frame, MagicV2 a MAVLink 2 frame.
	MagicV1 = 0xFE
	MagicV2 = 0xFD

	// FlagSigned is the only incompatibility flag MAVLink 2 defines: a
	// 13-byte signature follows the checksum.
	FlagSigned = 0x01

	headerLenV1    = 6  // magic, len, seq, sysid, compid, msgid
	headerLenV2    = 10 // magic, len, incompat, compat, seq, sysid, compid, msgid[3]
	checksumLen    = 2
	signatureLen   = 13 // link_id, timestamp[6], signature[6]
	maxFrameLenV1  = headerLenV1 + 255 + checksumLen
	maxFrameLenV2  = headerLenV2 + 255 + checksumLen + signatureLen
	maxFrameLength = maxFrameLenV2

	// KeyLen is the length of a MAVLink 2 signing key.
	KeyLen = 32
)

// SignatureStatus says what is known about a frame's signature.
type SignatureStatus uint8

// The signature states of a returned frame. A frame whose signature failed
// verification is never returned; it is counted as bad_signature.
const (
	// Unsigned: the frame carries no signature.
	Unsigned SignatureStatus = iota
	// SignatureUnverified: signed, but no key was configured.
	SignatureUnverified
	// SignatureValid: signed, and the signature verified with the key.
	SignatureValid
)

// Frame is one MAVLink frame found in a byte stream. Its slices point into
// the parser's input and are valid as long as that input is: copy what you
// keep. A returned frame either verified its checksum against the dialect's
// CRC_EXTRA (CRCOK) or has an id the dialect lacks (Def == nil), whose
// checksum cannot be verified.
type Frame struct {
	// Raw is the whole frame, from the magic byte to the end of the
	// signature, exactly as received.
	Raw []byte
	// Payload is the payload as transmitted: MAVLink 2 senders strip
	// trailing zero bytes and MAVLink 1 senders may send more or less than
	// the message's length; Message zero-extends it.
	Payload []byte
	// Def is the message's definition, nil for an id the dialect lacks.
	Def *MessageDef
	// Offset is the position of the magic byte in the stream.
	Offset int64
	// MsgID is the message id (24 bits in MAVLink 2, 8 in MAVLink 1).
	MsgID uint32
	// Checksum is the frame's transmitted checksum.
	Checksum uint16
	// Version is 1 or 2.
	Version uint8
	// IncompatFlags and CompatFlags are MAVLink 2's flag bytes, 0 in v1.
	IncompatFlags uint8
	CompatFlags   uint8
	Seq           uint8
	SysID         uint8
	CompID        uint8
	// CRCOK reports a checksum verified against Def.CRCExtra. It is false
	// exactly when Def is nil.
	CRCOK bool
	// Sig says whether the frame is signed and whether that was verified.
	Sig SignatureStatus
}

// Name returns the message name, or "unknown" for an id the dialect lacks.
func (f *Frame) Name() string {
	if f.Def == nil {
		return "unknown"
	}
	return f.Def.Name
}

// Signed reports a MAVLink 2 frame carrying a signature.
func (f *Frame) Signed() bool { return f.IncompatFlags&FlagSigned != 0 }

// Signature returns the signature block of a signed frame: the link id, the
// 48-bit timestamp (units of 10 µs since 2015-01-01 00:00 UTC) and the
// 6-byte signature, a sub-slice of Raw. ok is false for an unsigned frame.
func (f *Frame) Signature() (linkID uint8, timestamp uint64, sig []byte, ok bool) {
	if !f.Signed() || len(f.Raw) < signatureLen {
		return 0, 0, nil, false
	}
	s := f.Raw[len(f.Raw)-signatureLen:]
	return s[0], uint48(s[1:7]), s[7:13], true
}

func uint48(b []byte) uint64 {
	_ = b[5]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40
}

// isMagic reports a byte that can start a frame.
func isMagic(c byte) bool { return c-MagicV2 < 2 }

// verdict is what examining a candidate frame found.
type verdict uint8

const (
	vFrame     verdict = iota // a frame whose CRC verified (or signature, when keyed)
	vUnknown                  // well-formed frame of an unknown id: needs corroboration
	vNeedMore                 // the candidate runs past the end of the buffer
	vBadCRC                   // known id, checksum mismatch
	vBadSig                   // checksum fine, signature did not verify
	vHeaderErr                // unknown incompatibility flag
)

// examine decodes the candidate frame at the start of b (b[0] is a magic
// byte). It returns the frame (Raw and Payload are sub-slices of b), the
// candidate's length n (0 when unknown) and the verdict. key is nil when
// signatures are not verified.
func examine(b []byte, key *[KeyLen]byte) (f Frame, n int, v verdict) {
	if len(b) < 2 {
		return f, 0, vNeedMore
	}
	var hdr int
	if b[0] == MagicV1 {
		hdr, n, v = headerV1(b, &f)
	} else {
		hdr, n, v = headerV2(b, &f)
	}
	if v != vFrame {
		return f, n, v
	}
	end := hdr + int(b[1])
	f.Raw = b[:n:n]
	f.Payload = b[hdr:end:end]
	f.Checksum = binary.LittleEndian.Uint16(b[end:])
	f.Def = Lookup(f.MsgID)
	if f.Def == nil {
		return f, n, vUnknown
	}
	if Checksum(b[1:end], f.Def.CRCExtra) != f.Checksum {
		return f, n, vBadCRC
	}
	f.CRCOK = true
	if f.IncompatFlags&FlagSigned != 0 {
		f.Sig = SignatureUnverified
		if key != nil {
			if !verifySignature(b[:n], key) {
				return f, n, vBadSig
			}
			f.Sig = SignatureValid
		}
	}
	return f, n, vFrame
}

// headerV1 reads a MAVLink 1 header into f: the header length, the frame's
// length and vFrame, or vNeedMore when b ends inside the frame.
func headerV1(b []byte, f *Frame) (hdr, n int, v verdict) {
	n = headerLenV1 + int(b[1]) + checksumLen
	f.Version = 1
	if len(b) < n {
		if len(b) >= headerLenV1 {
			f.MsgID = uint32(b[5])
		}
		return headerLenV1, n, vNeedMore
	}
	f.Seq, f.SysID, f.CompID, f.MsgID = b[2], b[3], b[4], uint32(b[5])
	return headerLenV1, n, vFrame
}

// headerV2 reads a MAVLink 2 header into f, as headerV1 does; an unknown
// incompatibility flag is vHeaderErr.
func headerV2(b []byte, f *Frame) (hdr, n int, v verdict) {
	if len(b) >= 3 && b[2]&^FlagSigned != 0 {
		f.Version, f.IncompatFlags = 2, b[2]
		if len(b) >= headerLenV2 {
			f.MsgID = uint32(b[7]) | uint32(b[8])<<8 | uint32(b[9])<<16
		}
		return headerLenV2, 0, vHeaderErr
	}
	n = headerLenV2 + int(b[1]) + checksumLen
	if len(b) >= 3 && b[2]&FlagSigned != 0 {
		n += signatureLen
	}
	f.Version = 2
	if len(b) < n {
		if len(b) >= headerLenV2 {
			f.MsgID = uint32(b[7]) | uint32(b[8])<<8 | uint32(b[9])<<16
		}
		return headerLenV2, n, vNeedMore
	}
	f.IncompatFlags, f.CompatFlags = b[2], b[3]
	f.Seq, f.SysID, f.CompID = b[4], b[5], b[6]
	f.MsgID = uint32(b[7]) | uint32(b[8])<<8 | uint32(b[9])<<16
	return headerLenV2, n, vFrame
}

// verifySignature checks a signed MAVLink 2 frame: the signature is the
// first 48 bits of SHA-256(key ‖ header ‖ payload ‖ checksum ‖ link_id ‖
// timestamp), that is, of the key followed by the frame up to the signature
// bytes themselves.
func verifySignature(raw []byte, key *[KeyLen]byte) bool {
	var buf [KeyLen + maxFrameLength]byte
	copy(buf[:], key[:])
	signed := copy(buf[KeyLen:], raw[:len(raw)-6])
	sum := sha256.Sum256(buf[:KeyLen+signed])
	return subtle.ConstantTimeCompare(sum[:6], raw[len(raw)-6:]) == 1
}

// Sign computes the 6-byte signature of a signed MAVLink 2 frame (whose
// last 6 bytes, the signature itself, are ignored) with key.
func Sign(raw []byte, key *[KeyLen]byte) [6]byte {
	var buf [KeyLen + maxFrameLength]byte
	copy(buf[:], key[:])
	signed := copy(buf[KeyLen:], raw[:len(raw)-6])
	sum := sha256.Sum256(buf[:KeyLen+signed])
	var s [6]byte
	copy(s[:], sum[:6])
	return s
}
