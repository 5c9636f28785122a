package worker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/internal/ratelimit"
)

// Feed is the decoder stage of an instance that fuses: it reads every raw
// message of CUAS_RAW with an ordered consumer of its own (so each instance
// sees every frame, in stream order), decodes it in place and hands the
// observations to Apply — with no second durable hop. Decoding is
// deterministic, so every instance derives the same observations from the
// same raw frames; on start the Feed replays the last Replay of the stream,
// which rebuilds the tracks after a restart. Undecodable frames are
// published to CUAS_DEAD with an id derived from the raw message, so the
// copies from several instances, and from a replay, are stored once.
type Feed struct {
	js     RawReader
	decs   map[string]*msgDecoder
	apply  func([]decode.Observation)
	replay time.Duration
	log    *slog.Logger
	m      *Metrics
	fm     feedMetrics
	dead   chan bus.PubAckFuture
}

// RawReader is what the Feed needs of JetStream; *bus.JetStream
// implements it.
type RawReader interface {
	// ConsumeFrom calls fn for every message of stream on filter stored
	// since start, in order, until stop is called.
	ConsumeFrom(ctx context.Context, stream, filter string, start time.Time, fn func(bus.Msg)) (stop func(), closed <-chan struct{}, err error)
	// PublishAsync publishes (a dead letter) without waiting.
	PublishAsync(msg *nats.Msg) (bus.PubAckFuture, error)
}

type feedMetrics struct {
	applied    prometheus.Counter
	latency    prometheus.Histogram
	unknown    prometheus.Counter
	deadFailed prometheus.Counter
}

// FeedConfig configures a Feed.
type FeedConfig struct {
	// Decoders decode the protocols the feed reads; a raw message of any
	// other protocol is counted and skipped.
	Decoders []FrameDecoder
	// Apply receives the observations of one raw message, in order; the
	// slice is reused after Apply returns.
	Apply func([]decode.Observation)
	// Replay is how far back the feed starts reading (the track TTL plus a
	// margin).
	Replay time.Duration
	// Metrics are the decoder metrics shared with any Worker (nil: new,
	// unregistered).
	Metrics *Metrics
	Log     *slog.Logger
	// Timed, when set, is handed, once per message, the Mode S frames
	// (7 or 14 bytes, exact duplicates left out) that carry their sensor's
	// Beast timestamp, as received, or a GPS-disciplined Cuas-Sensor-Ns as
	// the Beast GPS timestamp it equals; meta says the sensor, its clock
	// and any position it stated. What multilateration groups (issue 31).
	// Once per message, not per frame: a sensor multilateration cannot
	// place is refused with one look-up for all its frames. meta and
	// frames are only valid during the call; Timed must not block.
	Timed func(meta *Meta, frames []TimedFrame)
	// ModeS, when not nil, is handed the Mode S messages of every raw
	// message of ADS-B, decoded (ModeSTap): what per-message SBS writes
	// its lines from inside cuasd serve (issue 30).
	ModeS *ModeSTap
	// Limits are the per-sensor rate and byte limits, spent at each
	// message's storage time as a Worker spends them (Worker.WithLimits),
	// so the feed and CUAS_OBS refuse the same frames; zero: none.
	Limits ratelimit.Limits
}

// NewFeed returns a feed; its own metrics (observations applied, frame to
// track latency) are registered on reg when it is not nil.
func NewFeed(js RawReader, cfg FeedConfig, reg prometheus.Registerer) *Feed {
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics(nil)
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	f := &Feed{js: js, decs: map[string]*msgDecoder{}, apply: cfg.Apply, replay: cfg.Replay, log: cfg.Log, m: cfg.Metrics,
		dead: make(chan bus.PubAckFuture, 4096)}
	for _, d := range cfg.Decoders {
		md := &msgDecoder{dec: d, timed: cfg.Timed}
		if dm, ok := d.(decodedModeS); ok && cfg.ModeS != nil {
			md.modeS, md.decodedS = cfg.ModeS, dm
		}
		if !cfg.Limits.Unlimited() {
			md.limits = ratelimit.NewSet(cfg.Limits)
		}
		f.decs[string(d.Protocol())] = md
		cfg.Metrics.declare(string(d.Protocol()), d)
	}
	f.fm = newFeedMetrics()
	if reg != nil {
		reg.MustRegister(f.fm.applied, f.fm.latency, f.fm.unknown, f.fm.deadFailed)
	}
	return f
}

