package remoteid

import (
	"errors"
	"testing"
)

// BLE advertising PDUs built around the ble4_ad_location vector's AD
// structure; the addresses are test inputs, sent least significant byte first.
func TestDecodeBLEAdvPDU(t *testing.T) {
	ad := mustHex(t, findVector(t, "ble4_ad_location").Hex)
	addr := []byte{0x06, 0x05, 0x04, 0x03, 0x02, 0xC1}
	legacy := append([]byte{0x42, byte(6 + len(ad))}, append(append([]byte{}, addr...), ad...)...)
	var f Frame
	if err := DecodeBLEAdvPDU(legacy, &f); err != nil {
		t.Fatal(err)
	}
	if f.Transport != TransportBT4 || FormatMAC(f.Transmitter) != "c1:02:03:04:05:06" || !f.TransmitterRandom ||
		f.Counter != 42 || !f.Single || f.Pack.Messages[0].Type != TypeLocation {
		t.Errorf("legacy: %+v", f)
	}
	// ADV_EXT_IND/AUX_ADV_IND: extended header with AdvA and ADI.
	ext := append([]byte{0x07, 0}, 0x09, 0x09)
	ext = append(ext, addr...)
	ext = append(ext, 0x75, 0x0e)
	ext = append(ext, ad...)
	ext[1] = byte(len(ext) - 2)
	if err := DecodeBLEAdvPDU(ext, &f); err != nil {
		t.Fatal(err)
	}
	if f.Transport != TransportBT5 || FormatMAC(f.Transmitter) != "c1:02:03:04:05:06" || f.Counter != 42 {
		t.Errorf("extended: %+v", f)
	}
	// A scan request carries no advertising data: not Remote ID.
	if err := DecodeBLEAdvPDU([]byte{0x03, 0x0c, 1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, &f); !errors.Is(err, ErrNotRemoteID) {
		t.Errorf("scan request: %v", err)
	}
}

func TestCarrierNotRemoteID(t *testing.T) {
	var f Frame
	for name, b := range map[string][]byte{
		"flags AD only":      {0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		"beacon without IE":  append([]byte{0x80, 0}, make([]byte, 34)...),
		"data frame":         append([]byte{0x08, 0}, make([]byte, 30)...),
		"other action frame": append([]byte{0xD0, 0}, append(make([]byte, 22), 4, 9, 0x50, 0x6F, 0x9A, 0x09)...),
	} {
		t.Run(name, func(t *testing.T) {
			err := DecodeCarrier(CarrierAuto, b, &f)
			if !errors.Is(err, ErrNotRemoteID) {
				t.Errorf("%s: %v", name, err)
			}
		})
	}
	// ErrNotRemoteID itself must not be rebased (it is shared).
	_ = rebase(ErrNotRemoteID, 10)
	if ErrNotRemoteID.Offset != 0 {
		t.Fatal("ErrNotRemoteID was modified")
	}
}
