package pcap_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/cuasd/cuasd/decode/remoteid"
	"github.com/cuasd/cuasd/ingest/pcap"
)

// Replay a capture: every Remote ID carrier frame with its capture time.
func ExampleReader_NextRemoteID() {
	// An in-memory pcap holding one bare 802.11 beacon (the
	// wifi_beacon_pack5 vector of the opendroneid-core-c set).
	beacon, _ := hex.DecodeString("80000000ffffffffffff021122334455021122334455000000000000000000006400200400085249442d5445535401018cdd85fa0bbc0d07f219050212313539364633353041314232433344344535000000000012262416fe42bf241b6ed1b4b69808ac0870086b54150e0100320053757276657920666c6967687400000000000000000000420530b3241ba0e0b4b601000000000000128e0880fe210a00520046494e38376173747264676531326b3800000000000000")
	var capture bytes.Buffer
	w := pcapgo.NewWriter(&capture)
	_ = w.WriteFileHeader(65535, layers.LinkTypeIEEE802_11)
	at := time.Date(2024, 7, 6, 12, 0, 0, 0, time.UTC)
	_ = w.WritePacket(gopacket.CaptureInfo{Timestamp: at, CaptureLength: len(beacon), Length: len(beacon)}, beacon)

	r, err := pcap.NewReader(&capture)
	if err != nil {
		fmt.Println(err)
		return
	}
	var f pcap.RemoteIDFrame
	for {
		err := r.NextRemoteID(&f)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || f.Err != nil {
			fmt.Println(err, f.Err)
			return
		}
		o := remoteid.FrameObservation(&f.Frame, f.Packet.Time.UnixNano(), "replay")
		fmt.Println(f.Packet.Number, f.Packet.Time.Format(time.RFC3339), f.Transport(),
			remoteid.FormatMAC(f.Frame.Transmitter), f.Frame.Pack.Count, o.Key, o.Lat, o.Lon)
	}
	fmt.Printf("%+v\n", r.Stats)
	// Output:
	// 1 2024-07-06T12:00:00Z wifi_beacon 02:11:22:33:44:55 5 1596F350A1B2C3D4E5 45.539309 -122.966389
	// {Packets:1 Unsupported:0 ChecksumFailed:0 RemoteID:1}
}
