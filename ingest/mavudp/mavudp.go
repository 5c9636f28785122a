package mavudp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuasd/cuasd/decode/mavlink"
	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/lifecycle"
)

// Protocol is the raw-subject protocol token the frames are published under.
const Protocol = "mavlink"

// Defaults of Config.
const (
	DefaultSensor   = "mavlink"
	DefaultMaxPeers = 256
	DefaultPeerIdle = 5 * time.Minute
	// queueLen bounds the batches waiting for the publisher; when it is
	// full the reader drops the batch (counted) rather than stall the
	// socket.
	queueLen = 256
	// maxBatch bounds the frames of one publish call.
	maxBatch = 512
)

// Error is the error type of package mavudp.
type Error struct {
	Op  string
	Err error
}

func (e *Error) Error() string { return "mavudp: " + e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Stats counts what an adapter saw. All counters are totals since start.
type Stats struct {
	// Datagrams and Bytes count what was read (UDP datagrams, or TCP reads).
	Datagrams int64
	Bytes     int64
	// Frames counts frames handed to the publisher queue; Published those
	// the publisher acknowledged; Dropped those lost to a full queue or a
	// failed publish.
	Frames    int64
	Published int64
	Dropped   int64
	// The parser's rejections, summed over peers.
	BadCRC       int64
	HeaderErrors int64
	SkippedBytes int64
	// Peers is the number of peers with parser state now; PeersEvicted
	// counts peers forgotten for idleness or to make room.
	Peers        int64
	PeersEvicted int64
	// Connects counts TCP connections made (TCP client only).
	Connects int64
}

type counters struct {
	datagrams, bytes, frames, published, dropped atomic.Int64
	badCRC, headerErrors, skipped                atomic.Int64
	peers, evicted, connects                     atomic.Int64
}

// parserSeen is how much of one parser's rejection counts is already in
// the totals.
type parserSeen struct {
	bad, hdr int
	skipped  int64
}

// account adds the rejections a parser counted since seen to the totals.
func (c *counters) account(seen *parserSeen, st mavlink.Stats) {
	c.badCRC.Add(int64(st.BadCRC - seen.bad))
	c.headerErrors.Add(int64(st.HeaderErrors - seen.hdr))
	c.skipped.Add(st.SkippedBytes - seen.skipped)
	*seen = parserSeen{bad: st.BadCRC, hdr: st.HeaderErrors, skipped: st.SkippedBytes}
}

func (c *counters) snapshot() Stats {
	return Stats{
		Datagrams: c.datagrams.Load(), Bytes: c.bytes.Load(), Frames: c.frames.Load(),
		Published: c.published.Load(), Dropped: c.dropped.Load(),
		BadCRC: c.badCRC.Load(), HeaderErrors: c.headerErrors.Load(), SkippedBytes: c.skipped.Load(),
		Peers: c.peers.Load(), PeersEvicted: c.evicted.Load(), Connects: c.connects.Load(),
	}
}

// batch is the frames of one read, for one sensor.
type batch struct {
	sensor string
	frames []ingest.Frame
}

// publisher drains the queue in its own goroutine so that a slow
// acknowledgement never stalls the socket reader.
type publisher struct {
	pub     ingest.Sink
	adapter string
	log     *slog.Logger
	c       *counters
	q       chan batch
}

func newPublisher(pub ingest.Sink, adapter string, log *slog.Logger, c *counters) *publisher {
	return &publisher{pub: pub, adapter: adapter, log: log, c: c, q: make(chan batch, queueLen)}
}

// enqueue hands a batch to the publisher goroutine, dropping it (counted)
// when the queue is full.
func (p *publisher) enqueue(b batch) {
	if len(b.frames) == 0 {
		return
	}
	p.c.frames.Add(int64(len(b.frames)))
	select {
	case p.q <- b:
	default:
		p.drop("queue_full", len(b.frames))
	}
}

func (p *publisher) drop(reason string, n int) {
	p.c.dropped.Add(int64(n))
	p.pub.Dropped(Protocol, p.adapter, reason, n)
}

// run publishes until the queue is closed. Batches waiting together are
// merged per sensor into one call.
func (p *publisher) run(ctx context.Context) {
	for b := range p.q {
		pending := map[string][]ingest.Frame{b.sensor: b.frames}
		order := []string{b.sensor}
	drain:
		for n := len(b.frames); n < maxBatch; {
			select {
			case more, ok := <-p.q:
				if !ok {
					break drain
				}
				if _, seen := pending[more.sensor]; !seen {
					order = append(order, more.sensor)
				}
				pending[more.sensor] = append(pending[more.sensor], more.frames...)
				n += len(more.frames)
			default:
				break drain
			}
		}
		for _, sensor := range order {
			frames := pending[sensor]
			res, err := p.pub.PublishFrames(ctx, p.adapter, Protocol, sensor, frames)
			if err != nil {
				p.c.published.Add(int64(res.Accepted))
				p.drop("publish", len(frames)-res.Accepted)
				p.log.Warn("publish MAVLink frames", "adapter", p.adapter, "sensor", sensor, "frames", len(frames), "err", err)
				continue
			}
			p.c.published.Add(int64(len(frames)))
		}
	}
}

// collect parses what s holds and returns the frames as ingest.Frames
// sharing one freshly allocated backing array (frames outlive the read
// buffer), with link (the peer's address, or empty) as their metadata.
func collect(s *mavlink.Stream, recv int64, link string) []ingest.Frame {
	var frames []ingest.Frame
	var arena []byte
	for {
		f, ok := s.Next()
		if !ok {
			break
		}
		if arena == nil {
			arena = make([]byte, 0, len(f.Raw)+s.Buffered()) // every frame still to come fits
		}
		start := len(arena)
		arena = append(arena, f.Raw...)
		frames = append(frames, ingest.Frame{Data: arena[start:len(arena):len(arena)], RecvUnixNano: recv, Link: link})
	}
	return frames
}

// peerSensor names a per-peer sensor with ingest.PeerSensor: base, "-",
// the address (an IP for a UDP peer, host:port for the TCP client's fixed
// address) ("mavlink-127-0-0-1").
func peerSensor(base string, addr string) string { return ingest.PeerSensor(base, addr) }

// UDPConfig configures a UDP listener.
type UDPConfig struct {
	// Addr is the address to listen on, e.g. "127.0.0.1:14550".
	Addr string
	// Sensor names the receiver (a subject token: [A-Za-z0-9_-]{1,64});
	// default "mavlink".
	Sensor string
	// PerPeerSensor publishes each peer host's frames under its own
	// sensor, Sensor + "-" + the peer's IP address (not its port): a MAVLink
	// system id is unique only on one network, so two vehicles both calling
	// themselves system 1 from two hosts stay two tracks, while a link that
	// reconnects from a new source port keeps its identity
	// (sysid-compid@sensor). The full peer address travels as metadata in
	// each raw message's Cuas-Link header.
	PerPeerSensor bool
	// MaxPeers bounds the peers with parser state (default 256); when a new
	// peer arrives at the limit the least recently heard one is forgotten.
	MaxPeers int
	// PeerIdle forgets the parser state of a peer silent this long
	// (default 5 minutes).
	PeerIdle time.Duration
	// Log receives warnings; nil means slog.Default().
	Log *slog.Logger
}

// UDP is a MAVLink UDP listener.
type UDP struct {
	cfg  UDPConfig
	conn *net.UDPConn
	c    counters
	pub  *publisher

	peers map[netip.AddrPort]*peer // used by the reader goroutine only
}

type peer struct {
	s      mavlink.Stream
	sensor string
	link   string // the peer's address, as metadata
	last   time.Time
	seen   parserSeen // its parser's counts already in the totals
}

// ListenUDP binds the listener's socket, so that an address in use is a
// start-up error; Run then serves it.
func ListenUDP(cfg UDPConfig) (*UDP, error) {
	if cfg.Sensor == "" {
		cfg.Sensor = DefaultSensor
	}
	if cfg.MaxPeers <= 0 {
		cfg.MaxPeers = DefaultMaxPeers
	}
	if cfg.PeerIdle <= 0 {
		cfg.PeerIdle = DefaultPeerIdle
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	addr, err := net.ResolveUDPAddr("udp", cfg.Addr)
	if err != nil {
		return nil, &Error{Op: "listen", Err: err}
	}
	conn, err := net.ListenUDP("udp", addr)
	if err != nil {
		return nil, &Error{Op: "listen", Err: err}
	}
	return &UDP{cfg: cfg, conn: conn, peers: map[netip.AddrPort]*peer{}}, nil
}

// Counters implements ingest.Counted.
func (*UDP) Counters() ingest.Counters {
	return ingest.Counters{Adapter: "mavlink-udp", Protocols: []string{Protocol}, DropReasons: []string{"queue_full"}}
}

// Name implements ingest.Source.
func (u *UDP) Name() string { return "mavlink-udp " + u.Addr().String() }

// Close releases the socket without running the listener.
func (u *UDP) Close() error { return u.conn.Close() }

// Addr returns the bound address (useful with port 0).
func (u *UDP) Addr() net.Addr { return u.conn.LocalAddr() }

// Stats returns the counters.
func (u *UDP) Stats() Stats { return u.c.snapshot() }

// KernelDrops implements ingest.KernelDropper: the datagrams the kernel
// dropped for this socket's full receive buffer.
func (u *UDP) KernelDrops() (uint64, bool) { return ingest.UDPKernelDrops(u.conn) }

// Run implements ingest.Source: it reads datagrams until ctx ends (then it
// closes the socket, publishes what is queued and returns nil) or the
// socket fails.
func (u *UDP) Run(ctx context.Context, sink ingest.Sink, rep lifecycle.Reporter) error {
	u.pub = newPublisher(sink, "mavlink-udp", u.cfg.Log, &u.c)
	rep.Up()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); u.pub.run(context.WithoutCancel(ctx)) }()
	stop := context.AfterFunc(ctx, func() { u.conn.Close() })
	defer stop()
	defer func() { close(u.pub.q); wg.Wait() }()

	buf := make([]byte, 64<<10)
	lastSweep := time.Now()
	for {
		n, from, err := u.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return &Error{Op: "read", Err: err}
		}
		now := time.Now()
		u.c.datagrams.Add(1)
		u.c.bytes.Add(int64(n))
		if now.Sub(lastSweep) > u.cfg.PeerIdle/4 {
			u.sweep(now)
			lastSweep = now
		}
		p := u.peer(from, now)
		p.last = now
		p.s.Write(buf[:n])
		frames := collect(&p.s, now.UnixNano(), p.link)
		u.c.account(&p.seen, p.s.Stats())
		u.pub.enqueue(batch{sensor: p.sensor, frames: frames})
	}
}

