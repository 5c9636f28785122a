// Package jsonudp is the UDP JSON sensor input: ESP32 Remote ID scanners,
// dronecot-style forwarders and DragonSync relays that send flat JSON
// objects (mac, rssi, lat, lon, alt, speed, heading, id, ...) or the
// DragonSync list shape, one per datagram or one per line of a datagram.
// Messages are parsed by package droneclaim and published by
// sensors.Intake.
package jsonudp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"syscall"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/ingest/sensors"
	"github.com/cuasd/cuasd/lifecycle"
)

// Adapter is the adapter label in metrics.
const Adapter = "json-udp"

// Error is the error type of package jsonudp.
type Error struct {
	Op  string
	Err error
}

func (e *Error) Error() string { return "jsonudp: " + e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Listener receives JSON datagrams. Each peer is its own sensor,
// "json-udp-<ip>" (dots become '_', as in every subject token), unless the flag names one sensor for all of them.
type Listener struct {
	pc     net.PacketConn
	sensor string
	intake sensors.Intake
	log    *slog.Logger
}

// Listen binds the --json-udp value HOST:PORT[?sensor=NAME&lat=..&lon=..]
// now, so that an address in use is a start-up error.
func Listen(spec string, reg *sensors.Registry, log *slog.Logger) (*Listener, error) {
	sp, err := sensors.ParseSpec(spec)
	if err != nil {
		return nil, &Error{Op: "config", Err: err}
	}
	pc, err := net.ListenPacket("udp", sp.Addr)
	if err != nil {
		return nil, &Error{Op: "listen", Err: err}
	}
	l := &Listener{pc: pc, log: log, intake: sensors.Intake{Adapter: Adapter, Registry: reg, Log: log}}
	if sp.Sensor != "" {
		l.sensor = bus.SensorName(sp.Sensor)
		reg.Configure(l.sensor, Adapter, sp.Position, sp.Expect)
	} else if sp.Position != nil {
		pc.Close()
		return nil, &Error{Op: "config", Err: fmt.Errorf("%q: a position needs a sensor name (sensor=NAME)", spec)}
	}
	return l, nil
}

// Name implements ingest.Source.
func (l *Listener) Name() string { return "json-udp " + l.pc.LocalAddr().String() }

// Counters implements ingest.Counted.
func (l *Listener) Counters() ingest.Counters { return l.intake.Counters() }

// Addr is the bound address.
func (l *Listener) Addr() net.Addr { return l.pc.LocalAddr() }

// KernelDrops implements ingest.KernelDropper: the datagrams the kernel
// dropped for this socket's full receive buffer.
func (l *Listener) KernelDrops() (uint64, bool) {
	if c, ok := l.pc.(syscall.Conn); ok {
		return ingest.UDPKernelDrops(c)
	}
	return 0, false
}

// Close releases the socket without running it.
func (l *Listener) Close() error { return l.pc.Close() }

// Run implements ingest.Source: it reads datagrams until ctx ends.
func (l *Listener) Run(ctx context.Context, sink ingest.Sink, rep lifecycle.Reporter) error {
	stop := context.AfterFunc(ctx, func() { l.pc.Close() })
	defer stop()
	rep.Up()
	// One byte more than a message may hold, so that an oversized datagram
	// is seen as such (IPv6 jumbograms aside, UDP cannot carry more).
	buf := make([]byte, 64<<10+1)
	for {
		n, peer, err := l.pc.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return &Error{Op: "read", Err: err}
		}
		l.datagram(ctx, sink, l.sensorOf(peer), buf[:n])
	}
}

func (l *Listener) sensorOf(peer net.Addr) string {
	if l.sensor != "" {
		return l.sensor
	}
	if u, ok := peer.(*net.UDPAddr); ok {
		return bus.SensorName("json-udp-" + u.IP.String())
	}
	return Adapter
}

// datagram handles one datagram: one message, or several on lines of
// their own.
func (l *Listener) datagram(ctx context.Context, sink ingest.Sink, sensor string, b []byte) {
	if len(b) > 64<<10 {
		l.intake.Refuse(sink, sensor, "oversized")
		return
	}
	for len(b) > 0 {
		line, rest, _ := bytes.Cut(b, []byte{'\n'})
		b = rest
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := l.intake.Handle(ctx, sink, sensor, line); sensors.IsPublishError(err) {
			l.log.Warn("sensor claim not published", "sensor", sensor, "err", err)
		}
	}
}

var _ ingest.Source = (*Listener)(nil)
