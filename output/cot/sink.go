package cot

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/lifecycle"
	"github.com/cuasd/cuasd/output"
)

// Defaults of a sink.
const (
	// DefaultQueue is the number of events a sink holds while its socket
	// is slow or down: a few seconds of a busy picture.
	DefaultQueue = 4096
	// MaxDatagram is the largest UDP payload sent: below the 1500-byte
	// Ethernet MTU with IPv6 and tunnel headers to spare, so a datagram is
	// never fragmented (a lost fragment loses the whole event, and
	// multicast over Wi-Fi loses many).
	MaxDatagram = 1400
	// writeTimeout bounds one write to a stream: a TAK Server that stops
	// reading is disconnected and dialled again rather than waited for.
	writeTimeout = 10 * time.Second
)

// Options are what every sink shares.
type Options struct {
	// Queue is the queue length (DefaultQueue when 0).
	Queue   int
	Metrics *Metrics
	Log     *slog.Logger
	// RotaryByReference (RotaryAirframes of the drone database) gives a
	// drone whose broadcast does not state its airframe the one of the
	// record its product claim matched; nil: not used.
	RotaryByReference map[string]bool
}

// transport is how a sink reaches its peer.
type transport interface {
	// dial opens the connection (a UDP socket, a TCP or TLS stream).
	dial(ctx context.Context) (conn, error)
	// datagram: one event per packet, at most MaxDatagram bytes.
	datagram() bool
}

// conn is an open connection.
type conn interface {
	// write sends one event.
	write(b []byte) error
	// done is closed when the peer closed the connection (nil: never).
	done() <-chan struct{}
	close() error
}

// Sink is one CoT destination, an output.Output: it subscribes to the
// track and zone events, encodes them and sends them through its own
// bounded queue.
type Sink struct {
	name, kind, target string
	tr                 transport
	q                  *output.Queue[[]byte]
	m                  sinkMetrics
	log                *slog.Logger
	enc                Encoder
	proto              int // ProtocolXML or ProtocolV1

	sent, failed atomic.Uint64
	connected    atomic.Bool
	mu           sync.Mutex
	lastErr      string
	lastErrAt    time.Time

	// picture is the newest event of every uid, sent to a stream when it
	// (re)connects.
	picture picture

	// Scratch state of the two subscription goroutines (one each).
	trackEv  events.TrackEvent
	trackBuf []byte
	zoneEv   events.ZoneEvent
	zoneBuf  []byte
}

func newSink(kind, target string, tr transport, o Options) *Sink {
	name := kind + " " + target
	if o.Log == nil {
		o.Log = slog.Default()
	}
	n := o.Queue
	if n <= 0 {
		n = DefaultQueue
	}
	return &Sink{name: name, kind: kind, target: target, tr: tr, q: output.NewQueue[[]byte](n),
		m: o.Metrics.sink(name), log: o.Log.With("output", name), enc: Encoder{RotaryByReference: o.RotaryByReference}}
}

// Name is "cot-udp HOST:PORT" or "tak-server URL".
func (s *Sink) Name() string { return s.name }

// Run subscribes to the track and zone events and sends them until ctx
// ends, reconnecting a stream with back-off and jitter.
func (s *Sink) Run(ctx context.Context, ev output.Events, rep lifecycle.Reporter) error {
	unTrack, err := ev.Subscribe(bus.TrackPrefix+".>", s.onTrack)
	if err != nil {
		return &Error{Flag: s.name, Err: err}
	}
	defer unTrack()
	unZone, err := ev.Subscribe(bus.ZonePrefix+".>", s.onZone)
	if err != nil {
		return &Error{Flag: s.name, Err: err}
	}
	defer unZone()
	s.deliver(ctx, rep)
	return nil
}

// onTrack encodes a track event (and its operator point) into the queue.
func (s *Sink) onTrack(m *nats.Msg) { s.onTrackData(m.Data) }

func (s *Sink) onTrackData(data []byte) {
	ev := &s.trackEv
	*ev = events.TrackEvent{}
	if json.Unmarshal(data, ev) != nil || ev.V != events.Version {
		return // not an event this build reads; the schema tests guard the producer
	}
	stale := ev.Time.Add(TrackStale)
	if ev.Type == events.TypeTrackLost {
		stale = ev.Time
	}
	s.trackBuf = s.put(s.trackBuf, stale, func(dst []byte, e *Encoder) ([]byte, bool) { return e.AppendTrack(dst, ev) })
	s.trackBuf = s.put(s.trackBuf, stale, func(dst []byte, e *Encoder) ([]byte, bool) { return e.AppendOperator(dst, ev) })
}

// onZone encodes a zone event into the queue.
func (s *Sink) onZone(m *nats.Msg) {
	ev := &s.zoneEv
	*ev = events.ZoneEvent{}
	if json.Unmarshal(m.Data, ev) != nil || ev.V != events.Version {
		return
	}
	stale := ev.Time.Add(ZoneStale)
	if ev.Type == events.TypeZoneDeleted {
		stale = ev.Time
	}
	s.zoneBuf = s.put(s.zoneBuf, stale, func(dst []byte, e *Encoder) ([]byte, bool) { return e.AppendZone(dst, ev) })
}

// put encodes one event into buf and queues a copy of what goes on the
// wire. A datagram too large is encoded again with short remarks, and
// dropped (counted) if it still does not fit.
func (s *Sink) put(buf []byte, stale time.Time, enc func([]byte, *Encoder) ([]byte, bool)) []byte {
	e := s.enc
	b, ok := enc(buf[:0], &e)
	if !ok {
		return b
	}
	out, fits := s.wire(b)
	if !fits {
		e.Compact = true
		b, _ = enc(b[:0], &e)
		if out, fits = s.wire(b); !fits {
			s.m.oversize.Inc()
			return b
		}
	}
	doc := append([]byte(nil), out...)
	if !s.tr.datagram() {
		s.picture.remember(doc, stale)
	}
	if !s.q.Put(doc) {
		s.m.dropped.Inc()
	}
	return b
}

// wire is what is sent for an XML event (the XML itself, or its TAK
// Protocol version 1 mesh datagram) and whether it fits the transport.
func (s *Sink) wire(doc []byte) ([]byte, bool) {
	if s.proto == ProtocolV1 {
		m, err := AppendMesh(nil, doc, "cuasd")
		if err != nil {
			return nil, false // cannot happen for the encoder's own XML (FuzzMesh)
		}
		doc = m
	}
	return doc, !s.tr.datagram() || len(doc) <= MaxDatagram
}

// Sinks reports the sink's state (output.Describer).
func (s *Sink) Sinks() []output.SinkStatus {
	st := output.SinkStatus{Name: s.name, Kind: s.kind, Target: s.target, Connected: s.connected.Load(),
		Sent: s.sent.Load(), Dropped: s.q.Dropped(), Failed: s.failed.Load(), Queued: s.q.Len()}
	s.mu.Lock()
	if s.lastErr != "" {
		at := s.lastErrAt
		st.LastError, st.LastErrorAt = s.lastErr, &at
	}
	s.mu.Unlock()
	return []output.SinkStatus{st}
}
