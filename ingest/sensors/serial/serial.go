// Package serial is the USB-serial sensor input: ESP32 Remote ID scanners
// that print one JSON object per line (the shape of ESP32's drone
// scanners, and DragonSync's list shape), at 115200 baud unless told
// otherwise. The port is reopened, with back-off, when the device goes
// away and comes back. Lines are parsed by package droneclaim and
// published by sensors.Intake.
package serial

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	goserial "go.bug.st/serial"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/ingest/sensors"
	"github.com/cuasd/cuasd/ingest/sensors/droneclaim"
	"github.com/cuasd/cuasd/lifecycle"
)

// Adapter is the adapter label in metrics.
const Adapter = "serial"

// DefaultBaud is the ESP32 scanners' rate.
const DefaultBaud = 115200

// Error is the error type of package serial.
type Error struct {
	Op  string
	Err error
}

func (e *Error) Error() string { return "serial: " + e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Source reads one serial device.
type Source struct {
	Path   string
	Baud   int
	Sensor string
	Intake sensors.Intake
	Log    *slog.Logger
}

// Parse reads a --serial value: PATH[:BAUD][?sensor=NAME&lat=..&lon=..].
// The sensor is named "serial-<device name>" unless named.
func Parse(spec string, reg *sensors.Registry, log *slog.Logger) (*Source, error) {
	sp, err := sensors.ParseSpec(spec)
	if err != nil {
		return nil, &Error{Op: "config", Err: err}
	}
	s := &Source{Path: sp.Addr, Baud: DefaultBaud, Log: log,
		Intake: sensors.Intake{Adapter: Adapter, Registry: reg, Log: log}}
	// by-path device names hold colons themselves: only a last part of
	// digits is a baud rate.
	if i := strings.LastIndexByte(sp.Addr, ':'); i >= 0 && isDigits(sp.Addr[i+1:]) {
		baud, err := strconv.Atoi(sp.Addr[i+1:])
		if err != nil || baud <= 0 || baud > 4_000_000 {
			return nil, &Error{Op: "config", Err: fmt.Errorf("%q: baud rate %q out of range", spec, sp.Addr[i+1:])}
		}
		s.Path, s.Baud = sp.Addr[:i], baud
	}
	if s.Path == "" {
		return nil, &Error{Op: "config", Err: fmt.Errorf("%q: no device path", spec)}
	}
	s.Sensor = bus.SensorName(sp.Sensor)
	if sp.Sensor == "" {
		s.Sensor = bus.SensorName("serial-" + filepath.Base(s.Path))
	}
	reg.Configure(s.Sensor, Adapter, sp.Position, sp.Expect)
	return s, nil
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// Name implements ingest.Source.
func (s *Source) Name() string { return "serial " + s.Path }

// Counters implements ingest.Counted.
func (s *Source) Counters() ingest.Counters { return s.Intake.Counters() }

// Run implements ingest.Source: it reads the device, reopening it, until
// ctx ends.
func (s *Source) Run(ctx context.Context, sink ingest.Sink, rep lifecycle.Reporter) error {
	b := lifecycle.Backoff{Max: 10 * time.Second}
	for ctx.Err() == nil {
		opened, err := s.once(ctx, sink, rep)
		if ctx.Err() != nil {
			return nil
		}
		if opened {
			b.Reset()
		}
		rep.Retrying(err)
		s.Log.Warn("serial sensor unavailable; retrying", "path", s.Path, "err", err)
		if !b.Sleep(ctx) {
			return nil
		}
	}
	return nil
}

func (s *Source) once(ctx context.Context, sink ingest.Sink, rep lifecycle.Reporter) (bool, error) {
	port, err := goserial.Open(s.Path, &goserial.Mode{BaudRate: s.Baud})
	if err != nil {
		return false, &Error{Op: "open " + s.Path, Err: err}
	}
	defer port.Close()
	stop := context.AfterFunc(ctx, func() { port.Close() })
	defer stop()
	rep.Up()
	s.Log.Info("serial sensor open", "path", s.Path, "baud", s.Baud, "sensor", s.Sensor)
	return true, s.Read(ctx, sink, port)
}

// Read publishes the lines of r until it ends (the device went away) or
// fails. A line over the message limit is skipped to its end and counted.
func (s *Source) Read(ctx context.Context, sink ingest.Sink, r io.Reader) error {
	br := bufio.NewReaderSize(r, droneclaim.MaxMessageBytes+1)
	skipping := false
	for {
		line, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			if !skipping {
				s.Intake.Refuse(sink, s.Sensor, "oversized")
			}
			skipping = true
			continue
		case skipping:
			skipping = false // the end of the oversized line
		case len(bytes.TrimSpace(line)) > 0:
			if herr := s.Intake.Handle(ctx, sink, s.Sensor, line); sensors.IsPublishError(herr) {
				s.Log.Warn("sensor claim not published", "sensor", s.Sensor, "err", herr)
			}
		}
		if err != nil {
			if err == io.EOF {
				err = errors.New("the device closed")
			}
			return &Error{Op: "read", Err: err}
		}
	}
}

var _ ingest.Source = (*Source)(nil)
