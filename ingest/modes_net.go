package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/lifecycle"
)

// DefaultMaxConns bounds the receiver connections one listener serves at
// once; more are accepted and closed at once (and counted as refused), so
// that idle or hostile clients cannot exhaust file descriptors.
const DefaultMaxConns = 256

// ModeSListener accepts Beast or AVR receivers that push to cuasd (readsb's
// and dump1090's --net-connector style outputs). Each connection is its own
// sensor, named after the listener and the peer's IP address
// ("beast-in-192.0.2.7"), so that per-sensor metrics and de-duplication
// tell receivers apart and a receiver that reconnects keeps its name.
type ModeSListener struct {
	Format ModeSFormat
	// Sensor prefixes the per-connection sensor names (default
	// "<format>-in").
	Sensor string
	// MaxConns bounds the connections served at once (DefaultMaxConns).
	MaxConns int
	Log      *slog.Logger

	ln      net.Listener
	active  atomic.Int64
	refused atomic.Uint64
	skipped atomic.Uint64
}

// ListenModeS binds addr now, so that an address in use is a start-up
// error; Run serves it.
func ListenModeS(addr string, format ModeSFormat, log *slog.Logger) (*ModeSListener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, &Error{Op: string(format) + " listen", Err: err}
	}
	return &ModeSListener{Format: format, Sensor: string(format) + "-in", MaxConns: DefaultMaxConns, Log: log, ln: ln}, nil
}

// Name implements Source.
func (l *ModeSListener) Name() string { return string(l.Format) + "-listen " + l.ln.Addr().String() }

// Addr is the bound address.
func (l *ModeSListener) Addr() net.Addr { return l.ln.Addr() }

// Refused counts connections closed because MaxConns were being served.
func (l *ModeSListener) Refused() uint64 { return l.refused.Load() }

// Active is the number of connections being served.
func (l *ModeSListener) Active() int { return int(l.active.Load()) }

// Skipped counts the bytes of finished connections that were not part of
// a frame (noise, a wrong format, a hostile client).
func (l *ModeSListener) Skipped() uint64 { return l.skipped.Load() }

// Close releases the listener without running it.
func (l *ModeSListener) Close() error { return l.ln.Close() }

// Run implements Source: it serves connections until ctx ends.
func (l *ModeSListener) Run(ctx context.Context, sink Sink, rep lifecycle.Reporter) error {
	stop := context.AfterFunc(ctx, func() { l.ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	rep.Up()
	for {
		conn, err := l.ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if isTimeout(err) {
				continue
			}
			return err
		}
		if l.MaxConns > 0 && l.active.Load() >= int64(l.MaxConns) {
			l.refused.Add(1)
			conn.Close()
			continue
		}
		l.active.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer l.active.Add(-1)
			l.serve(ctx, conn, sink)
		}()
	}
}

// serve reads one receiver connection until it ends or ctx does.
func (l *ModeSListener) serve(ctx context.Context, conn net.Conn, sink Sink) {
	defer conn.Close()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	context.AfterFunc(cctx, func() { conn.Close() })
	peer := conn.RemoteAddr().String()
	sensor := l.Sensor
	if host, _, err := net.SplitHostPort(peer); err == nil {
		sensor += "-" + host
	}
	s := &ModeSStream{Format: l.Format, Sensor: bus.Token(sensor), Adapter: string(l.Format) + "-listen", Pub: sink, Log: l.Log}
	l.Log.Info("Mode S receiver connected", "format", l.Format, "peer", peer, "sensor", s.Sensor)
	err := s.Run(cctx, conn)
	l.skipped.Add(uint64(s.Skipped))
	l.Log.Info("Mode S receiver disconnected", "format", l.Format, "peer", peer,
		"skipped_bytes", s.Skipped, "mode_ac", s.ModeAC, "err", errString(err))
}

// ModeSClient connects out to a receiver's output port (Beast 30005, AVR
// 30002) and keeps reconnecting, with back-off and jitter, until its
// context ends. The sensor is named after the address.
type ModeSClient struct {
	Addr   string
	Format ModeSFormat
	Sensor string
	Log    *slog.Logger
}

// ConnectModeS returns a client of the receiver at addr.
func ConnectModeS(addr string, format ModeSFormat, log *slog.Logger) *ModeSClient {
	return &ModeSClient{Addr: addr, Format: format, Sensor: bus.Token(addr), Log: log}
}

// Name implements Source.
func (c *ModeSClient) Name() string { return string(c.Format) + "-connect " + c.Addr }

// Run implements Source: it reads the receiver, reconnecting, until ctx
// ends.
func (c *ModeSClient) Run(ctx context.Context, sink Sink, rep lifecycle.Reporter) error {
	b := lifecycle.Backoff{Max: 30 * time.Second}
	for ctx.Err() == nil {
		connected, err := c.once(ctx, sink, rep)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			err = errors.New("connection closed by the receiver")
		}
		if connected {
			b.Reset() // it worked: the next wait starts short again
		}
		rep.Retrying(err)
		c.Log.Warn("Mode S receiver unavailable; retrying", "addr", c.Addr, "err", err)
		if !b.Sleep(ctx) {
			return nil
		}
	}
	return nil
}

// once makes one connection and reads it until it ends; connected says
// whether the dial succeeded.
func (c *ModeSClient) once(ctx context.Context, sink Sink, rep lifecycle.Reporter) (connected bool, err error) {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	conn, err := d.DialContext(dctx, "tcp", c.Addr)
	cancel()
	if err != nil {
		return false, fmt.Errorf("dial: %w", err)
	}
	defer conn.Close()
	rep.Up()
	c.Log.Info("connected to Mode S receiver", "addr", c.Addr, "format", c.Format)
	cctx, ccancel := context.WithCancel(ctx)
	defer ccancel()
	context.AfterFunc(cctx, func() { conn.Close() })
	s := &ModeSStream{Format: c.Format, Sensor: c.Sensor, Adapter: string(c.Format) + "-connect", Pub: sink, Log: c.Log}
	return true, s.Run(cctx, conn)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
