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
	v1           atomic.Bool // the current connection sends TAK Protocol version 1
	mu           sync.Mutex
	lastErr      string
	lastErrAt    time.Time

	// picture is the newest event of every uid, sent to a stream when it
	// (re)connects.
	picture picture

	// Scratch state of the two subscription goroutines (one each; the
	// gate's goroutine in place of the track subscription's when fed in
	// process).
	trackEv  events.TrackEvent
	trackBuf []byte
	zoneEv   events.ZoneEvent
	zoneBuf  []byte
	// lastSent is when each track's last update was queued: the in-process
	// feed also hands over fast tracks' positions between two events
	// (for the history), which TAK clients need no more than once a second.
	lastSent map[string]time.Time
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
	unTrack, err := s.subscribeTracks(ev)
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

// subscribeTracks hears the track events typed from the gate when the
// sink runs inside cuasd serve (output.TrackFeed), else from cuas.track.>
// on NATS. Decoding each event's JSON again cost a sink ~40 µs of its
// ~50 µs an event (BENCHMARKS.md, TAK).
func (s *Sink) subscribeTracks(ev output.Events) (stop func(), err error) {
	if f, ok := ev.(output.TrackFeed); ok {
		s.lastSent = map[string]time.Time{}
		return f.FeedTracks(s.onFedTrack)
	}
	return ev.Subscribe(bus.TrackPrefix+".>", s.onTrack)
}

// onTrack encodes a track event from NATS.
func (s *Sink) onTrack(m *nats.Msg) { s.onTrackData(m.Data) }

func (s *Sink) onTrackData(data []byte) {
	ev := &s.trackEv
	*ev = events.TrackEvent{}
	if json.Unmarshal(data, ev) != nil || ev.V != events.Version {
		return // not an event this build reads; the schema tests guard the producer
	}
	s.onTrackEvent(ev)
}

// onFedTrack encodes a track event of the gate's feed, at most one update
// a second per track (the gate announces no more often; the extra ones
// carry fast tracks' positions to the history). It runs on the gate's
// goroutine: encoding and queueing never block.
func (s *Sink) onFedTrack(_ string, ev *events.TrackEvent) {
	id := ev.Track.TrackID
	if ev.Type == events.TypeTrackLost {
		delete(s.lastSent, id)
	} else if last, ok := s.lastSent[id]; ok && ev.Time.Sub(last) < minTrackInterval {
		return
	} else {
		s.lastSent[id] = ev.Time
	}
	s.onTrackEvent(ev)
}

// minTrackInterval is the shortest time between two updates of a track
// from the in-process feed (the gate's own minimum is 1 s; its sweeps are
// every 500 ms, so a little less than a second lets every regular event
// through).
const minTrackInterval = 900 * time.Millisecond

// onTrackEvent encodes a track event (and its operator point) into the
// queue.
func (s *Sink) onTrackEvent(ev *events.TrackEvent) {
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
		Sent: s.sent.Load(), Dropped: s.q.Dropped(), Failed: s.failed.Load(), Queued: s.q.Len(), Format: formatName(s.v1.Load())}
	s.mu.Lock()
	if s.lastErr != "" {
		at := s.lastErrAt
		st.LastError, st.LastErrorAt = s.lastErr, &at
	}
	s.mu.Unlock()
	return []output.SinkStatus{st}
}
