package bus

import (
	"context"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// StreamPos is a message's place in a stream: when the server stored it
// (nanoseconds on the server's clock, 0: unknown) and its sequence (0:
// unknown). Both come from the server, so comparing two positions never
// compares two machines' clocks.
type StreamPos struct {
	Stored int64
	Seq    uint64
}

// After reports whether p comes after q. Storage times order a stream's
// messages even when the stream was recreated (its sequence starting
// over); the sequence orders those stored in the same nanosecond. A
// position with neither (a message not read from a stream) is after every
// other.
func (p StreamPos) After(q StreamPos) bool {
	if p.Stored == 0 && p.Seq == 0 {
		return true
	}
	return p.Stored > q.Stored || p.Stored == q.Stored && p.Seq > q.Seq
}

// StreamEnd returns the position of stream's newest message through nc
// (the zero StreamPos when the stream is empty): what a reader starting
// now marks as stored before it started. A reader that compares storage
// times with its own clock instead is wrong by the server's clock error,
// which on a NATS cluster of other machines is not under cuasd's control.
func StreamEnd(ctx context.Context, nc *nats.Conn, stream string) (StreamPos, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return StreamPos{}, &Error{"jetstream", err}
	}
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return StreamPos{}, &Error{"stream " + stream, err}
	}
	info, err := s.Info(ctx)
	if err != nil {
		return StreamPos{}, &Error{"stream info " + stream, err}
	}
	if info.State.LastSeq == 0 {
		return StreamPos{}, nil
	}
	return StreamPos{Stored: info.State.LastTime.UnixNano(), Seq: info.State.LastSeq}, nil
}
