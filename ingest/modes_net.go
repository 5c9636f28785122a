package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/lifecycle"
)

// DefaultMaxConns bounds the receiver connections one listener serves at
// once; more are accepted and closed at once (and counted as refused), so
// that idle or hostile clients cannot exhaust file descriptors.
const DefaultMaxConns = 256

// DefaultIdleTimeout closes a receiver connection that sent nothing for
// this long, so that idle clients cannot hold every one of the MaxConns
// slots (issue 23). Receivers that are quiet for lack of traffic send
// heartbeats far more often (readsb and dump1090: every 60 s).
const DefaultIdleTimeout = 10 * time.Minute

// errIdle ends a connection that sent nothing for its idle timeout.
var errIdle = errors.New("no data within the idle timeout")

// idleConn fails a read that times out (the stream readers' flush
// deadline) once nothing has arrived for idle (never when idle is 0), and
// tells its turn when it began waiting for data that has not come.
type idleConn struct {
	net.Conn
	idle time.Duration
	last time.Time
	turn *connTurn
}

func (c *idleConn) Read(p []byte) (int, error) {
	c.turn.waitingSince.CompareAndSwap(0, time.Now().UnixNano())
	n, err := c.Conn.Read(p)
	now := time.Now()
	if n > 0 {
		c.last = now
		c.turn.waitingSince.Store(0)
	}
	if n == 0 && isTimeout(err) && c.idle > 0 && now.Sub(c.last) > c.idle {
		return 0, errIdle
	}
	return n, err
}

// A receiver that reconnects — a feeder or relay closing its connection
// and opening a new one at once, re-sending its buffer or not — leaves
// its old connection's last data in cuasd's socket buffer, still being
// read, when the new connection is accepted. Served at once, the two
// streams of one sensor interleave: its clock model sees the receiver's
// time go back and forth (clock resets, positions refused as jumps, fixes
// and SBS lines lost: TestDeliveryModesEqual's reconnect, 3 resets and
// 40 % of the history lost). So a connection of a sensor being served
// waits for its turn before it is read: until the connection before has
// ended, or has waited settleQuiet for data that did not come (a
// half-open connection whose peer is gone), or for at most settleMax (two
// receivers behind one address, both live: then both are served, as
// before, or the older closed on a named port).
const (
	settleQuiet = time.Second
	settleMax   = 10 * time.Second
)

// connTurn is a served connection as the next connection of its sensor
// waits for it.
type connTurn struct {
	done chan struct{} // closed when the connection has been read to its end
	// waitingSince is when its reads began waiting for data that has not
	// come (Unix ns; 0 while data comes).
	waitingSince atomic.Int64
}

