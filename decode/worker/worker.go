package worker

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/internal/ratelimit"
)

// Meta is what the receiver said about a frame.
type Meta struct {
	Sensor       string
	RecvUnixNano int64
	// IngestUnixNano is when cuasd accepted the frame.
	IngestUnixNano int64
	// Carrier is the Cuas-Carrier header (Remote ID wrapping), if any.
	Carrier string
	// Signal is the Cuas-Signal header (0: none).
	Signal float64
	// ProductType is the Cuas-Product-Type header (issue 25; 0: none).
	ProductType uint16
	// Simulated is the Cuas-Simulated header: a simulator made the frame.
	Simulated bool
	// StoredUnixNano is when JetStream stored the raw message (0:
	// unknown): the server's clock, against which a receiver's stated
	// receive time is bounded.
	StoredUnixNano int64
	// Clock is the Cuas-Clock header: what the message's sensor
	// timestamps are (issue 30); ClockErr is set when the header is not
	// one cuasd knows.
	Clock    sensorclock.Kind
	ClockErr bool
	// SensorNs is the Cuas-Sensor-Ns header (0: none): the sensor's own
	// time of the message's frames; SensorTimeErr is set when a header
	// given is not a positive whole number (the message is then a dead
	// letter, not decoded with its arrival time as if none were given).
	SensorNs      int64
	SensorTimeErr bool
	// Position is the Cuas-Sensor-Position header, the receiver's own
	// statement of its antenna's position (issue 31), when HasPosition;
	// PositionErr says why a header that was present is refused (the
	// message is then a dead letter, never decoded with a guess).
	Position    bus.SensorPosition
	HasPosition bool
	PositionErr string
}

// FrameDecoder turns one raw frame into zero or more observations,
// appended to out. An error means the frame is undecodable: it becomes a
// dead letter whose reason is Reason(err).
type FrameDecoder interface {
	Protocol() decode.Protocol
	Decode(frame []byte, meta Meta, out []decode.Observation) ([]decode.Observation, error)
}

// Reasoner is implemented by errors that carry a short, bounded reason
// label for metrics ("crc", "length", "checksum"...).
type Reasoner interface{ Reason() string }

// ReasonLister is implemented by decoders that name, before any frame,
// every reason their errors carry, so that cuasd_frames_rejected_total has
// each (protocol, reason) series at 0 from the start.
type ReasonLister interface{ Reasons() []string }

// workerReasons are the reasons the worker itself gives: an unframeable
// message, a line that is not hex, Reason's default, and a refused
// Cuas-Sensor-Position (issue 31).
var workerReasons = []string{"framing", "not_hex", "invalid", "sensor_position", "sensor_time"}

// Reason returns the metrics label of a decode error.
func Reason(err error) string {
	var r Reasoner
	if errors.As(err, &r) {
		return r.Reason()
	}
	return "invalid"
}

// Metrics are the decoder workers' Prometheus metrics, shared by the
// workers of all protocols.
type Metrics struct {
	decoded   *prometheus.CounterVec
	rejected  *prometheus.CounterVec
	obs       *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	lastFrame *prometheus.GaugeVec
	pending   *prometheus.GaugeVec
	ackPend   *prometheus.GaugeVec
	// duplicates counts exact duplicates (same sensor, same timestamp,
	// same bytes) dropped (issue 30); clockResets the sensor clocks found
	// reset or jumping.
	duplicates  *prometheus.CounterVec
	clockResets *prometheus.CounterVec
	// clockInvalid counts timestamps that cannot be the clock the input
	// names (a GPS time that is no time of day: ?clock=gps on a 12 MHz
	// receiver), timed by their arrival instead.
	clockInvalid *prometheus.CounterVec
	// rateLimited counts the frames over their sensor's limits (issue 32).
	rateLimited *prometheus.CounterVec
	// resent counts frames dropped as re-sent by their sensor (the clock
	// model's resend rule), resentLive those of them found afterwards to
	// be a restarted receiver's live frames.
	resent, resentLive *prometheus.CounterVec
}

