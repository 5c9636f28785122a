package pcap

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Error is this package's error type: a capture that cannot be read, or a
// frame whose checksum failed.
type Error struct {
	// Frame is the 1-based frame number in the capture, 0 for file-level errors.
	Frame  int
	Reason string
}

func (e *Error) Error() string {
	if e.Frame == 0 {
		return "pcap: " + e.Reason
	}
	return fmt.Sprintf("pcap: frame %d: %s", e.Frame, e.Reason)
}

// Link types this reader understands (tcpdump.org LINKTYPE_ values).
const (
	LinkTypeIEEE80211         = 105 // bare 802.11, FCS presence detected by checking it
	LinkTypeRadiotap          = 127 // radiotap + 802.11
	LinkTypeBluetoothLELL     = 251 // access address + PDU + CRC
	LinkTypeBluetoothLEPHDR   = 256 // 10-byte pseudo header + LE link layer
	LinkTypeNordicBLE         = 272 // nRF Sniffer for Bluetooth LE
	bleAdvertisingAccessAddr  = 0x8E89BED6
	nordicPacketIDAdvPDU      = 0x02
	nordicFlagCRCOK           = 0x01
	nordicPHYCoded            = 2
	radiotapFlagFCS           = 0x10
	radiotapFlagBadFCS        = 0x40
	blePHDRFlagCRCChecked     = 0x0400
	blePHDRFlagCRCValid       = 0x0800
	blePHDRFlagDewhitened     = 0x0001
	blePHDRFlagSignalPresent  = 0x0002
	blePHDRFlagRefAAValid     = 0x0010
	blePHDRFlagAAOffensesFail = 0x0020
)

// Medium is the radio a packet's Data belongs to.
type Medium uint8

// The media this reader extracts.
const (
	MediumUnsupported Medium = iota // a link type or packet this reader does not unwrap
	MediumWiFi                      // Data is an 802.11 frame from frame control, without FCS
	MediumBLE                       // Data is a BLE PDU from its 2-byte header, without access address and CRC
)

// Packet is one captured frame with its link-layer encapsulation removed.
type Packet struct {
	Number   int // 1-based frame number in the capture, as Wireshark counts
	Time     time.Time
	LinkType int
	Medium   Medium
	// Data is valid until the next call to Next.
	Data []byte
	// ChecksumKnown says whether the capture told (or let us check) the
	// FCS/CRC; ChecksumOK is its result.
	ChecksumKnown bool
	ChecksumOK    bool
	// RSSI in dBm, when the capture records it.
	RSSI    int
	HasRSSI bool
}

// Reader reads a pcap or pcapng capture packet by packet.
type Reader struct {
	next func() ([]byte, gopacket.CaptureInfo, int, error)
	n    int
	// Stats counts what the reader has seen so far.
	Stats Stats
}

// Stats counts packets by what became of them.
type Stats struct {
	Packets        int // every packet in the capture
	Unsupported    int // link type or packet kind not unwrapped
	ChecksumFailed int // FCS/CRC known to be wrong
	RemoteID       int // Remote ID carrier frames yielded by NextRemoteID
}

// NewReader opens a capture, telling pcap from pcapng by its magic number.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReader(r)
	magic, err := br.Peek(4)
	if err != nil {
		return nil, &Error{Reason: "capture shorter than a file header: " + err.Error()}
	}
	if bytes.Equal(magic, []byte{0x0A, 0x0D, 0x0D, 0x0A}) {
		ng, err := pcapgo.NewNgReader(br, pcapgo.NgReaderOptions{WantMixedLinkType: true, SkipUnknownVersion: true})
		if err != nil {
			return nil, &Error{Reason: "pcapng: " + err.Error()}
		}
		return &Reader{next: func() ([]byte, gopacket.CaptureInfo, int, error) {
			data, ci, err := ng.ReadPacketData()
			lt := int(ng.LinkType())
			if err == nil && len(ci.AncillaryData) > 0 {
				if l, ok := ci.AncillaryData[0].(layers.LinkType); ok {
					lt = int(l)
				}
			}
			return data, ci, lt, err
		}}, nil
	}
	pr, err := pcapgo.NewReader(br)
	if err != nil {
		return nil, &Error{Reason: "not a pcap or pcapng capture: " + err.Error()}
	}
	lt := int(pr.LinkType())
	return &Reader{next: func() ([]byte, gopacket.CaptureInfo, int, error) {
		data, ci, err := pr.ReadPacketData()
		return data, ci, lt, err
	}}, nil
}

// Next returns the next packet, unwrapped as far as this reader knows how
// (Medium says how far), or io.EOF at the end of the capture.
func (r *Reader) Next() (Packet, error) {
	data, ci, lt, err := r.next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return Packet{}, io.EOF
		}
		return Packet{}, &Error{Frame: r.n + 1, Reason: err.Error()}
	}
	r.n++
	r.Stats.Packets++
	p := Unwrap(lt, data)
	p.Number, p.Time = r.n, ci.Timestamp
	if p.Medium == MediumUnsupported {
		r.Stats.Unsupported++
	}
	if p.ChecksumKnown && !p.ChecksumOK {
		r.Stats.ChecksumFailed++
	}
	return p, nil
}

