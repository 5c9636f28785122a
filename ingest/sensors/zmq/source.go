package zmq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/ingest/sensors"
	"github.com/cuasd/cuasd/ingest/sensors/droneclaim"
	"github.com/cuasd/cuasd/lifecycle"
)

// Adapter is the adapter label of ZeroMQ inputs in metrics.
const Adapter = "zmq"

// Source subscribes to one ZeroMQ publisher of a WarDragon kit —
// DragonSync's or droneid-go's Remote ID feed (port 4224), the AntSDR's
// DJI DroneID feed (4221) or the kit's status (4225) — and reconnects,
// with back-off, whenever the publisher goes away.
type Source struct {
	// Addr is HOST:PORT of the publisher.
	Addr string
	// Sensor names the sensor: by default "zmq-<host>", so that the three
	// feeds of one kit are one sensor and its status places it.
	Sensor string
	Intake sensors.Intake
	Log    *slog.Logger
}

// Parse reads a --zmq-connect value:
// [KIND=]tcp://HOST:PORT[?sensor=NAME&lat=LAT&lon=LON], KIND being
// remoteid, dji or status (default: tell by content).
func Parse(spec string, reg *sensors.Registry, log *slog.Logger) (*Source, error) {
	kind := droneclaim.KindAuto
	if k, rest, ok := strings.Cut(spec, "="); ok && !strings.Contains(k, "://") {
		var valid bool
		if kind, valid = droneclaim.ParseKind(k); !valid {
			return nil, &Error{Op: "config", Err: fmt.Errorf("unknown feed kind %q (use remoteid, dji or status)", k)}
		}
		spec = rest
	}
	sp, err := sensors.ParseSpec(spec)
	if err != nil {
		return nil, &Error{Op: "config", Err: err}
	}
	u, err := url.Parse(sp.Addr)
	if err != nil || u.Scheme != "tcp" || u.Port() == "" {
		return nil, &Error{Op: "config", Err: fmt.Errorf("%q is not tcp://HOST:PORT", spec)}
	}
	sensor := sp.Sensor
	if sensor == "" {
		sensor = "zmq-" + u.Hostname()
	}
	s := &Source{Addr: u.Host, Sensor: bus.SensorName(sensor), Log: log,
		Intake: sensors.Intake{Adapter: Adapter, Hint: kind, Registry: reg, Log: log}}
	reg.Configure(s.Sensor, "wardragon", sp.Position, sp.Expect)
	return s, nil
}

// Name implements ingest.Source.
func (s *Source) Name() string { return "zmq-connect " + s.Addr }

// Counters implements ingest.Counted.
func (s *Source) Counters() ingest.Counters { return s.Intake.Counters() }

// Run implements ingest.Source: it reads the publisher, reconnecting,
// until ctx ends.
func (s *Source) Run(ctx context.Context, sink ingest.Sink, rep lifecycle.Reporter) error {
	b := lifecycle.Backoff{Max: 30 * time.Second}
	for ctx.Err() == nil {
		connected, err := s.once(ctx, sink, rep)
		if ctx.Err() != nil {
			return nil
		}
		if connected {
			b.Reset()
		}
		rep.Retrying(err)
		s.Log.Warn("ZeroMQ publisher unavailable; retrying", "addr", s.Addr, "err", err)
		if !b.Sleep(ctx) {
			return nil
		}
	}
	return nil
}

// once makes one connection and reads it until it fails.
func (s *Source) once(ctx context.Context, sink ingest.Sink, rep lifecycle.Reporter) (bool, error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	c, err := Dial(dctx, s.Addr, droneclaim.MaxMessageBytes)
	cancel()
	if err != nil {
		return false, err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	rep.Up()
	s.Log.Info("subscribed to ZeroMQ publisher", "addr", s.Addr, "sensor", s.Sensor, "kind", s.Intake.Hint)
	for {
		msg, err := c.Next()
		var ze *Error
		switch {
		case errors.As(err, &ze) && ze.Oversized:
			s.Intake.Refuse(sink, s.Sensor, "oversized")
			continue
		case err != nil:
			return true, err
		}
		if err := s.Intake.Handle(ctx, sink, s.Sensor, msg); sensors.IsPublishError(err) {
			s.Log.Warn("sensor claim not published", "sensor", s.Sensor, "err", err)
		}
	}
}

var _ ingest.Source = (*Source)(nil)
