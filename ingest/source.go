package ingest

import (
	"context"

	"github.com/cuasd/cuasd/lifecycle"
)

// Source is one input adapter: a Beast or AVR receiver connection, a
// MAVLink socket, the HTTP ingest endpoint, a capture being replayed, the
// traffic simulator, a sensor feed. Every source turns what it hears into
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
	// cannot go on. It reports Up once it hears (or can hear) its sensor,
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
