package output

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuasd/cuasd/lifecycle"
)

// MaxClients bounds the clients of one Broadcast: each holds a queue and
// two goroutines, so an unbounded number would let anyone who can connect
// exhaust memory.
const MaxClients = 64

// writeTimeout bounds one write to a stream client: a client that takes
// longer is dead or stuck, and is disconnected.
const writeTimeout = 30 * time.Second

// Broadcast serves a byte stream (Beast, SBS lines) to every client of a
// TCP listener, the way readsb serves ports 30003 and 30005. Each client
// has its own bounded StreamBuffer: a slow client loses chunks (counted),
// never slows the sender or the other clients. Chunks must hold whole
// records, since a client may lose any of them.
//
// Memory is bounded for all clients together, not only each: a client
// may hold ClientReserve bytes of its own, and beyond that only what it
// borrows from one budget of maxBytes that the Broadcast's clients share.
// A lagging client may so fall up to maxBytes behind while the others
// keep up, but MaxClients stalled clients hold at most maxBytes +
// MaxClients × ClientReserve, not MaxClients × maxBytes (64 × 64 MiB for
// SBS) as a bound per client alone allowed.
type Broadcast struct {
	ln       net.Listener
	maxBytes int
	budget   *Budget
	log      *slog.Logger

	mu      sync.Mutex
	clients map[*StreamBuffer]struct{}
	dropped atomic.Uint64 // by clients that have gone
	active  atomic.Int32  // connections being served
}

// ListenBroadcast binds addr now (so an address in use is a start-up
// error); each client may fall maxBytes behind.
func ListenBroadcast(addr string, maxBytes int, log *slog.Logger) (*Broadcast, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &Broadcast{ln: ln, maxBytes: maxBytes, budget: NewBudget(maxBytes), log: log, clients: map[*StreamBuffer]struct{}{}}, nil
}

// Addr is the bound address.
func (b *Broadcast) Addr() net.Addr { return b.ln.Addr() }

// Send appends p to every client's buffer, a copy each: the caller may
// reuse p at once.
func (b *Broadcast) Send(p []byte) {
	b.mu.Lock()
	for q := range b.clients {
		q.Put(p)
	}
	b.mu.Unlock()
}

// Clients is the number of connected clients.
func (b *Broadcast) Clients() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.clients)
}

// Dropped is the number of chunks dropped for slow clients so far.
func (b *Broadcast) Dropped() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.dropped.Load()
	for q := range b.clients {
		n += q.Dropped()
	}
	return n
}

// Serve accepts clients until ctx ends, then closes the listener and every
// client. It returns nil after ctx ended, or the listener's error.
func (b *Broadcast) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { b.ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := b.ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return &Error{Op: "accept", Err: err}
		}
		if b.active.Load() >= MaxClients {
			b.log.Warn("stream client refused: too many clients", "listen", b.ln.Addr().String(), "peer", conn.RemoteAddr().String(), "max", MaxClients)
			conn.Close()
			continue
		}
		b.active.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer b.active.Add(-1)
			b.serveClient(ctx, conn)
		}()
	}
}

func (b *Broadcast) serveClient(ctx context.Context, conn net.Conn) {
	q := NewStreamBuffer(b.maxBytes)
	q.Share(b.budget, ClientReserve)
	b.mu.Lock()
	b.clients[q] = struct{}{}
	b.mu.Unlock()
	peer := conn.RemoteAddr().String()
	b.log.Info("stream client connected", "listen", b.ln.Addr().String(), "peer", peer)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	context.AfterFunc(cctx, func() { conn.Close() })
	go watchClose(conn, cancel)
	err := WriteFrom(cctx, conn, q)
	b.mu.Lock()
	delete(b.clients, q)
	b.dropped.Add(q.Dropped())
	b.mu.Unlock()
	q.Close() // no Send reaches q now: what it borrowed goes back
	b.log.Info("stream client disconnected", "peer", peer, "dropped_chunks", q.Dropped(), "err", err)
}