// NewMetrics registers the metrics on reg (nil: unregistered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		decoded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_frames_decoded_total", Help: "Raw frames decoded, by protocol.",
		}, []string{"protocol"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_frames_rejected_total", Help: "Raw frames that could not be decoded (sent to CUAS_DEAD), by protocol and reason.",
		}, []string{"protocol", "reason"}),
		obs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_observations_published_total", Help: "Observations published to CUAS_OBS, by protocol.",
		}, []string{"protocol"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cuasd_decode_duration_seconds",
			Help:    "Time to decode one raw message (one frame or a batch), by protocol.",
			Buckets: []float64{1e-6, 5e-6, 2.5e-5, 1e-4, 5e-4, .0025, .01, .05},
		}, []string{"protocol"}),
		lastFrame: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "cuasd_last_frame_timestamp_seconds", Help: "Receive time of the newest frame decoded, by protocol.",
		}, []string{"protocol"}),
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "cuasd_consumer_pending_messages", Help: "Messages waiting for a decoder consumer, by protocol.",
		}, []string{"protocol"}),
		ackPend: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "cuasd_consumer_ack_pending_messages", Help: "Messages delivered to decoder workers and not yet acknowledged, by protocol.",
		}, []string{"protocol"}),
		duplicates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_frames_duplicate_total", Help: "Frames dropped as exact duplicates (same sensor, same sensor timestamp, same bytes), by protocol.",
		}, []string{"protocol"}),
		clockResets: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_sensor_clock_resets_total", Help: "Sensor clocks found reset or jumping (a receiver restart), re-anchored to the arrival time, by protocol.",
		}, []string{"protocol"}),
		clockInvalid: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_sensor_clock_invalid_total", Help: "Frames whose sensor timestamp cannot be the clock their input names (a Beast GPS timestamp that is no time of day, as a 12 MHz receiver given ?clock=gps sends), timed by their arrival instead, by protocol.",
		}, []string{"protocol"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_frames_rate_limited_total", Help: "Raw frames not decoded because their sensor sent more than its frame or byte rate (--raw-sensor-rate, --raw-sensor-bytes, in the storage time), by protocol.",
		}, []string{"protocol"}),
		resent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_frames_resent_total", Help: "Frames dropped as re-sent (stamped back inside the time their sensor's clock already covered, their timestamps advancing far faster than their arrivals: a reconnecting feeder re-sending more than the duplicate check remembers), by protocol.",
		}, []string{"protocol"}),
		resentLive: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_frames_resent_live_total", Help: "Of the frames dropped as re-sent, those found afterwards to be a restarted receiver's live frames (its clock advancing in step with the arrivals; at most 0.5 s of frames per restart), by protocol.",
		}, []string{"protocol"}),
	}
	if reg != nil {
		reg.MustRegister(m.decoded, m.rejected, m.obs, m.duration, m.lastFrame, m.pending, m.ackPend, m.duplicates, m.clockResets, m.clockInvalid, m.rateLimited, m.resent, m.resentLive)
	}
	return m
}

// Worker is the decoder worker of one protocol.
type Worker struct {
	js    Durable
	dec   *msgDecoder
	log   *slog.Logger
	m     *Metrics
	batch int
	proto string
}

// Durable is what a Worker needs of JetStream; *bus.JetStream implements
// it.
type Durable interface {
	// EnsureConsumer creates (or updates) the shared durable consumer.
	EnsureConsumer(ctx context.Context, stream string, cfg bus.ConsumerConfig) (*bus.Consumer, error)
	// PublishAsync publishes without waiting; the future says whether the
	// message was stored.
	PublishAsync(msg *nats.Msg) (bus.PubAckFuture, error)
}

// NewWorker returns a worker for dec's protocol.
func NewWorker(js Durable, dec FrameDecoder, m *Metrics, log *slog.Logger) *Worker {
	if m == nil {
		m = NewMetrics(nil)
	}
	w := &Worker{js: js, dec: &msgDecoder{dec: dec}, log: log, m: m, batch: 256, proto: string(dec.Protocol())}
	m.declare(w.proto, dec)
	return w
}

// WithLimits makes the worker decode at most l of each sensor's frames a
// second, in the stream's storage time (issue 32); the others are counted
// in cuasd_frames_rate_limited_total. It returns w.
func (w *Worker) WithLimits(l ratelimit.Limits) *Worker {
	if !l.Unlimited() {
		w.dec.limits = ratelimit.NewSet(l)
	}
	return w
}

// declare creates the counters of protocol at 0, so that increase()-based
// alerts see the first frame and the first reject.
func (m *Metrics) declare(protocol string, dec FrameDecoder) {
	m.decoded.WithLabelValues(protocol)
	m.obs.WithLabelValues(protocol)
	m.duplicates.WithLabelValues(protocol)
	m.clockResets.WithLabelValues(protocol)
	m.clockInvalid.WithLabelValues(protocol)
	m.rateLimited.WithLabelValues(protocol)
	m.resent.WithLabelValues(protocol)
	m.resentLive.WithLabelValues(protocol)
	reasons := workerReasons
	if rl, ok := dec.(ReasonLister); ok {
		reasons = append(reasons[:len(reasons):len(reasons)], rl.Reasons()...)
	}
	for _, r := range reasons {
		m.rejected.WithLabelValues(protocol, r)
	}
}