func (u *UDP) peer(from netip.AddrPort, now time.Time) *peer {
	if p, ok := u.peers[from]; ok {
		return p
	}
	if len(u.peers) >= u.cfg.MaxPeers {
		var oldest netip.AddrPort
		var ot time.Time
		for a, p := range u.peers {
			if ot.IsZero() || p.last.Before(ot) {
				oldest, ot = a, p.last
			}
		}
		delete(u.peers, oldest)
		u.c.evicted.Add(1)
	}
	p := &peer{sensor: u.cfg.Sensor, link: from.String(), last: now}
	if u.cfg.PerPeerSensor {
		p.sensor = peerSensor(u.cfg.Sensor, from.Addr().Unmap().String())
	}
	u.peers[from] = p
	u.c.peers.Store(int64(len(u.peers)))
	return p
}

func (u *UDP) sweep(now time.Time) {
	for a, p := range u.peers {
		if now.Sub(p.last) > u.cfg.PeerIdle {
			delete(u.peers, a)
			u.c.evicted.Add(1)
		}
	}
	u.c.peers.Store(int64(len(u.peers)))
}

// TCPConfig configures a TCP client.
type TCPConfig struct {
	// Addr is the MAVLink server, e.g. "127.0.0.1:5760" (ArduPilot SITL).
	Addr string
	// Sensor names the receiver; default "mavlink-tcp-" + Addr sanitised.
	Sensor string
	// MinBackoff and MaxBackoff bound the wait between reconnection
	// attempts (defaults 500 ms and 30 s); it doubles after each failure
	// and resets after a connection that delivered data.
	MinBackoff, MaxBackoff time.Duration
	// Log receives connection events; nil means slog.Default().
	Log *slog.Logger
}