// watchClose reads (and discards) what the peer sends until the
// connection ends, then calls cancel: a peer that sends nothing is
// expected, and a closed connection must end the writer even when there
// is nothing to write.
func watchClose(conn net.Conn, cancel func()) {
	var buf [512]byte
	for {
		if _, err := conn.Read(buf[:]); err != nil {
			cancel()
			return
		}
	}
}

// FlushInterval is how long a stream writer holds what a client has
// waiting before writing it with whatever else arrived meanwhile: readsb's
// --net-ro-interval default (0.05 s, its "maximum delay between placing
// data in the output buffer and sending"). Every Broadcast client (SBS,
// Beast out) and every Push connection (Beast to an aggregator) waits it,
// so a lone message of an idle feed goes out at most this late, while a
// busy feed costs one wake-up and one write a client per interval instead
// of one per chunk: on the shared 2-core VM a goroutine's sleep and
// wake-up alone costs ~50 µs of CPU, more than a 48 KB write (issue 30;
// docs/READSB.md, "Writes").
const FlushInterval = 50 * time.Millisecond

// StreamBuffer is the bytes waiting for one stream connection, readsb's
// output buffer: Put appends a whole chunk (a copy) or, when the buffer
// would pass its bound, drops it (counted), so a slow or dead client
// loses its own data and slows nothing else; the writer takes everything
// waiting at once and gives the buffer back to be filled again, so that
// a steady stream allocates nothing.
type StreamBuffer struct {
	max     int
	ready   chan struct{} // a signal: the buffer went from empty to not
	dropped atomic.Uint64
	// budget, when not nil, lends what the buffer holds beyond reserve
	// bytes (Share).
	budget  *Budget
	reserve int

	mu         sync.Mutex
	buf, spare []byte // spare: the last buffer written, to fill next
	borrowed   int    // of len(buf), the bytes lent by budget
}

// ClientReserve is what a Broadcast client may hold without borrowing
// from the shared budget: a second of Beast out, or a fifth of one of
// per-message SBS, at the pipeline benchmark's 52,000 frames a second —
// several flush intervals, so a client that keeps up never borrows.
const ClientReserve = 1 << 20

// Budget is a number of bytes that stream buffers borrow from (Share):
// the bound on what a Broadcast's clients hold beyond their reserves.
type Budget struct {
	max  int64
	used atomic.Int64
}

// NewBudget returns a budget of max bytes.
func NewBudget(max int) *Budget { return &Budget{max: int64(max)} }

// borrow takes n bytes of the budget, or reports false when fewer are
// left.
func (b *Budget) borrow(n int) bool {
	if b.used.Add(int64(n)) > b.max {
		b.used.Add(-int64(n))
		return false
	}
	return true
}

// Used is the number of bytes borrowed now.
func (b *Budget) Used() int64 { return b.used.Load() }

// Share makes s borrow from budget what it holds beyond reserve bytes:
// beyond that, a chunk budget cannot lend is dropped, however far s is
// from its own bound. Call it before the first Put.
func (s *StreamBuffer) Share(budget *Budget, reserve int) { s.budget, s.reserve = budget, reserve }

// NewStreamBuffer returns a buffer holding at most maxBytes (and always
// one chunk).
func NewStreamBuffer(maxBytes int) *StreamBuffer {
	return &StreamBuffer{max: maxBytes, ready: make(chan struct{}, 1)}
}

// Put appends a copy of p, or drops it when the buffer would hold more
// than its bound (reporting false).
func (s *StreamBuffer) Put(p []byte) bool {
	s.mu.Lock()
	was, will := len(s.buf), len(s.buf)+len(p)
	lend := 0
	if s.budget != nil && will > s.reserve {
		lend = will - max(s.reserve, was)
	}
	if was > 0 && will > s.max {
		s.mu.Unlock()
		s.dropped.Add(1)
		return false
	}
	if lend > 0 && !s.budget.borrow(lend) {
		if was > 0 {
			s.mu.Unlock()
			s.dropped.Add(1)
			return false
		}
		lend = 0 // a lone chunk is always taken, as without a budget
	}
	s.borrowed += lend
	s.buf = append(s.buf, p...)
	s.mu.Unlock()
	if was == 0 {
		s.signal()
	}
	return true
}