// Unwrap removes the link-layer encapsulation of one frame of link type
// lt (a LinkType* value), as Next does for a capture's packets: the live
// Wi-Fi capture (ingest/sensors/wificap) reads the same radiotap frames
// from an AF_PACKET socket. Data aliases data.
func Unwrap(lt int, data []byte) Packet {
	p := Packet{LinkType: lt}
	switch lt {
	case LinkTypeRadiotap:
		unwrapRadiotap(data, &p)
	case LinkTypeIEEE80211:
		unwrap80211(data, &p)
	case LinkTypeNordicBLE:
		unwrapNordic(data, &p)
	case LinkTypeBluetoothLELL:
		unwrapBLELL(data, false, &p)
	case LinkTypeBluetoothLEPHDR:
		unwrapBLEPHDR(data, &p)
	}
	return p
}

// unwrapRadiotap strips the radiotap header and, when its flags say one is
// present, the FCS, which it checks.
func unwrapRadiotap(b []byte, p *Packet) {
	if len(b) < 8 {
		return
	}
	hl := int(binary.LittleEndian.Uint16(b[2:]))
	if hl < 8 || hl > len(b) {
		return
	}
	flags, hasFlags := radiotapFlags(b[:hl])
	frame := b[hl:]
	if hasFlags && flags&radiotapFlagFCS != 0 {
		if len(frame) < 4 {
			return
		}
		p.ChecksumKnown = true
		p.ChecksumOK = fcsOK(frame) && flags&radiotapFlagBadFCS == 0
		frame = frame[:len(frame)-4]
	} else if hasFlags && flags&radiotapFlagBadFCS != 0 {
		p.ChecksumKnown, p.ChecksumOK = true, false
	}
	p.Medium, p.Data = MediumWiFi, frame
}

// radiotapFlags finds the Flags field (present bit 1), which follows only
// the 8-byte, 8-aligned TSFT field (bit 0) when that is present.
func radiotapFlags(h []byte) (uint8, bool) {
	present := binary.LittleEndian.Uint32(h[4:])
	off := 8
	for w := present; w&(1<<31) != 0; { // extended present bitmaps
		if off+4 > len(h) {
			return 0, false
		}
		w = binary.LittleEndian.Uint32(h[off:])
		off += 4
	}
	if present&0x2 == 0 {
		return 0, false
	}
	if present&0x1 != 0 {
		off = (off + 7) &^ 7
		off += 8
	}
	if off >= len(h) {
		return 0, false
	}
	return h[off], true
}

func fcsOK(frame []byte) bool {
	n := len(frame) - 4
	return crc32.ChecksumIEEE(frame[:n]) == binary.LittleEndian.Uint32(frame[n:])
}

// unwrap80211 handles bare 802.11 captures, which may or may not keep the
// FCS: a trailing CRC-32 that matches is taken to be one (a false match has
// odds of 2^-32).
func unwrap80211(b []byte, p *Packet) {
	if len(b) >= 28 && fcsOK(b) {
		p.ChecksumKnown, p.ChecksumOK = true, true
		b = b[:len(b)-4]
	}
	p.Medium, p.Data = MediumWiFi, b
}

// unwrapNordic reads the nRF Sniffer for Bluetooth LE format (protocol
// versions 2 and 3): board ID, a 6-byte header (payload length, protocol
// version, packet counter, packet ID), a packet header (length, flags,
// channel, RSSI, event counter, timestamp), then the LE packet: access
// address, a coding-indicator byte on the Coded PHY, the PDU and its CRC.
func unwrapNordic(b []byte, p *Packet) {
	if len(b) < 8 || b[3] < 2 {
		return // too short, or the legacy (version 1) format
	}
	if b[6] != nordicPacketIDAdvPDU && b[6] != 0x06 {
		return // not a received packet event
	}
	h := 7
	hl := int(b[h])
	if hl < 10 || h+hl > len(b) {
		return
	}
	flags := b[h+1]
	p.RSSI, p.HasRSSI = -int(b[h+3]), true
	p.ChecksumKnown = true
	p.ChecksumOK = flags&nordicFlagCRCOK != 0
	ll := b[h+hl:]
	coded := (flags>>4)&0x7 == nordicPHYCoded
	unwrapBLELL(ll, coded, p)
}

// unwrapBLELL strips access address (and coding indicator) and CRC
// from an advertising-channel LE packet. Data-channel packets are left
// unsupported: Remote ID travels on advertising PDUs only.
func unwrapBLELL(b []byte, coded bool, p *Packet) {
	if len(b) < 4 || binary.LittleEndian.Uint32(b) != bleAdvertisingAccessAddr {
		return
	}
	pdu := b[4:]
	if coded {
		if len(pdu) < 1 {
			return
		}
		pdu = pdu[1:]
	}
	if len(pdu) < 2+3 {
		return
	}
	n := int(pdu[1])
	if 2+n+3 <= len(pdu) {
		pdu = pdu[:2+n]
	} else {
		pdu = pdu[:len(pdu)-3] // length byte damaged: keep what is there, minus the CRC
	}
	p.Medium, p.Data = MediumBLE, pdu
}

// unwrapBLEPHDR reads LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR: rf channel, signal,
// noise, access-address offenses, reference access address, flags (2), then
// the LE packet.
func unwrapBLEPHDR(b []byte, p *Packet) {
	if len(b) < 10 {
		return
	}
	flags := binary.LittleEndian.Uint16(b[8:])
	if flags&blePHDRFlagSignalPresent != 0 {
		p.RSSI, p.HasRSSI = int(int8(b[1])), true
	}
	if flags&blePHDRFlagCRCChecked != 0 {
		p.ChecksumKnown = true
		p.ChecksumOK = flags&blePHDRFlagCRCValid != 0
	}
	unwrapBLELL(b[10:], false, p)
}
