// Package wificap is the live Wi-Fi capture input: on Linux, an 802.11
// interface already in monitor mode is read through an AF_PACKET socket
// (no libpcap, no cgo), and the Remote ID beacons and NAN frames among the
// captured frames are published as raw Remote ID frames for cuasd's own
// decoder. Other frames (access points' beacons, data) are dropped here,
// uncounted, so that a busy channel does not flood the pipeline.
//
// Putting the interface in monitor mode is the operator's job (iw dev
// wlan1 set type monitor; iw dev wlan1 set channel 6), as is the
// capability to open a packet socket (root or CAP_NET_RAW).
package wificap

import (
	"context"
	"errors"
	"log/slog"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/remoteid"
	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/ingest/pcap"
	"github.com/cuasd/cuasd/ingest/sensors"
	"github.com/cuasd/cuasd/lifecycle"
)

// Adapter is the adapter label in metrics.
const Adapter = "wifi-capture"

// Error is the error type of package wificap.
type Error struct {
	Op  string
	Err error
}

func (e *Error) Error() string { return "wificap: " + e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Source captures one monitor-mode interface.
type Source struct {
	Iface  string
	Sensor string
	// LinkType is how the interface frames packets (pcap.LinkTypeRadiotap
	// for a monitor interface); Open finds it.
	LinkType int
	Registry *sensors.Registry
	Log      *slog.Logger

	sock packetSocket
	f    remoteid.Frame
}

// packetSocket is the open capture: one packet per Read.
type packetSocket interface {
	Read(b []byte) (int, error)
	Close() error
}

// Name implements ingest.Source.
func (s *Source) Name() string { return "wifi-capture " + s.Iface }

// Counters implements ingest.Counted: Remote ID frames, dropped only for
// the publisher's reasons.
func (s *Source) Counters() ingest.Counters {
	return ingest.Counters{Adapter: Adapter, Protocols: []string{sensors.ProtocolRemoteID}}
}

// Close releases the socket without running it.
func (s *Source) Close() error { return s.sock.Close() }

// Run implements ingest.Source: it reads packets until ctx ends.
func (s *Source) Run(ctx context.Context, sink ingest.Sink, rep lifecycle.Reporter) error {
	stop := context.AfterFunc(ctx, func() { s.sock.Close() })
	defer stop()
	rep.Up()
	buf := make([]byte, 1<<16)
	for {
		n, err := s.sock.Read(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return &Error{Op: "read " + s.Iface, Err: err}
		}
		if fr, ok := s.Frame(buf[:n]); ok {
			s.Registry.Heard(s.Sensor, Adapter)
			if _, err := sink.PublishFrames(ctx, Adapter, sensors.ProtocolRemoteID, s.Sensor, []ingest.Frame{fr}); err != nil {
				s.Log.Warn("captured Remote ID frame not published", "iface", s.Iface, "err", err)
			}
		}
	}
}

// Frame turns one captured packet into the raw frame to publish: the
// 802.11 frame without radiotap or FCS, when it carries Remote ID (a
// beacon vendor element or a NAN service discovery frame) and its FCS, if
// known, is right. The bytes are copied.
func (s *Source) Frame(pkt []byte) (ingest.Frame, bool) {
	p := pcap.Unwrap(s.LinkType, pkt)
	if p.Medium != pcap.MediumWiFi || (p.ChecksumKnown && !p.ChecksumOK) {
		return ingest.Frame{}, false
	}
	// A frame that is Remote ID but malformed is published all the same:
	// the decoder dead-letters it with its reason, where it can be seen.
	if err := remoteid.DecodeWiFi(p.Data, &s.f); errors.Is(err, remoteid.ErrNotRemoteID) {
		return ingest.Frame{}, false
	}
	fr := ingest.Frame{Data: append([]byte(nil), p.Data...)}
	if p.HasRSSI {
		fr.Signal = float64(p.RSSI)
	}
	return fr, true
}

// defaultSensor names the sensor of an interface.
func defaultSensor(iface string) string { return bus.SensorName("wifi-" + iface) }

var _ ingest.Source = (*Source)(nil)
