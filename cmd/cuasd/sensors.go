package main

import (
	"context"
	"fmt"
	"time"

	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/ingest/sensors"
	"github.com/cuasd/cuasd/ingest/sensors/jsonudp"
	"github.com/cuasd/cuasd/ingest/sensors/serial"
	"github.com/cuasd/cuasd/ingest/sensors/wificap"
	"github.com/cuasd/cuasd/ingest/sensors/zmq"
	"github.com/cuasd/cuasd/lifecycle"
)

// sensorSources builds the field sensor inputs (issue 25): ZeroMQ
// subscriptions, UDP JSON listeners (bound now) and serial devices, all
// recording in the service's sensor registry. On an error the listeners
// bound so far are closed.
func sensorSources(cfg config, s *service) ([]ingest.Source, error) {
	if s.sensorReg == nil {
		s.sensorReg = sensors.NewRegistry(time.Duration(cfg.SensorExpect))
	}
	reg := s.sensorReg
	var out []ingest.Source
	fail := func(err error) ([]ingest.Source, error) {
		for _, src := range out {
			if c, ok := src.(interface{ Close() error }); ok {
				c.Close()
			}
		}
		return nil, err
	}
	for _, spec := range cfg.ZMQConnect.vals {
		src, err := zmq.Parse(spec, reg, s.log)
		if err != nil {
			return fail(fmt.Errorf("--zmq-connect: %w", err))
		}
		out = append(out, src)
	}
	for _, spec := range cfg.JSONUDP.vals {
		src, err := jsonudp.Listen(spec, reg, s.log)
		if err != nil {
			return fail(listenError("--json-udp", spec, err)) // names an address in use (issue 24)
		}
		if addr := src.Addr().String(); !isLoopback(addr) {
			s.log.Warn("--json-udp listens beyond loopback: UDP JSON is unauthenticated, anyone who can reach "+
				addr+" can inject drone claims; firewall it to the sensors", "addr", addr)
		}
		out = append(out, src)
	}
	for _, spec := range cfg.Serial.vals {
		src, err := serial.Parse(spec, reg, s.log)
		if err != nil {
			return fail(fmt.Errorf("--serial: %w", err))
		}
		out = append(out, src)
	}
	for _, spec := range cfg.WiFiCapture.vals {
		src, err := wificap.Open(spec, reg, s.log)
		if err != nil {
			return fail(fmt.Errorf("--wifi-capture: %w", err))
		}
		out = append(out, src)
	}
	return out, nil
}

// sensorsDown are the /readyz degraded reasons of the field sensors that
// have been silent longer than --sensor-expect.
func sensorsDown(reg *sensors.Registry) []string {
	if reg == nil {
		return nil
	}
	var out []string
	for _, s := range reg.LocalDown() {
		if s.LastHeard.IsZero() {
			out = append(out, fmt.Sprintf("sensor %s (%s) not heard yet", s.ID, s.Kind))
		} else {
			out = append(out, fmt.Sprintf("sensor %s (%s) silent since %s", s.ID, s.Kind, s.LastHeard.UTC().Format(time.RFC3339)))
		}
	}
	return out
}

// sensorSync publishes this instance's field sensors as sensor events on
// cuas.sensor.{id} and merges the other instances', so that every
// instance's /v1/sensors lists every sensor of the cluster (issue 25).
func (s *service) sensorSync() lifecycle.Component {
	return s.stage("sensor registry", func(ctx context.Context, rep lifecycle.Reporter) error {
		if s.sensorReg == nil { // not built: the listeners made none
			rep.Up()
			<-ctx.Done()
			return nil
		}
		a := &sensors.Announcer{Registry: s.sensorReg, Conn: s.bus.Conn, Instance: s.cfg.instance(), Log: s.log}
		return a.Run(ctx, rep)
	})
}
