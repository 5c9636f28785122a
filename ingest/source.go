package ingest

import (
	"context"
	"strings"

	"github.com/cuasd/cuasd/lifecycle"
)

// Source is one input adapter: a Beast or AVR receiver connection, a
// MAVLink socket, a capture being replayed, the traffic simulator, a
// sensor feed, HTTP ingest (which lends its Sink to the request handler;
// see the package documentation). Every source turns what it hears into
// raw frames with a sensor identity and publishes them through a Sink; it
// knows nothing of decoding beyond framing.
//
// A source that listens binds its socket when it is constructed, so that
// an address in use is a start-up error, not a retry loop.
type Source interface {
	// Name identifies the source in logs, /readyz and cuasd_component_up,
	// e.g. "beast-listen 127.0.0.1:30004".
	Name() string
	// Run publishes until ctx ends (and then returns nil) or the source
	// cannot go on; a finite source (a replay) returns nil when it has
	// published everything. It reports Up once it hears (or can hear) its sensor,
	// and Retrying with the error while it reconnects.
	Run(ctx context.Context, sink Sink, rep lifecycle.Reporter) error
}

// Sink is where sources publish raw frames. The Publisher is the Sink of
// cuasd serve and cuasd replay: it answers only once JetStream has stored
// the frames.
type Sink interface {
	// PublishFrames publishes each frame as its own raw message on
	// cuas.raw.{protocol}.{sensor}.
	PublishFrames(ctx context.Context, adapter, protocol, sensor string, frames []Frame) (Result, error)
	// PublishBatch publishes n length-prefixed frames (bus.FramingLP) as
	// one raw message. It must not keep batch after it returns: the caller
	// reuses the buffer.
	PublishBatch(ctx context.Context, adapter, protocol, sensor string, batch []byte, n int, recvUnixNano int64, id string) (Result, error)
	// Dropped counts frames a source discarded before publishing.
	Dropped(protocol, adapter, reason string, n int)
}

var _ Sink = (*Publisher)(nil)

// Counted is implemented by sources that know, before any traffic, the
// label values they publish and drop frames under; cuasd serve declares
// them to the Publisher so that every counter starts at 0 and an
// increase()-based alert sees the first drop.
type Counted interface{ Counters() Counters }

// Counters are the label values of one adapter's frame counters.
type Counters struct {
	// Adapter is the adapter label (e.g. "beast-listen").
	Adapter string
	// Protocols are the protocols the adapter publishes.
	Protocols []string
	// DropReasons are the reasons the adapter itself drops frames for (the
	// Publisher adds its own: publish, backpressure, error).
	DropReasons []string
}

// KernelDropper is implemented by sources that read a UDP socket: the
// datagrams the kernel dropped for them (UDPKernelDrops), exported as
// cuasd_udp_kernel_drops_total{source}.
type KernelDropper interface {
	KernelDrops() (uint64, bool)
}

// PeerSensor names the sensor of one pushing connection: prefix, "-", and
// the peer's address (its IP for a connection a listener accepted), with
// every character outside [A-Za-z0-9_-] replaced by '-' and cut to 64
// characters, so it is a subject token and a valid sensor name everywhere
// ("beast-in-192-0-2-7"). Every per-connection source names its sensors
// this way.
func PeerSensor(prefix, addr string) string {
	var b strings.Builder
	b.WriteString(prefix)
	b.WriteByte('-')
	for _, r := range addr {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := b.String()
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}

// FramedSink is a Sink that can publish batches of another framing than
// lp (bus.FramingBeast). A Mode S adapter whose sink is not one publishes
// lp batches, losing the receiver's timestamps and Mode A/C replies.
type FramedSink interface {
	Sink
	// clock is the Cuas-Clock of a Beast batch's timestamps ("" for the
	// default, 12mhz); position, when not "", the Cuas-Sensor-Position
	// the receiver stated (bus.SensorPosition.String, issue 31).
	PublishBatchFramed(ctx context.Context, adapter, protocol, sensor, framing, clock, position string, batch []byte, n int, recvUnixNano int64, id string) (Result, error)
	// ModeAC counts Mode A/C replies an adapter received.
	ModeAC(adapter string, n int)
}

var _ FramedSink = (*Publisher)(nil)