// ConsumerName is the durable consumer shared by every instance.
func ConsumerName(protocol string) string { return "cuas-decode-" + protocol }

// ConsumerConfig is the durable consumer of a protocol's decoder
// workers on bus.StreamRaw; cuasd recreates it from this when it goes
// missing.
func ConsumerConfig(protocol string) bus.ConsumerConfig {
	return bus.ConsumerConfig{
		Durable:       ConsumerName(protocol),
		Description:   "cuasd decoder workers for " + protocol + " (shared by every instance)",
		FilterSubject: bus.RawPrefix + "." + protocol + ".>",
		AckWait:       30 * time.Second,
		MaxAckPending: 20000,
	}
}

// Run consumes until ctx ends.
func (w *Worker) Run(ctx context.Context) error {
	cons, err := w.js.EnsureConsumer(ctx, bus.StreamRaw, ConsumerConfig(w.proto))
	if err != nil {
		return err
	}
	go w.watchConsumer(ctx, cons)
	// One batch is settled while the next is decoded: a bounded hand-off
	// of depth 2 keeps at most three batches in flight.
	settleQ := make(chan []pending, 2)
	settled := make(chan struct{})
	go func() {
		defer close(settled)
		// Settling outlives a shutdown request (bounded): outputs already
		// published should be acknowledged, not nak'ed into a redelivery.
		sctx := context.WithoutCancel(ctx)
		for work := range settleQ {
			c, cancel := context.WithTimeout(sctx, 10*time.Second)
			w.settle(c, work)
			cancel()
		}
	}()
	defer func() {
		close(settleQ)
		<-settled
	}()
	idle := false
	for ctx.Err() == nil {
		// Under load, take whatever is waiting (up to a batch) without
		// waiting for the batch to fill: a full-batch fetch would hold the
		// first frames back until the batch filled or the wait expired.
		// When nothing was waiting, block for the next message.
		var msgs []bus.Msg
		var end, err error
		if idle {
			msgs, end, err = cons.Fetch(1, 500*time.Millisecond)
		} else {
			msgs, end, err = cons.Fetch(w.batch, 0)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			w.log.Warn("decoder fetch", "protocol", w.proto, "err", err)
			time.Sleep(250 * time.Millisecond)
			continue
		}
		if end != nil && ctx.Err() == nil {
			w.log.Debug("decoder fetch ended", "protocol", w.proto, "err", end)
		}
		idle = len(msgs) == 0
		if len(msgs) > 0 {
			settleQ <- w.process(ctx, msgs)
		}
	}
	return nil
}

// A fetched batch is decoded and its observations and dead letters are
// published (process); then their acknowledgements are awaited and the raw
// messages acknowledged (settle). A raw message whose outputs were not all
// stored is nak'ed, to be redelivered; the outputs carry de-duplication ids
// derived from the raw message's stream sequence, so a redelivery adds
// nothing twice.

// pending is a raw message whose outputs are published and not yet all
// acknowledged.
type pending struct {
	msg     bus.Msg
	futures []bus.PubAckFuture
	failed  bool
}

// settle waits for the outputs of a processed batch and acknowledges (or
// nak's) its raw messages. It runs beside the next fetch and decode, so
// that the wait for JetStream's acknowledgements does not stall decoding.
func (w *Worker) settle(ctx context.Context, work []pending) {
	for i := range work {
		p := &work[i]
		for _, f := range p.futures {
			_, err := f.Wait(ctx)
			switch {
			case err == nil, duplicateInProcess(err):
				// Stored, or another instance is storing the same output.
			case err == ctx.Err():
				p.failed = true
			default:
				p.failed = true
				w.log.Warn("publish observation", "protocol", w.proto, "err", err)
			}
		}
		if p.failed {
			_ = p.msg.NakWithDelay(time.Second)
			continue
		}
		_ = p.msg.Ack()
	}
}

// process decodes a batch and publishes its outputs; the returned work is
// settled by settle.
func (w *Worker) process(ctx context.Context, msgs []bus.Msg) []pending {
	work := make([]pending, len(msgs))
	for i, m := range msgs {
		work[i].msg = m
		// The metadata (stream sequence, timestamp) is parsed from the
		// reply subject once per message.
		md, ok := m.Meta()
		meta := metaOf(m, md, ok)
		seq := md.Sequence // 0 without metadata
		w.dec.decodeMessage(m.Header().Get(bus.HeaderFraming), m.Data(), meta, w.m)
		work[i].futures, work[i].failed = w.publishObservations(seq, work[i].futures)
		if !work[i].failed {
			work[i].futures, work[i].failed = w.publishDead(seq, meta, work[i].futures)
		}
	}
	return work
}

