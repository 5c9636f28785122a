package remoteid

import "encoding/binary"

// Transport names the radio carrier a Remote ID payload arrived on.
type Transport uint8

// The transports of ASTM F3411 broadcast Remote ID. TransportNone is a bare
// message or pack handed over without a carrier.
const (
	TransportNone       Transport = iota
	TransportBT4                  // Bluetooth 4 legacy advertising, one message per advertisement
	TransportBT5                  // Bluetooth 5 extended advertising (Long Range), message packs
	TransportWiFiBeacon           // Wi-Fi beacon vendor-specific IE
	TransportWiFiNAN              // Wi-Fi Neighbour Awareness Networking service discovery frame
)

var transportNames = [...]string{"", "bt4", "bt5", "wifi_beacon", "wifi_nan"}

// String returns the JSON name: bt4, bt5, wifi_beacon, wifi_nan, or "" for none.
func (t Transport) String() string {
	if int(t) < len(transportNames) {
		return transportNames[t]
	}
	return "unknown"
}

// Frame is a decoded carrier frame: the Remote ID payload plus what the
// carrier says about its transmitter. A carrier holding a single message is
// represented as a pack of one with Single set.
type Frame struct {
	Transport Transport
	// Transmitter is the transmitter address (802.11 source address or BLE
	// AdvA), most significant byte first as usually printed. Receivers
	// associate a UA's separate messages by this address.
	Transmitter    [6]byte
	HasTransmitter bool
	// TransmitterRandom is the BLE TxAdd bit: the address is random, not public.
	TransmitterRandom bool
	// Counter is the carrier's message counter (incremented per change).
	Counter    uint8
	HasCounter bool
	// Single is true when the carrier held one message, not a pack.
	Single bool
	// PayloadOffset is where the message or pack starts in the input.
	PayloadOffset int
	Pack          Pack
}

// Wire constants of the carriers.
const (
	bleUUIDRemoteID = 0xFFFA // ASTM International 16-bit service UUID
	appCodeODID     = 0x0D   // Open Drone ID application code
	ieVendor        = 221
	ouiTypeODID     = 0x0D
	nanAttrSDA      = 0x03
)

var ouiASTM = [3]byte{0xFA, 0x0B, 0xBC}
var ouiWFA = [3]byte{0x50, 0x6F, 0x9A}

// nanServiceID is the first 6 bytes of SHA-256("org.opendroneid.remoteid").
var nanServiceID = [6]byte{0x88, 0x69, 0x19, 0x9D, 0x92, 0x09}

// decodePayload decodes the Remote ID payload of a carrier: a pack when the
// type nibble says so, else one message (trailing padding ignored).
func decodePayload(b []byte, base int, f *Frame) error {
	f.PayloadOffset = base
	if len(b) == 0 {
		return errAt(base, "Remote ID payload is empty")
	}
	if MessageType(b[0]>>4) == TypePack {
		f.Single = false
		return rebase(DecodePack(b, &f.Pack), base)
	}
	if len(b) < MessageSize {
		return errAt(base+len(b), "Remote ID message truncated: %d bytes, want 25", len(b))
	}
	f.Single = true
	p := &f.Pack
	if err := Decode(b[:MessageSize], &p.Messages[0]); err != nil {
		return rebase(err, base)
	}
	p.Count = 1
	p.Version = p.Messages[0].Version
	p.Warnings = 0
	return nil
}

func resetFrame(f *Frame, t Transport) {
	f.Transport = t
	f.HasTransmitter = false
	f.TransmitterRandom = false
	f.HasCounter = false
	f.Counter = 0
	f.Single = false
	f.PayloadOffset = 0
	f.Pack.Count = 0
}

// DecodeBLEAdvData finds the Remote ID service data (AD type 0x16, UUID
// 0xFFFA, application code 0x0D) among the advertising-data structures in b
// and decodes its counter and payload. A single message means Bluetooth 4
// legacy advertising, a pack Bluetooth 5 extended advertising; the Transport
// is set accordingly. A zero length byte ends the data (padding).
func DecodeBLEAdvData(b []byte, f *Frame) error {
	resetFrame(f, TransportNone)
	return decodeADs(b, 0, f)
}