// TCP is a MAVLink TCP client that reconnects until its context ends.
type TCP struct {
	cfg TCPConfig
	c   counters
	pub *publisher
}

// NewTCP returns a TCP client; Run connects.
func NewTCP(cfg TCPConfig) (*TCP, error) {
	if cfg.Addr == "" {
		return nil, &Error{Op: "tcp", Err: errors.New("no address")}
	}
	if cfg.Sensor == "" {
		cfg.Sensor = peerSensor("mavlink-tcp", cfg.Addr)
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = 500 * time.Millisecond
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(30*time.Second, cfg.MinBackoff)
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &TCP{cfg: cfg}, nil
}

// Counters implements ingest.Counted.
func (*TCP) Counters() ingest.Counters {
	return ingest.Counters{Adapter: "mavlink-tcp", Protocols: []string{Protocol}, DropReasons: []string{"queue_full"}}
}

// Name implements ingest.Source.
func (t *TCP) Name() string { return "mavlink-tcp " + t.cfg.Addr }

// Stats returns the counters.
func (t *TCP) Stats() Stats { return t.c.snapshot() }

// Run implements ingest.Source: it connects, reads and publishes,
// reconnecting with backoff, until ctx ends; it then returns nil after
// publishing what is queued.
func (t *TCP) Run(ctx context.Context, sink ingest.Sink, rep lifecycle.Reporter) error {
	t.pub = newPublisher(sink, "mavlink-tcp", t.cfg.Log, &t.c)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); t.pub.run(context.WithoutCancel(ctx)) }()
	defer func() { close(t.pub.q); wg.Wait() }()

	backoff := t.cfg.MinBackoff
	for {
		got, err := t.session(ctx, rep)
		if ctx.Err() != nil {
			return nil
		}
		rep.Retrying(err)
		if got {
			backoff = t.cfg.MinBackoff
		}
		t.cfg.Log.Warn("MAVLink TCP connection ended; reconnecting", "addr", t.cfg.Addr, "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, t.cfg.MaxBackoff)
	}
}

