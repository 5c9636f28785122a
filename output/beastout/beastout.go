package beastout

import (
	"context"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/lifecycle"
	"github.com/cuasd/cuasd/output"
)

// maxBehind is how many bytes of Beast a client (or the aggregator
// connection) may fall behind before losing raw messages' worth of them:
// about 30 s of the pipeline benchmark's 52,000 frames a second (~22
// bytes each), 25 minutes of a busy receiver's 1,000.
const maxBehind = 32 << 20

// Out is the Beast output: a listener (Listen) or a client of an
// aggregator (Connect).
type Out struct {
	addr string
	all  bool
	// simulated relays simulated frames too (--demo-outputs; issue 34).
	simulated bool
	log       *slog.Logger
	bc        *output.Broadcast    // listen
	push      *output.StreamBuffer // connect
}

// Listen binds addr for Beast clients (readsb's --net-bo-port 30005).
// all relays CRC-bad frames too.
func Listen(addr string, all bool, log *slog.Logger) (*Out, error) {
	bc, err := output.ListenBroadcast(addr, maxBehind, log)
	if err != nil {
		return nil, &Error{Op: "listen " + addr, Err: err}
	}
	return &Out{addr: bc.Addr().String(), all: all, log: log, bc: bc}, nil
}

// Connect returns an output that pushes Beast to the server at addr (an
// aggregator's Beast input), reconnecting.
func Connect(addr string, all bool, log *slog.Logger) *Out {
	return &Out{addr: addr, all: all, log: log, push: output.NewStreamBuffer(maxBehind)}
}

// IncludeSimulated makes the output relay simulated frames too (cuasd's
// --demo-outputs); by default a feeder never forwards made-up traffic to
// an aggregator. Beast has no field to mark them: the simulator's frames
// carry timestamp 0 and signal 0. Call it before Run.
func (o *Out) IncludeSimulated(yes bool) { o.simulated = yes }

// Name implements output.Output.
func (o *Out) Name() string {
	if o.bc != nil {
		return "beast-out-listen " + o.addr
	}
	return "beast-out-connect " + o.addr
}

// Addr is the listening address (or the server's, for Connect).
func (o *Out) Addr() string { return o.addr }

// Dropped is the number of raw messages' worth of Beast bytes dropped for
// slow or absent clients.
func (o *Out) Dropped() uint64 {
	if o.bc != nil {
		return o.bc.Dropped()
	}
	return o.push.Dropped()
}

// Run implements output.Output: it relays cuas.raw.adsb.> until ctx ends.
func (o *Out) Run(ctx context.Context, ev output.Events, rep lifecycle.Reporter) error {
	enc := &Encoder{Filter: Filter{All: o.all}}
	send := o.send
	var scratch []byte // the clients' buffers copy it
	unsub, err := ev.Subscribe(bus.RawPrefix+".adsb.>", func(m *nats.Msg) {
		if !o.simulated && bus.Simulated(m.Header) {
			return
		}
		var err error
		scratch, err = enc.AppendMsg(scratch[:0], m, time.Now().UnixNano())
		if err != nil {
			o.log.Debug("beast out: malformed raw message", "subject", m.Subject, "err", err)
		}
		if len(scratch) > 0 {
			send(scratch)
		}
	})
	if err != nil {
		return &Error{Op: "subscribe", Err: err}
	}
	defer unsub()
	if o.bc != nil {
		rep.Up()
		return o.bc.Serve(ctx)
	}
	output.Push(ctx, o.addr, o.push, rep, o.log)
	return nil
}

func (o *Out) send(b []byte) {
	if o.bc != nil {
		o.bc.Send(b)
		return
	}
	o.push.Put(b)
}