func decodeADs(b []byte, base int, f *Frame) error {
	for i := 0; i < len(b); {
		l := int(b[i])
		if l == 0 {
			break
		}
		if i+1+l > len(b) && !(l >= 4 && i+4 < len(b) && b[i+1] == 0x16 && b[i+2] == 0xFA && b[i+3] == 0xFF) {
			// A truncated structure that is not ours: nothing more to read.
			return notRemoteID(base+i, "advertising data structure runs past the end")
		}
		end := min(i+1+l, len(b))
		if l >= 3 && b[i+1] == 0x16 && binary.LittleEndian.Uint16(b[i+2:]) == bleUUIDRemoteID {
			return decodeServiceData(b[i+4:end], base+i+4, f)
		}
		i = end
	}
	return notRemoteID(base, "no Remote ID service data (AD type 0x16, UUID 0xFFFA) in the advertising data")
}

// decodeServiceData decodes the Remote ID service data d (after the AD
// type and UUID), found at offset off: application code, counter and
// payload. A single message means Bluetooth 4, a pack Bluetooth 5.
func decodeServiceData(d []byte, off int, f *Frame) error {
	if len(d) < 2 {
		return errAt(off+len(d), "Remote ID service data too short for application code and counter")
	}
	if d[0] != appCodeODID {
		return errAt(off, "Remote ID application code 0x%02X, want 0x0D", d[0])
	}
	f.Counter, f.HasCounter = d[1], true
	if err := decodePayload(d[2:], off+2, f); err != nil {
		return err
	}
	if f.Transport == TransportNone {
		if f.Single {
			f.Transport = TransportBT4
		} else {
			f.Transport = TransportBT5
		}
	}
	return nil
}

// DecodeBLEAdvPDU decodes a BLE advertising-channel PDU starting at its
// 2-byte header (no access address, no CRC): legacy ADV_IND, ADV_NONCONN_IND,
// ADV_SCAN_IND and SCAN_RSP (Bluetooth 4), or the extended ADV_EXT_IND /
// AUX_ADV_IND / AUX_CHAIN_IND (Bluetooth 5) with its extended header. The
// transmitter address is the PDU's AdvA.
func DecodeBLEAdvPDU(b []byte, f *Frame) error {
	resetFrame(f, TransportNone)
	if len(b) < 2 {
		return notRemoteID(len(b), "BLE PDU shorter than its 2-byte header")
	}
	typ := b[0] & 0x0F
	n := int(b[1])
	body := b[2:]
	if n < len(body) {
		body = body[:n]
	}
	f.TransmitterRandom = b[0]&0x40 != 0
	switch typ {
	case 0x0, 0x2, 0x4, 0x6: // ADV_IND, ADV_NONCONN_IND, SCAN_RSP, ADV_SCAN_IND
		if len(body) < 6 {
			return notRemoteID(2+len(body), "legacy advertising PDU shorter than its address")
		}
		setBLEAddr(f, body[:6])
		f.Transport = TransportBT4
		return decodeADs(body[6:], 8, f)
	case 0x7: // extended advertising
		if len(body) < 1 {
			return notRemoteID(2, "extended advertising PDU without extended header length")
		}
		hl := int(body[0] & 0x3F)
		if 1+hl > len(body) {
			return notRemoteID(2, "extended header runs past the PDU")
		}
		if hl > 0 {
			flags := body[1]
			p := 2
			if flags&0x01 != 0 && p+6 <= 1+hl {
				setBLEAddr(f, body[p:p+6])
			}
		}
		f.Transport = TransportBT5
		return decodeADs(body[1+hl:], 2+1+hl, f)
	}
	return notRemoteID(0, "BLE PDU type carries no advertising data")
}

// setBLEAddr stores a BLE address, which travels least significant byte first.
func setBLEAddr(f *Frame, a []byte) {
	for i := 0; i < 6; i++ {
		f.Transmitter[i] = a[5-i]
	}
	f.HasTransmitter = true
}

// DecodeWiFi decodes an 802.11 management frame (starting at frame control,
// without radiotap header and without FCS): a beacon or probe response with
// the ASTM vendor IE, or a NAN service discovery action frame.
func DecodeWiFi(b []byte, f *Frame) error {
	if len(b) < 1 {
		resetFrame(f, TransportNone)
		return notRemoteID(0, "empty 802.11 frame")
	}
	if sub := b[0] >> 4; b[0]&0x0C == 0 && (sub == 13 || sub == 14) {
		return DecodeWiFiNAN(b, f)
	}
	return DecodeWiFiBeacon(b, f)
}