// publishObservations publishes the decoded observations of raw message
// seq: one message per track-key partition, holding that partition's
// observations in order, de-duplicated by the raw sequence. A partition
// whose observations outgrow bus.MaxBatchBytes (NATS's message limit) is
// published in several messages, the later ones with ids "…-g.k".
func (w *Worker) publishObservations(seq uint64, futures []bus.PubAckFuture) ([]bus.PubAckFuture, bool) {
	obs := w.dec.obs
	var parts [bus.ObsPartitions][]byte
	var counts, chunks [bus.ObsPartitions]int
	flush := func(g int) bool {
		id := "o" + strconv.FormatUint(seq, 10) + "-" + strconv.Itoa(g)
		if chunks[g] > 0 {
			id += "." + strconv.Itoa(chunks[g])
		}
		msg := &nats.Msg{Subject: bus.ObsSubject(w.proto, g), Data: parts[g], Header: nats.Header{}}
		msg.Header.Set(bus.HeaderMsgID, id)
		fut, err := w.js.PublishAsync(msg)
		if err != nil {
			return false
		}
		futures = append(futures, fut)
		w.m.obs.WithLabelValues(w.proto).Add(float64(counts[g]))
		parts[g], counts[g] = nil, 0
		chunks[g]++
		return true
	}
	for j := range obs {
		p := bus.ObsPartition(obs[j].Key)
		parts[p] = obs[j].AppendBatch(parts[p])
		counts[p]++
		if len(parts[p]) >= bus.MaxBatchBytes && !flush(p) {
			return futures, true
		}
	}
	for g := range parts {
		if len(parts[g]) > 0 && !flush(g) {
			return futures, true
		}
	}
	return futures, false
}

// publishDead publishes the dead letters of raw message seq.
func (w *Worker) publishDead(seq uint64, meta Meta, futures []bus.PubAckFuture) ([]bus.PubAckFuture, bool) {
	for _, d := range w.dec.dead {
		fut, err := w.js.PublishAsync(deadMsg(w.proto, seq, meta, d))
		if err != nil {
			return futures, true
		}
		futures = append(futures, fut)
	}
	return futures, false
}

// metaOf reads the receiver's headers; a missing receive or ingest time
// falls back to JetStream's storage time from md (unknown without ok).
func metaOf(m bus.Msg, md bus.MsgMeta, ok bool) Meta {
	h := m.Header()
	meta := Meta{Sensor: h.Get(bus.HeaderSensor), Carrier: h.Get(bus.HeaderCarrier), Simulated: h.Get(bus.HeaderSimulated) == "1"}
	meta.RecvUnixNano, _ = strconv.ParseInt(h.Get(bus.HeaderRecvTime), 10, 64)
	meta.IngestUnixNano, _ = strconv.ParseInt(h.Get(bus.HeaderIngestTime), 10, 64)
	if s := h.Get(bus.HeaderSignal); s != "" {
		if v, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
			meta.Signal = v
		}
	}
	if v, err := strconv.ParseUint(h.Get(bus.HeaderProductType), 10, 8); err == nil {
		meta.ProductType = uint16(v) // issue 25; a malformed header is no claim
	}
	if c := h.Get(bus.HeaderClock); c != "" {
		k, err := sensorclock.ParseKind(c)
		meta.Clock, meta.ClockErr = k, err != nil
	}
	if v := h.Get(bus.HeaderSensorTime); v != "" {
		ns, err := strconv.ParseInt(v, 10, 64)
		meta.SensorNs, meta.SensorTimeErr = max(ns, 0), err != nil || ns <= 0
	}
	if p, ok, err := bus.StatedPosition(h.Values(bus.HeaderSensorPosition)); err != nil {
		meta.PositionErr = err.Error() // a dead letter, never decoded with a guess
	} else {
		meta.Position, meta.HasPosition = p, ok
	}
	if meta.Sensor == "" {
		// The last subject token is the sensor.
		s := m.Subject()
		if i := strings.LastIndexByte(s, '.'); i >= 0 {
			meta.Sensor = s[i+1:]
		}
	}
	if ok {
		meta.StoredUnixNano = md.Timestamp.UnixNano()
		if meta.RecvUnixNano == 0 {
			meta.RecvUnixNano = md.Timestamp.UnixNano()
		}
		if meta.IngestUnixNano == 0 {
			meta.IngestUnixNano = md.Timestamp.UnixNano()
		}
	}
	return meta
}

func (w *Worker) watchConsumer(ctx context.Context, cons *bus.Consumer) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			pending, ackPending, err := cons.Pending(ctx)
			if err != nil {
				continue
			}
			w.m.pending.WithLabelValues(w.proto).Set(float64(pending))
			w.m.ackPend.WithLabelValues(w.proto).Set(float64(ackPending))
		}
	}
}
