package pcap

import (
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// Radiotap with TSFT before Flags: the flags byte sits after the 8-aligned
// TSFT, and with the FCS flag the trailing CRC-32 is checked and stripped.
func TestRadiotapTSFTAndFCS(t *testing.T) {
	frame := []byte{0x80, 0x00, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	fcs := binary.LittleEndian.AppendUint32(nil, crc32.ChecksumIEEE(frame))
	hdr := []byte{0, 0, 17, 0, 0x03, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, radiotapFlagFCS}
	for _, c := range []struct {
		name   string
		tail   []byte
		wantOK bool
	}{{"good FCS", fcs, true}, {"bad FCS", []byte{0, 0, 0, 0}, false}} {
		var p Packet
		unwrapRadiotap(append(append(append([]byte{}, hdr...), frame...), c.tail...), &p)
		if p.Medium != MediumWiFi || len(p.Data) != len(frame) || !p.ChecksumKnown || p.ChecksumOK != c.wantOK {
			t.Errorf("%s: medium %v len %d known %v ok %v", c.name, p.Medium, len(p.Data), p.ChecksumKnown, p.ChecksumOK)
		}
	}
}

// LE link layer: access address and CRC stripped; other access addresses
// (data channels) are not unwrapped.
func TestBLELL(t *testing.T) {
	pdu := []byte{0x42, 0x06, 1, 2, 3, 4, 5, 6}
	ll := append(append([]byte{0xd6, 0xbe, 0x89, 0x8e}, pdu...), 0xaa, 0xbb, 0xcc)
	var p Packet
	unwrapBLELL(ll, false, &p)
	if p.Medium != MediumBLE || string(p.Data) != string(pdu) {
		t.Errorf("got %v %x", p.Medium, p.Data)
	}
	ll[0] = 0x11
	p = Packet{}
	unwrapBLELL(ll, false, &p)
	if p.Medium != MediumUnsupported {
		t.Errorf("data-channel access address unwrapped")
	}
}
