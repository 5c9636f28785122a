// Package pcap reads pcap and pcapng capture files (pure Go, through
// github.com/gopacket/gopacket's pcapgo; no libpcap) and hands out the
// link-layer payloads that carry broadcast drone signals: 802.11 frames
// (radiotap or bare, FCS checked and stripped) and Bluetooth LE advertising
// PDUs (nRF Sniffer for BLE, or raw LE link-layer captures, access address and
// CRC stripped, CRC status kept). On top of that, NextRemoteID yields the
// Remote ID carrier frames with their capture time and transport; the
// pipeline's replay reuses it.
//
// It owns the capture file formats and link-layer headers only. Protocol
// decoding stays in the decode packages (decode/remoteid here); this package
// must not import HTTP, NATS or pipeline packages.
package pcap