func wifiHeader(b []byte, f *Frame) (hdr int, err error) {
	if len(b) < 24 {
		return 0, notRemoteID(len(b), "802.11 frame shorter than its 24-byte header")
	}
	if b[0]&0x0C != 0 {
		return 0, notRemoteID(0, "802.11 frame is not a management frame")
	}
	copy(f.Transmitter[:], b[10:16])
	f.HasTransmitter = true
	hdr = 24
	if b[1]&0x80 != 0 { // +HTC: 4-byte HT control field
		hdr += 4
		if hdr > len(b) {
			return 0, notRemoteID(len(b), "802.11 frame shorter than its 28-byte +HTC header")
		}
	}
	return hdr, nil
}

// DecodeWiFiBeacon decodes an 802.11 beacon or probe response (frame control
// first, no radiotap, no FCS) carrying the vendor-specific IE 221 with OUI
// FA:0B:BC and type 0x0D, whose data are a message counter and a pack.
func DecodeWiFiBeacon(b []byte, f *Frame) error {
	resetFrame(f, TransportWiFiBeacon)
	hdr, err := wifiHeader(b, f)
	if err != nil {
		return err
	}
	if sub := b[0] >> 4; sub != 8 && sub != 5 {
		return notRemoteID(0, "802.11 management frame is neither a beacon nor a probe response")
	}
	i := hdr + 12 // timestamp 8, beacon interval 2, capabilities 2
	for i+2 <= len(b) {
		id, l := b[i], int(b[i+1])
		end := i + 2 + l
		if id == ieVendor && l >= 4 && i+6 <= len(b) &&
			b[i+2] == ouiASTM[0] && b[i+3] == ouiASTM[1] && b[i+4] == ouiASTM[2] && b[i+5] == ouiTypeODID {
			if end > len(b) {
				// Tolerated: some captures cut the frame; decode what is there.
				end = len(b)
			}
			if i+7 > end {
				return errAt(i+6, "Remote ID vendor IE has no message counter")
			}
			f.Counter, f.HasCounter = b[i+6], true
			return decodePayload(b[i+7:end], i+7, f)
		}
		if end > len(b) {
			break
		}
		i = end
	}
	return notRemoteID(min(hdr+12, len(b)), "no Remote ID vendor IE (221, OUI FA:0B:BC, type 0x0D)")
}

// DecodeWiFiNAN decodes an 802.11 NAN service discovery frame: a public
// action frame (category 4, action 9) with the Wi-Fi Alliance OUI 50:6F:9A
// type 0x13, holding a Service Descriptor Attribute whose service ID is that
// of org.opendroneid.remoteid and whose service info is a message counter and
// a pack.
func DecodeWiFiNAN(b []byte, f *Frame) error {
	resetFrame(f, TransportWiFiNAN)
	hdr, err := wifiHeader(b, f)
	if err != nil {
		return err
	}
	if sub := b[0] >> 4; sub != 13 && sub != 14 {
		return notRemoteID(0, "802.11 management frame is not an action frame")
	}
	if !isNANServiceDiscovery(b[hdr:]) {
		return notRemoteID(hdr, "action frame is not a NAN service discovery frame")
	}
	i := hdr + 6
	for i+3 <= len(b) {
		id := b[i]
		l := int(binary.LittleEndian.Uint16(b[i+1:]))
		body := i + 3
		end := min(body+l, len(b))
		if id == nanAttrSDA && end-body >= 9 && [6]byte(b[body:body+6]) == nanServiceID {
			return decodeNANServiceInfo(b, body, end, f)
		}
		i = body + l
	}
	return notRemoteID(min(hdr+6, len(b)), "no NAN service descriptor for org.opendroneid.remoteid")
}

// isNANServiceDiscovery reports whether an action frame's body a is a
// public action (category 4, action 9) of the Wi-Fi Alliance OUI, type
// 0x13: a NAN service discovery frame.
func isNANServiceDiscovery(a []byte) bool {
	return len(a) >= 6 && a[0] == 4 && a[1] == 9 &&
		a[2] == ouiWFA[0] && a[3] == ouiWFA[1] && a[4] == ouiWFA[2] && a[5] == 0x13
}

