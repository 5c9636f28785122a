package pcap

import (
	"encoding/hex"
	"testing"
)

// FuzzUnwrap feeds arbitrary bytes to every link-layer unwrapper: none may
// panic, and what they hand on must lie inside the input.
func FuzzUnwrap(f *testing.F) {
	seeds := []string{
		// radiotap (flags with FCS) + short beacon header
		"000012002e48000010028f09a000b800000080000000ffffffffffff7ef24ab0b9717ef24ab0b971305ee5e3a025000000000000",
		// nRF Sniffer BLE v3, Coded PHY, extended advertising header
		"0308010313be020a210a350000a5e295a0d6be898e0007f409091c2febea7de0750ee916faff0d0cf0190000",
		// LE LL: access address + legacy ADV_NONCONN_IND + CRC
		"d6be898e421e0102030405061e16faff0d2a12262416fe42bf241b6ed1b4b69808ac0870086b54150e0100aabbcc",
	}
	for i, s := range seeds {
		b, _ := hex.DecodeString(s)
		f.Add(uint8(i), b)
	}
	f.Fuzz(func(t *testing.T, kind uint8, b []byte) {
		var p Packet
		switch kind % 5 {
		case 0:
			unwrapRadiotap(b, &p)
		case 1:
			unwrapNordic(b, &p)
		case 2:
			unwrapBLELL(b, false, &p)
		case 3:
			unwrapBLEPHDR(b, &p)
		case 4:
			unwrap80211(b, &p)
		}
		if len(p.Data) > len(b) {
			t.Fatalf("unwrapped %d bytes from %d", len(p.Data), len(b))
		}
	})
}