// session runs one connection; got reports whether it delivered data.
func (t *TCP) session(ctx context.Context, rep lifecycle.Reporter) (got bool, err error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", t.cfg.Addr)
	if err != nil {
		return false, err
	}
	t.c.connects.Add(1)
	rep.Up()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	defer conn.Close()
	t.cfg.Log.Info("MAVLink TCP connected", "addr", t.cfg.Addr)

	var s mavlink.Stream // a new connection starts a new stream
	var seen parserSeen
	buf := make([]byte, 32<<10)
	for {
		n, err := conn.Read(buf)
		if n > 0 {
			got = true
			now := time.Now().UnixNano()
			t.c.datagrams.Add(1)
			t.c.bytes.Add(int64(n))
			s.Write(buf[:n])
			t.pub.enqueue(batch{sensor: t.cfg.Sensor, frames: collect(&s, now, "")})
			t.c.account(&seen, s.Stats())
		}
		if err != nil {
			// The stream ended: frames hidden in a cut candidate are
			// still worth publishing.
			var tail []ingest.Frame
			for {
				f, ok := s.FlushNext()
				if !ok {
					break
				}
				tail = append(tail, ingest.Frame{Data: append([]byte(nil), f.Raw...), RecvUnixNano: time.Now().UnixNano()})
			}
			t.pub.enqueue(batch{sensor: t.cfg.Sensor, frames: tail})
			t.c.account(&seen, s.Stats())
			return got, fmt.Errorf("read: %w", err)
		}
	}
}

// The adapters are input sources.
var (
	_ ingest.Source = (*UDP)(nil)
	_ ingest.Source = (*TCP)(nil)
)