// signal tells the writer something is waiting.
func (s *StreamBuffer) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Dropped is the number of chunks dropped so far.
func (s *StreamBuffer) Dropped() uint64 { return s.dropped.Load() }

// take returns everything waiting and empties the buffer, paying back
// what it borrowed.
func (s *StreamBuffer) take() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buf
	s.buf, s.spare = s.spare[:0], nil
	s.payBack()
	return b
}

// payBack returns what the buffer borrowed to its budget (s.mu held).
func (s *StreamBuffer) payBack() {
	if s.borrowed > 0 {
		s.budget.used.Add(-int64(s.borrowed))
		s.borrowed = 0
	}
}

// Close gives back what s borrowed and holds: its client has gone.
func (s *StreamBuffer) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf, s.spare = nil, nil
	s.payBack()
}

// giveBack returns a buffer take returned, written, for reuse; one that a
// burst made large is left to the collector.
func (s *StreamBuffer) giveBack(b []byte) {
	if cap(b) > maxKeptBuffer {
		return
	}
	s.mu.Lock()
	s.spare = b[:0]
	s.mu.Unlock()
}

// maxKeptBuffer is the largest buffer a StreamBuffer keeps for reuse: a
// second of per-message SBS at the pipeline benchmark's rate.
const maxKeptBuffer = 8 << 20

// WriteFrom writes what s receives to conn until ctx ends (nil) or a write
// fails (the error). When s has something waiting it waits FlushInterval,
// then writes everything waiting in one write.
func WriteFrom(ctx context.Context, conn net.Conn, s *StreamBuffer) error {
	t := time.NewTimer(FlushInterval)
	t.Stop()
	return writeFrom(ctx, conn, s, func(ctx context.Context) bool {
		t.Reset(FlushInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
			return true
		}
	})
}

// writeFrom is WriteFrom with the wait before each write made by hold,
// which returns false when ctx ended while it waited (a test's clock).
// While it holds, Put appends without waking the writer.
func writeFrom(ctx context.Context, conn net.Conn, s *StreamBuffer, hold func(context.Context) bool) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.ready:
			if !hold(ctx) {
				s.signal() // still waiting: for Push's next connection
				return nil
			}
			b := s.take()
			if len(b) == 0 {
				continue
			}
			_ = conn.SetWriteDeadline(time.Now().Add(writeTimeout))
			_, err := conn.Write(b)
			s.giveBack(b)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
	}
}

// Push writes what q receives to a TCP server at addr (an aggregator's
// Beast input, say), reconnecting with back-off until ctx ends. While it
// is disconnected q fills and drops, counted. It reports Up while
// connected and Retrying otherwise.
func Push(ctx context.Context, addr string, q *StreamBuffer, rep lifecycle.Reporter, log *slog.Logger) {
	b := lifecycle.Backoff{Max: 30 * time.Second}
	for ctx.Err() == nil {
		var d net.Dialer
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		conn, err := d.DialContext(dctx, "tcp", addr)
		cancel()
		if err == nil {
			rep.Up()
			b.Reset()
			log.Info("connected to stream server", "addr", addr)
			cctx, ccancel := context.WithCancel(ctx)
			context.AfterFunc(cctx, func() { conn.Close() })
			go watchClose(conn, ccancel)
			err = WriteFrom(cctx, conn, q)
			ccancel()
			if err == nil && ctx.Err() == nil {
				err = errors.New("connection closed")
			}
		}
		if ctx.Err() != nil {
			return
		}
		rep.Retrying(fmt.Errorf("%s: %w", addr, err))
		log.Warn("stream server unavailable; retrying", "addr", addr, "err", err, "dropped_chunks", q.Dropped())
		if !b.Sleep(ctx) {
			return
		}
	}
}

// Error is the error type of package output.
type Error struct {
	Op  string
	Err error
}

func (e *Error) Error() string { return "output: " + e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }
