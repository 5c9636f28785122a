package ingest

import (
	"context"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/lifecycle"
	"github.com/cuasd/cuasd/sim"
)

// Simulator is the traffic simulator as a source: standard-conformant
// ADS-B, Remote ID and MAVLink frames of a synthetic scenario (package
// sim), published through the same path as a real receiver's. It drives
// `cuasd serve --demo` and `cuasd simulate`.
type Simulator struct {
	Config sim.Config
	Sensor string
	// Batch publishes one lp-framed message per protocol and tick instead
	// of one message per frame.
	Batch bool
	// Stats is filled when Run returns.
	Stats sim.Stats
}

// Name implements Source.
func (s *Simulator) Name() string { return "simulator " + s.Sensor }

// Counters implements Counted.
func (s *Simulator) Counters() Counters { return Counters{Adapter: "simulator", Protocols: Protocols} }

// Run implements Source: it publishes until ctx ends or the scenario's
// duration is over.
func (s *Simulator) Run(ctx context.Context, sink Sink, rep lifecycle.Reporter) error {
	rep.Up()
	st, err := sim.Run(ctx, s.Config, &simSink{sink: sink, sensor: s.Sensor, batch: s.Batch})
	s.Stats = st
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// simSink adapts a Sink to the simulator's output.
type simSink struct {
	sink   Sink
	sensor string
	batch  bool
}

func (s *simSink) Publish(ctx context.Context, protocol string, frames [][]byte, recv int64) error {
	if s.batch {
		var body []byte
		for _, f := range frames {
			body = bus.AppendLP(body, f)
		}
		_, err := s.sink.PublishBatch(ctx, SimulatorAdapter, protocol, s.sensor, body, len(frames), recv, "")
		return err
	}
	fs := make([]Frame, len(frames))
	for i, f := range frames {
		fs[i] = Frame{Data: f, RecvUnixNano: recv}
	}
	_, err := s.sink.PublishFrames(ctx, SimulatorAdapter, protocol, s.sensor, fs)
	return err
}