func newFeedMetrics() feedMetrics {
	return feedMetrics{
		applied: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cuasd_observations_applied_total",
			Help: "Observations applied to the track store.",
		}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "cuasd_frame_to_track_seconds",
			Help:    "Time from a frame's acceptance by an adapter to its observation updating a track.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}),
		unknown: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cuasd_raw_messages_unknown_protocol_total",
			Help: "Raw messages on a subject whose protocol no decoder of this instance handles.",
		}),
		deadFailed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cuasd_dead_letters_failed_total",
			Help: "Dead letters that could not be stored in CUAS_DEAD (the raw frame stays in CUAS_RAW).",
		}),
	}
}

// Run consumes until ctx ends, or returns an error when the consumption
// ended by itself.
func (f *Feed) Run(ctx context.Context) error {
	start := time.Now()
	dctx, done := context.WithCancel(context.Background())
	defer done()
	go f.settleDead(dctx)
	startNs := start.UnixNano()
	stop, closed, err := f.js.ConsumeFrom(ctx, bus.StreamRaw, bus.RawPrefix+".>", start.Add(-f.replay), func(m bus.Msg) { f.handle(m, startNs) })
	if err != nil {
		return err
	}
	defer stop()
	select {
	case <-ctx.Done():
		return nil
	case <-closed:
		// The consumption ended by itself: its supervisor starts the feed
		// again from the track TTL back, so no live track is lost.
		return errFeedEnded
	}
}

var errFeedEnded = errors.New("fusion feed: the raw stream's consumption ended")

// handle decodes one raw message and applies its observations. Frames
// received before the feed started (the replay) do not count towards the
// frame-to-track latency.
func (f *Feed) handle(m bus.Msg, startNs int64) {
	d := f.decs[protocolOf(m.Subject())]
	if d == nil {
		f.fm.unknown.Inc()
		return
	}
	md, ok := m.Meta()
	meta := metaOf(m, md, ok)
	d.seq = 0
	if ok {
		d.seq = md.Sequence
	}
	d.decodeMessage(m.Header().Get(bus.HeaderFraming), m.Data(), meta, f.m)
	if len(d.obs) > 0 {
		f.apply(d.obs)
		f.fm.applied.Add(float64(len(d.obs)))
		if meta.IngestUnixNano >= startNs {
			f.fm.latency.Observe(float64(time.Now().UnixNano()-meta.IngestUnixNano) / 1e9)
		}
	}
	if len(d.dead) > 0 && ok {
		f.publishDead(string(d.dec.Protocol()), md.Sequence, meta, d.dead)
	}
}

// publishDead publishes dead letters without waiting for their
// acknowledgement (settleDead checks them): a flood of garbage must not
// stall the decoding of good frames.
func (f *Feed) publishDead(protocol string, seq uint64, meta Meta, dead []deadLetter) {
	for _, d := range dead {
		fut, err := f.js.PublishAsync(deadMsg(protocol, seq, meta, d))
		if err != nil {
			f.fm.deadFailed.Inc()
			continue
		}
		select {
		case f.dead <- fut:
		default:
			// Too many unsettled: stop watching this one; JetStream still
			// stores it if it can.
		}
	}
}

// settleDead counts the dead letters JetStream did not store.
// It ends when done ends.
func (f *Feed) settleDead(done context.Context) {
	for {
		select {
		case fut := <-f.dead:
			_, err := fut.Wait(done)
			switch {
			case err == nil, duplicateInProcess(err):
				// Stored, or another instance is storing the same dead letter.
			case done.Err() != nil:
				return
			default:
				f.fm.deadFailed.Inc()
				f.log.Warn("dead letter not stored", "subject", fut.Subject(), "err", err)
			}
		case <-done.Done():
			return
		}
	}
}

// duplicateInProcess reports JetStream's answer to a message whose
// de-duplication id another publisher is storing at that moment (on a
// clustered stream): not a failure, the message is being stored once.
func duplicateInProcess(err error) bool {
	return bus.ErrorCode(err) == 10158
}

// protocolOf is the protocol token of a raw subject
// (cuas.raw.{protocol}.{sensor}).
func protocolOf(subject string) string {
	p, _, _ := bus.SplitSubject(bus.RawPrefix, subject)
	return p
}
