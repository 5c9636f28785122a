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
// has its own bounded Queue: a slow client loses chunks (counted), never
// slows the sender or the other clients. Chunks must hold whole records,
// since a client may lose any of them.
type Broadcast struct {
	ln       net.Listener
	queueLen int
	log      *slog.Logger

	mu      sync.Mutex
	clients map[*Queue[[]byte]]struct{}
	dropped atomic.Uint64 // by clients that have gone
	active  atomic.Int32  // connections being served
}

// ListenBroadcast binds addr now (so an address in use is a start-up
// error); each client may fall queueLen chunks behind.
func ListenBroadcast(addr string, queueLen int, log *slog.Logger) (*Broadcast, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &Broadcast{ln: ln, queueLen: queueLen, log: log, clients: map[*Queue[[]byte]]struct{}{}}, nil
}

// Addr is the bound address.
func (b *Broadcast) Addr() net.Addr { return b.ln.Addr() }

// Send queues p for every client. p is shared, not copied: the caller must
// not change it afterwards.
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
	q := NewQueue[[]byte](b.queueLen)
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

// WriteFrom writes the chunks of q to conn until ctx ends (nil) or a write
// fails (the error). The chunks waiting when it writes go out together,
// up to maxWriteChunks in one writev on a TCP connection: a write a chunk
// was a system call per raw message at per-message SBS's rate (issue 30's
// profile: 6 % of the pipeline benchmark's process).
func WriteFrom(ctx context.Context, conn net.Conn, q *Queue[[]byte]) error {
	var held [maxWriteChunks][]byte
	for {
		select {
		case <-ctx.Done():
			return nil
		case p := <-q.C():
			bufs := append(net.Buffers(held[:0]), p)
			bufs = takeWaiting(bufs, q)
			_ = conn.SetWriteDeadline(time.Now().Add(writeTimeout))
			_, err := bufs.WriteTo(conn)
			clear(held[:]) // the chunks are the queue's callers' to let go
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
	}
}

// maxWriteChunks bounds the chunks WriteFrom writes at once.
const maxWriteChunks = 64

// takeWaiting appends to bufs the chunks waiting in q, up to
// maxWriteChunks in all, without waiting for more.
func takeWaiting(bufs net.Buffers, q *Queue[[]byte]) net.Buffers {
	for len(bufs) < maxWriteChunks {
		select {
		case p := <-q.C():
			bufs = append(bufs, p)
		default:
			return bufs
		}
	}
	return bufs
}

// Push writes the chunks of q to a TCP server at addr (an aggregator's
// Beast input, say), reconnecting with back-off until ctx ends. While it
// is disconnected q fills and drops, counted. It reports Up while
// connected and Retrying otherwise.
func Push(ctx context.Context, addr string, q *Queue[[]byte], rep lifecycle.Reporter, log *slog.Logger) {
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