// settled waits until t's connection has ended or is quiet, settleMax or
// ctx has passed.
func (t *connTurn) settled(ctx context.Context) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	limit := time.NewTimer(settleMax)
	defer limit.Stop()
	for {
		if w := t.waitingSince.Load(); w != 0 && time.Since(time.Unix(0, w)) >= settleQuiet {
			return
		}
		select {
		case <-t.done:
			return
		case <-limit.C:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// nextTurn registers a connection of the sensor name, in the order the
// connections were accepted, and returns its turn and the turn of the
// connection before it (nil if none is served), whose settling it waits
// for.
func (l *ModeSListener) nextTurn(name string) (t, prev *connTurn) {
	t = &connTurn{done: make(chan struct{})}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.turns == nil {
		l.turns = map[string]*connTurn{}
	}
	prev, l.turns[name] = l.turns[name], t
	return t, prev
}

// endTurn ends a connection's turn.
func (l *ModeSListener) endTurn(name string, t *connTurn) {
	close(t.done)
	l.mu.Lock()
	if l.turns[name] == t {
		delete(l.turns, name)
	}
	l.mu.Unlock()
}

// ModeSListener accepts Beast or AVR receivers that push to cuasd (readsb's
// and dump1090's --net-connector style outputs). Each connection is its own
// sensor, named after the listener and the peer's IP address
// ("beast-in-192-0-2-7", see PeerSensor), so that per-sensor metrics and de-duplication
// tell receivers apart and a receiver that reconnects keeps its name.
type ModeSListener struct {
	Format ModeSFormat
	// Sensor prefixes the per-connection sensor names (default
	// "<format>-in").
	Sensor string
	// Fixed, when set, is the sensor name of every connection, instead of
	// one named after each peer: a port given to one receiver
	// (--beast-listen HOST:PORT?sensor=NAME, which can also place it for
	// multilateration, issue 31).
	Fixed string
	// Clock is what the receivers' Beast timestamps are (issue 30).
	Clock sensorclock.Kind
	// MaxConns bounds the connections served at once (DefaultMaxConns).
	MaxConns int
	// IdleTimeout closes a connection silent for this long
	// (DefaultIdleTimeout; negative: never).
	IdleTimeout time.Duration
	Log         *slog.Logger

	ln      net.Listener
	active  atomic.Int64
	refused atomic.Uint64
	skipped atomic.Uint64
	idled   atomic.Uint64
	// With Fixed, the one connection served (current) and how many were
	// replaced by a newer one.
	mu       sync.Mutex
	current  net.Conn
	replaced atomic.Uint64
	// Without Fixed, the connections being served per sensor name.
	names map[string]int
	// The newest connection of each sensor name, which the next waits for.
	turns map[string]*connTurn
}

// ListenModeS binds addr now, so that an address in use is a start-up
// error; Run serves it.
func ListenModeS(addr string, format ModeSFormat, log *slog.Logger) (*ModeSListener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, &Error{Op: string(format) + " listen", Err: err}
	}
	return &ModeSListener{Format: format, Sensor: string(format) + "-in", MaxConns: DefaultMaxConns,
		IdleTimeout: DefaultIdleTimeout, Log: log, ln: ln}, nil
}

// Name implements Source.
func (l *ModeSListener) Name() string { return string(l.Format) + "-listen " + l.ln.Addr().String() }

// Counters implements Counted.
func (l *ModeSListener) Counters() Counters {
	return Counters{Adapter: string(l.Format) + "-listen", Protocols: []string{"adsb"}, DropReasons: []string{"queue_full"}}
}

// Addr is the bound address.
func (l *ModeSListener) Addr() net.Addr { return l.ln.Addr() }

// Refused counts connections closed because MaxConns were being served.
func (l *ModeSListener) Refused() uint64 { return l.refused.Load() }

// Active is the number of connections being served.
func (l *ModeSListener) Active() int { return int(l.active.Load()) }

// Skipped counts the bytes of finished connections that were not part of
// a frame (noise, a wrong format, a hostile client).
func (l *ModeSListener) Skipped() uint64 { return l.skipped.Load() }

// Idled counts connections closed for sending nothing within IdleTimeout.
func (l *ModeSListener) Idled() uint64 { return l.idled.Load() }

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
		// The turn is taken here, in the order of the connections, not by
		// their goroutines, which may run in either order.
		name, peer := l.sensorOf(conn)
		turn, prev := l.nextTurn(name)
		go func() {
			defer wg.Done()
			defer l.active.Add(-1)
			defer l.endTurn(name, turn)
			if prev != nil {
				prev.settled(ctx)
			}
			l.serve(ctx, conn, sink, name, peer, turn)
		}()
	}
}

// sensorOf is the sensor name of a connection (Fixed, or named after its
// peer's address) and the peer.
func (l *ModeSListener) sensorOf(conn net.Conn) (name, peer string) {
	peer = conn.RemoteAddr().String()
	if l.Fixed != "" {
		return l.Fixed, peer
	}
	host, _, err := net.SplitHostPort(peer)
	if err != nil {
		host = peer
	}
	return PeerSensor(l.Sensor, host), peer
}

// serve reads one receiver connection, the sensor name's, until it ends
// or ctx does.
func (l *ModeSListener) serve(ctx context.Context, conn net.Conn, sink Sink, name, peer string, turn *connTurn) {
	defer conn.Close()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	context.AfterFunc(cctx, func() { conn.Close() })
	if l.Fixed != "" {
		defer l.serveOnly(conn, peer)()
	} else {
		defer l.countName(name, peer)()
	}
	s := &ModeSStream{Format: l.Format, Sensor: name, Adapter: string(l.Format) + "-listen", Pub: sink, Log: l.Log, Clock: l.Clock}
	l.Log.Info("Mode S receiver connected", "format", l.Format, "peer", peer, "sensor", s.Sensor)
	r := &idleConn{Conn: conn, idle: cmp.Or(l.IdleTimeout, DefaultIdleTimeout), last: time.Now(), turn: turn}
	if l.IdleTimeout < 0 {
		r.idle = 0
	}
	err := s.Run(cctx, r)
	if errors.Is(err, errIdle) {
		l.idled.Add(1)
	}
	l.skipped.Add(uint64(s.Skipped))
	l.Log.Info("Mode S receiver disconnected", "format", l.Format, "peer", peer,
		"skipped_bytes", s.Skipped, "mode_ac", s.ModeAC, "err", errString(err))
}

// Replaced counts the connections to a Fixed listener closed because a
// newer one came.
func (l *ModeSListener) Replaced() uint64 { return l.replaced.Load() }

// serveOnly makes conn the one connection a Fixed listener serves,
// closing the one before, and returns what to call when conn ends. A port
// named for one receiver serving two would make two receivers' clocks one
// sensor's; the newer wins, so a receiver reconnecting while its old
// connection is still half open is served at once.
func (l *ModeSListener) serveOnly(conn net.Conn, peer string) func() {
	l.mu.Lock()
	if old := l.current; old != nil {
		l.replaced.Add(1)
		l.Log.Warn("a new connection replaces the receiver's previous one: a port given ?sensor= is one receiver's",
			"sensor", l.Fixed, "peer", peer, "previous", old.RemoteAddr().String())
		old.Close()
	}
	l.current = conn
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		if l.current == conn {
			l.current = nil
		}
		l.mu.Unlock()
	}
}

// countName counts a connection of a listener naming connections after
// their peers, warning when its name is already being served: two
// receivers behind one address (a NAT) are one sensor whose clock model
// sees two receivers' timestamps interleaved, which cuasd cannot undo.
// It returns what to call when the connection ends.
func (l *ModeSListener) countName(name, peer string) func() {
	l.mu.Lock()
	if l.names == nil {
		l.names = map[string]int{}
	}
	l.names[name]++
	n := l.names[name]
	l.mu.Unlock()
	if n == 2 { // once as it becomes shared: every connection is logged anyway
		l.Log.Warn("two connections at once from one address are one sensor, their receivers' clocks mixed: give each receiver its own port with ?sensor=NAME",
			"sensor", name, "peer", peer, "connections", n)
	}
	return func() {
		l.mu.Lock()
		if l.names[name]--; l.names[name] <= 0 {
			delete(l.names, name)
		}
		l.mu.Unlock()
	}
}

// ModeSClient connects out to a receiver's output port (Beast 30005, AVR
// 30002) and keeps reconnecting, with back-off and jitter, until its
// context ends. The sensor is named after the address.
type ModeSClient struct {
	Addr   string
	Format ModeSFormat
	Sensor string
	Log    *slog.Logger
	// Clock is what the receiver's Beast timestamps are (issue 30).
	Clock sensorclock.Kind
}

// ConnectModeS returns a client of the receiver at addr.
func ConnectModeS(addr string, format ModeSFormat, log *slog.Logger) *ModeSClient {
	return &ModeSClient{Addr: addr, Format: format, Sensor: bus.SensorName(addr), Log: log}
}

// Name implements Source.
func (c *ModeSClient) Name() string { return string(c.Format) + "-connect " + c.Addr }

// Counters implements Counted.
func (c *ModeSClient) Counters() Counters {
	return Counters{Adapter: string(c.Format) + "-connect", Protocols: []string{"adsb"}, DropReasons: []string{"queue_full"}}
}

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
	s := &ModeSStream{Format: c.Format, Sensor: c.Sensor, Adapter: string(c.Format) + "-connect", Pub: sink, Log: c.Log, Clock: c.Clock}
	return true, s.Run(cctx, conn)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