// decodeNANServiceInfo decodes the Remote ID Service Descriptor Attribute
// in b[body:end]: past the optional matching and service response filters,
// the service info holds a message counter and a pack.
func decodeNANServiceInfo(b []byte, body, end int, f *Frame) error {
	ctrl := b[body+8]
	p := body + 9
	var err error
	if ctrl&0x04 != 0 {
		if p, err = skipNANFilter(b, p, end, "NAN matching filter length missing"); err != nil {
			return err
		}
	}
	if ctrl&0x08 != 0 {
		if p, err = skipNANFilter(b, p, end, "NAN service response filter length missing"); err != nil {
			return err
		}
	}
	if ctrl&0x10 == 0 {
		return errAt(body+8, "Remote ID NAN service descriptor has no service info")
	}
	if p >= end {
		return errAt(min(p, len(b)), "NAN service info length missing")
	}
	il := int(b[p])
	info := p + 1
	infoEnd := min(info+il, end)
	if info >= infoEnd {
		return errAt(info, "Remote ID NAN service info has no message counter")
	}
	f.Counter, f.HasCounter = b[info], true
	return decodePayload(b[info+1:infoEnd], info+1, f)
}

// skipNANFilter steps over a length-prefixed filter at p, or says that its
// length is missing.
func skipNANFilter(b []byte, p, end int, missing string) (int, error) {
	if p >= end {
		return p, &Error{Offset: min(p, len(b)), Reason: missing}
	}
	return p + 1 + int(b[p]), nil
}

// Carrier selects how DecodeCarrier reads its input.
type Carrier uint8

// The carriers DecodeCarrier accepts. CarrierAuto recognises each of the
// others from the bytes.
const (
	CarrierAuto       Carrier = iota
	CarrierMessage            // one 25-byte message
	CarrierPack               // a message pack
	CarrierWiFiBeacon         // 802.11 beacon/probe response, no radiotap, no FCS
	CarrierWiFiNAN            // 802.11 NAN action frame, no radiotap, no FCS
	CarrierBLEAdvData         // BLE advertising data (AD structures)
	CarrierBLEPDU             // BLE advertising PDU from its header, no access address or CRC
)

var carrierNames = [...]string{"auto", "message", "message_pack", "wifi_beacon", "wifi_nan", "ble_adv_data", "ble_pdu"}

// String returns the carrier's name as accepted by ParseCarrier.
func (c Carrier) String() string {
	if int(c) < len(carrierNames) {
		return carrierNames[c]
	}
	return "unknown"
}

// CarrierNames lists the names ParseCarrier accepts.
func CarrierNames() []string { return append([]string(nil), carrierNames[:]...) }

// ParseCarrier maps a carrier name to a Carrier ("" means auto).
func ParseCarrier(s string) (Carrier, bool) {
	if s == "" {
		return CarrierAuto, true
	}
	for i, n := range carrierNames {
		if n == s {
			return Carrier(i), true
		}
	}
	return 0, false
}

// DecodeCarrier decodes b as carrier c. With CarrierAuto, a 25-byte input is
// a message, a 0xF_ 0x19 header a pack, an 802.11 beacon or action frame
// control a Wi-Fi frame, and anything else BLE advertising data.
func DecodeCarrier(c Carrier, b []byte, f *Frame) error {
	if c == CarrierAuto {
		c = DetectCarrier(b)
	}
	switch c {
	case CarrierMessage:
		resetFrame(f, TransportNone)
		if len(b) != MessageSize {
			return errAt(len(b), "message length %d, want %d", len(b), MessageSize)
		}
		return decodePayload(b, 0, f)
	case CarrierPack:
		resetFrame(f, TransportNone)
		if len(b) < 1 || MessageType(b[0]>>4) != TypePack {
			return DecodePack(b, &f.Pack)
		}
		return decodePayload(b, 0, f)
	case CarrierWiFiBeacon:
		return DecodeWiFiBeacon(b, f)
	case CarrierWiFiNAN:
		return DecodeWiFiNAN(b, f)
	case CarrierBLEAdvData:
		return DecodeBLEAdvData(b, f)
	case CarrierBLEPDU:
		return DecodeBLEAdvPDU(b, f)
	}
	resetFrame(f, TransportNone)
	return errAt(0, "unknown carrier")
}

// DetectCarrier guesses the carrier of b, as DecodeCarrier does for
// CarrierAuto.
func DetectCarrier(b []byte) Carrier {
	switch {
	case len(b) <= MessageSize:
		// Too short for any carrier holding a message: report it as a
		// message of the wrong length, the most useful reason.
		return CarrierMessage
	case len(b) >= 2 && b[0]>>4 == 0xF && b[1] == MessageSize:
		return CarrierPack
	case len(b) >= 24 && (b[0] == 0x80 || b[0] == 0x50):
		return CarrierWiFiBeacon
	case len(b) >= 24 && (b[0] == 0xD0 || b[0] == 0xE0):
		return CarrierWiFiNAN
	}
	return CarrierBLEAdvData
}
