package ingest

import (
	"context"
	"hash/maphash"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/lifecycle"
)

// Intake is the single-frame intake: the simplest way for an SDR script to
// feed cuasd is one frame per NATS message, and one JetStream write per
// frame cannot keep up with a busy receiver (JetStream's own per-message
// ceiling is far below what cuasd decodes). So sensors publish frames on
// core NATS to cuas.in.{protocol}.{sensor}; the intake gathers them into
// length-prefixed batches per protocol and sensor (up to MaxBatch frames or
// Linger, whichever comes first) and stores each batch in CUAS_RAW with one
// write. Two delivery modes, chosen per message by the sender:
//
//   - Acknowledged (the message has a reply subject, as `nats req` and
//     every NATS client's request sends): the intake answers "+OK" only
//     after the batch holding the frame is stored, or "-ERR <reason>" when
//     it could not be (the sender retries). A sender keeps many requests in
//     flight (a window) to go fast. With a Cuas-Seq header (increasing per
//     sensor), a retry of a frame already stored is answered "+OK
//     duplicate" and not stored twice (within this process's memory of the
//     last 65,536 sequence numbers per sensor; after a restart, or on
//     another instance, a retry may be stored again).
//   - Fire-and-forget (no reply subject): at most once; a frame lost to a
//     full stream is counted in cuasd_frames_dropped_total.
//
// Frames of one batch share the receive time of its first frame (at most
// Linger apart). Several cuasd instances share the intake through a NATS
// queue group, so each frame is taken by one of them.
type Intake struct {
	// MaxBatch is the most frames in one batch (default
	// bus.MaxFramesPerMessage).
	MaxBatch int
	// Linger is how long a partial batch waits for more frames (default
	// 2 ms).
	Linger time.Duration
	// Publishers is the number of batches being stored at once (default
	// 8); a sensor's batches always go to the same one, so its frames stay
	// in order.
	Publishers int
	// Limits are the per-sensor rate and byte limits (issue 32); nil is
	// DefaultSensorLimits.
	Limits *SensorLimits

	nc  *nats.Conn
	log *slog.Logger
	m   intakeMetrics

	mu      sync.Mutex // guards batches and queues
	batches map[string]*intakeBatch
	queues  []chan *intakeBatch
	seed    maphash.Seed
	// wmu guards windows; it is never held while waiting for a publisher.
	wmu     sync.Mutex
	windows map[string]*seqWindow
	buckets *sensorBuckets
}

// IntakeQueue is the NATS queue group the instances share.
const IntakeQueue = "cuasd-intake"

type intakeMetrics struct {
	frames     *prometheus.CounterVec
	duplicates prometheus.Counter
	batches    prometheus.Counter
	slow       *slowDropped
}

// NewIntake returns the intake on nc; its metrics are registered on reg
// when it is not nil.
func NewIntake(nc *nats.Conn, log *slog.Logger, reg prometheus.Registerer) *Intake {
	in := &Intake{nc: nc, log: log, seed: maphash.MakeSeed(),
		batches: map[string]*intakeBatch{}, windows: map[string]*seqWindow{}}
	in.m = intakeMetrics{
		frames: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_intake_frames_total",
			Help: "Single frames received on cuas.in.>, by protocol and mode (acked, fire_and_forget).",
		}, []string{"protocol", "mode"}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cuasd_intake_duplicates_total",
			Help: "Single frames whose Cuas-Seq was already received from their sensor (answered, not stored again).",
		}),
		batches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cuasd_intake_batches_total",
			Help: "Batches the single-frame intake stored in CUAS_RAW.",
		}),
	}
	for _, p := range decode.ProtocolNames() {
		for _, mode := range []string{"acked", "fire_and_forget"} {
			in.m.frames.WithLabelValues(p, mode)
		}
	}
	in.m.slow = &slowDropped{}
	if reg != nil {
		reg.MustRegister(in.m.frames, in.m.duplicates, in.m.batches, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "cuasd_intake_slow_consumer_dropped_total",
			Help: "Messages on cuas.in.> the NATS client dropped because the intake's pending buffer (64 MiB) was full.",
		}, in.m.slow.value))
	}
	return in
}

// Counters implements Counted.
func (in *Intake) Counters() Counters {
	return Counters{Adapter: "intake", Protocols: decode.ProtocolNames(), DropReasons: []string{"invalid", "too_large", "rate_limited", "sensor_position", "sensor_time"}}
}

// Name implements Source.
func (in *Intake) Name() string { return "intake " + bus.IntakePrefix + ".>" }

// intakeBatch is the frames of one protocol and sensor being gathered.
type intakeBatch struct {
	protocol, sensor string
	// clock is the Cuas-Clock of a batch of frames that came with a
	// Cuas-Sensor-Ns (framing lpt, issue 30); "" for plain lp. position
	// is the Cuas-Sensor-Position its frames stated (issue 31), "" none.
	clock, framing, position string
	body                     []byte
	n                        int
	recv                     int64
	started                  time.Time
	replies                  []string // reply subjects of acknowledged frames
	seqs                     []uint64 // their sequence numbers (for a failed batch to forget), 0: none
}

// Run implements Source: it serves until ctx ends.
func (in *Intake) Run(ctx context.Context, sink Sink, rep lifecycle.Reporter) error {
	in.defaults()
	var wg sync.WaitGroup
	in.queues = make([]chan *intakeBatch, in.Publishers)
	for i := range in.queues {
		q := make(chan *intakeBatch, 64)
		in.queues[i] = q
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range q {
				in.store(ctx, sink, b)
			}
		}()
	}
	sub, err := in.nc.QueueSubscribe(bus.IntakePrefix+".>", IntakeQueue, func(m *nats.Msg) { in.receive(m, sink) })
	if err == nil {
		// A burst waits in the client's buffer rather than being dropped,
		// up to IntakePendingBytes: beyond it NATS drops messages for this
		// slow consumer (cuasd_intake_slow_consumer_dropped_total) rather
		// than cuasd's memory growing with a flood.
		err = sub.SetPendingLimits(1<<20, IntakePendingBytes)
	}
	if err == nil {
		in.m.slow.set(sub)
	}
	if err == nil {
		// Up means a sensor's request finds us: the server has the
		// subscription.
		err = in.nc.Flush()
	}
	if err != nil {
		in.closeQueues(&wg)
		return err
	}
	rep.Up()
	t := time.NewTicker(in.Linger)
	defer t.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case now := <-t.C:
			in.flushOlder(now.Add(-in.Linger))
		}
	}
	in.m.slow.set(nil) // keep its count past the subscription
	_ = sub.Drain()
	in.flushOlder(time.Now().Add(time.Hour))
	in.closeQueues(&wg)
	return nil
}

func (in *Intake) defaults() {
	if in.MaxBatch <= 0 {
		in.MaxBatch = bus.MaxFramesPerMessage
	}
	if in.Linger <= 0 {
		in.Linger = 2 * time.Millisecond
	}
	if in.Publishers <= 0 {
		in.Publishers = 8
	}
	if in.Limits == nil {
		l := DefaultSensorLimits()
		in.Limits = &l
	}
	in.buckets = newSensorBuckets(*in.Limits)
}

func (in *Intake) closeQueues(wg *sync.WaitGroup) {
	in.mu.Lock()
	for _, q := range in.queues {
		close(q)
	}
	in.queues = nil
	in.mu.Unlock()
	wg.Wait()
}

// receive adds one frame to its batch.
func (in *Intake) receive(m *nats.Msg, sink Sink) {
	protocol, sensor, ok := intakeSubject(m.Subject)
	if refusal, reason := in.refuse(protocol, sensor, ok, m.Data); refusal != "" {
		sink.Dropped(protocol, "intake", reason, 1)
		in.reply(m.Reply, refusal)
		return
	}
	mode := "fire_and_forget"
	if m.Reply != "" {
		mode = "acked"
	}
	position, bad := statedPosition(m)
	if bad != "" {
		sink.Dropped(protocol, "intake", "sensor_position", 1)
		in.reply(m.Reply, "-ERR sensor_position: "+bad)
		return
	}
	st, bad := sensorTime(m)
	if bad != "" {
		sink.Dropped(protocol, "intake", "sensor_time", 1)
		in.reply(m.Reply, "-ERR sensor_time: "+bad)
		return
	}
	in.m.frames.WithLabelValues(protocol, mode).Inc()
	seq, _ := strconv.ParseUint(m.Header.Get(bus.HeaderSeq), 10, 64)
	key := protocol + "." + sensor
	if seq != 0 && in.seen(key, seq) {
		in.m.duplicates.Inc()
		in.reply(m.Reply, "+OK duplicate")
		return
	}
	in.add(m, protocol, sensor, seq, position, st)
}

// add appends a frame accepted from sensor to its batch, and dispatches
// the batch when it is full.
func (in *Intake) add(m *nats.Msg, protocol, sensor string, seq uint64, position string, st stamp) {
	key := protocol + "." + sensor
	sensorNs, clock := st.ns, st.clock
	bkey := key
	if sensorNs != 0 || position != "" {
		// Timed frames batch apart (framing lpt), and frames stating a
		// position apart from those stating another.
		bkey = key + "\x00" + clock + "\x00" + position
	}
	in.mu.Lock()
	b := in.batches[bkey]
	if b != nil && len(b.body)+10+len(m.Data) > bus.MaxBatchBytes {
		// The batch would outgrow a NATS message: store it and begin
		// another.
		delete(in.batches, bkey)
		in.dispatchLocked(key, b)
		b = nil
	}
	if b == nil {
		b = &intakeBatch{protocol: protocol, sensor: sensor, started: time.Now(), recv: recvTime(m), framing: bus.FramingLP, position: position}
		if sensorNs != 0 {
			b.framing, b.clock = bus.FramingLPT, clock
		}
		in.batches[bkey] = b
	}
	if b.framing == bus.FramingLPT {
		b.body = bus.AppendLPT(b.body, sensorNs, m.Data)
	} else {
		b.body = bus.AppendLP(b.body, m.Data)
	}
	b.n++
	if m.Reply != "" {
		b.replies = append(b.replies, m.Reply)
		b.seqs = append(b.seqs, seq)
	}
	if b.n >= in.MaxBatch {
		delete(in.batches, bkey)
		in.dispatchLocked(key, b)
	}
	in.mu.Unlock()
}

// MaxIntakeFrame is the largest frame the intake takes (a length prefix's
// range; the largest frame of any protocol, MAVLink's, fits).
const MaxIntakeFrame = 0xffff

// IntakePendingBytes bounds the messages the NATS client holds for the
// intake before it hands them over (a burst; see Run).
const IntakePendingBytes = 64 << 20

// refuse says why a message is refused ("" when it is not): the answer to
// its sender and the drop reason it is counted under.
func (in *Intake) refuse(protocol, sensor string, ok bool, data []byte) (answer, reason string) {
	switch {
	case !ok:
		return "-ERR invalid: want cuas.in.{" + strings.Join(decode.ProtocolNames(), "|") + "}.{sensor}, the sensor " + bus.SensorRule, "invalid"
	case len(data) == 0:
		return "-ERR invalid: an empty message; send one frame of 1 to 65535 bytes", "invalid"
	case len(data) > MaxIntakeFrame:
		return "-ERR too_large: a frame of " + strconv.Itoa(len(data)) + " bytes; at most 65535", "too_large"
	}
	if why := in.buckets.take(protocol+"."+sensor, len(data), time.Now()); why != "" {
		return "-ERR rate_limited: sensor " + sensor + " " + why + "; slow down", "rate_limited"
	}
	return "", ""
}

// seen marks a sensor's sequence number received and reports whether it
// already was.
func (in *Intake) seen(key string, seq uint64) bool {
	in.wmu.Lock()
	defer in.wmu.Unlock()
	w := in.windows[key]
	if w == nil {
		w = &seqWindow{}
		in.windows[key] = w
	}
	return w.seen(seq)
}

// lpBody is a batch's body in framing lp: a sink that publishes only lp
// gets timed frames without their times.
func lpBody(b *intakeBatch) []byte {
	if b.framing != bus.FramingLPT {
		return b.body
	}
	var out []byte
	_, _ = bus.EachFrameTS(b.framing, b.body, nil, func(_ int, _ uint64, frame []byte) error {
		out = bus.AppendLP(out, frame)
		return nil
	})
	return out
}

// stamp is a frame's sensor time: its Cuas-Sensor-Ns (0 without one)
// and clock ("receiver" unless Cuas-Clock says gps).
type stamp struct {
	ns    int64
	clock string
}

// sensorTime is the frame's stamp, or why its headers are refused (bad):
// a malformed time or an unknown clock is answered, not stored with the
// arrival time or a GPS time read as a free-running clock.
func sensorTime(m *nats.Msg) (st stamp, bad string) {
	c := m.Header.Get(bus.HeaderClock)
	kind, err := sensorclock.ParseKind(c)
	if err != nil {
		return st, bus.HeaderClock + " must be gps, receiver or 12mhz, got " + strconv.Quote(cut(c))
	}
	v := m.Header.Get(bus.HeaderSensorTime)
	if v == "" {
		return st, ""
	}
	ns, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ns <= 0 {
		return st, bus.HeaderSensorTime + " must be a positive whole number of Unix nanoseconds, got " + strconv.Quote(cut(v))
	}
	if kind == sensorclock.GPS {
		return stamp{ns, "gps"}, ""
	}
	return stamp{ns, "receiver"}, ""
}

// cut shortens a header value quoted in an answer.
func cut(v string) string {
	if len(v) > 40 {
		return v[:40] + "…"
	}
	return v
}

// statedPosition is the frame's Cuas-Sensor-Position in its canonical
// form ("" without one), or why it is refused (bad): a malformed
// position is refused, never stored for multilateration to guess from.
func statedPosition(m *nats.Msg) (position, bad string) {
	switch p, ok, err := bus.StatedPosition(m.Header.Values(bus.HeaderSensorPosition)); {
	case err != nil:
		return "", err.Error()
	case !ok:
		return "", ""
	default:
		return p.String(), ""
	}
}

// recvTime is the frame's Cuas-Recv-Ns, or now.
func recvTime(m *nats.Msg) int64 {
	if v, err := strconv.ParseInt(m.Header.Get(bus.HeaderRecvTime), 10, 64); err == nil && v > 0 {
		return v
	}
	return time.Now().UnixNano()
}

// flushOlder sends every batch started before cutoff.
func (in *Intake) flushOlder(cutoff time.Time) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for key, b := range in.batches {
		if b.started.Before(cutoff) {
			delete(in.batches, key)
			in.dispatchLocked(b.protocol+"."+b.sensor, b)
		}
	}
}

// dispatchLocked hands b to the publisher of its sensor (in.mu held). The
// hand-off blocks while that publisher is busy: the NATS client buffers the
// frames behind it, which is the back-pressure.
func (in *Intake) dispatchLocked(key string, b *intakeBatch) {
	if len(in.queues) == 0 {
		return
	}
	q := in.queues[maphash.String(in.seed, key)%uint64(len(in.queues))]
	q <- b
}

// store writes one batch to CUAS_RAW and answers its acknowledged frames.
func (in *Intake) store(ctx context.Context, sink Sink, b *intakeBatch) {
	var err error
	if fs, ok := sink.(FramedSink); ok && (b.framing == bus.FramingLPT || b.position != "") {
		_, err = fs.PublishBatchFramed(context.WithoutCancel(ctx), "intake", b.protocol, b.sensor, b.framing, b.clock, b.position, b.body, b.n, b.recv, "")
	} else {
		_, err = sink.PublishBatch(context.WithoutCancel(ctx), "intake", b.protocol, b.sensor, lpBody(b), b.n, b.recv, "")
	}
	if err != nil {
		in.log.Warn("intake batch not stored", "protocol", b.protocol, "sensor", b.sensor, "frames", b.n, "err", err)
		in.wmu.Lock()
		w := in.windows[b.protocol+"."+b.sensor]
		for _, s := range b.seqs {
			if s != 0 && w != nil {
				w.forget(s)
			}
		}
		in.wmu.Unlock()
		answer := "-ERR " + reasonOf(err)
		for _, r := range b.replies {
			in.reply(r, answer)
		}
		return
	}
	in.m.batches.Inc()
	for _, r := range b.replies {
		in.reply(r, "+OK")
	}
}

func (in *Intake) reply(subject, text string) {
	if subject != "" {
		_ = in.nc.Publish(subject, []byte(text))
	}
}

// intakeSubject splits cuas.in.{protocol}.{sensor}.
func intakeSubject(s string) (protocol, sensor string, ok bool) {
	protocol, sensor, ok = bus.SplitSubject(bus.IntakePrefix, s)
	if !ok || !bus.ValidSensor(sensor) || !decode.Protocol(protocol).Valid() {
		return "", "", false
	}
	return protocol, sensor, true
}

// seqWindow remembers which of a sensor's last windowBits sequence numbers
// it has received: a ring of bits above base, everything below base
// counting as received.
type seqWindow struct {
	base uint64 // lowest sequence number still tracked
	bits [windowBits / 64]uint64
}

const windowBits = 1 << 16

// seen marks seq received and reports whether it already was. A number
// more than a window below the window is a sensor that started counting
// afresh (a reboot): the window restarts there rather than calling every
// new frame a duplicate.
func (w *seqWindow) seen(seq uint64) bool {
	if seq+windowBits < w.base {
		*w = seqWindow{base: seq}
	}
	if seq < w.base {
		return true
	}
	if seq >= w.base+windowBits {
		w.advance(seq - windowBits + 1)
	}
	i, bit := (seq%windowBits)/64, uint64(1)<<(seq%64)
	if w.bits[i]&bit != 0 {
		return true
	}
	w.bits[i] |= bit
	return false
}

// forget unmarks seq (its batch was not stored), so a retry is stored.
func (w *seqWindow) forget(seq uint64) {
	if seq >= w.base && seq < w.base+windowBits {
		w.bits[(seq%windowBits)/64] &^= uint64(1) << (seq % 64)
	}
}

// advance moves base up to nb, clearing the bits of the numbers it leaves.
func (w *seqWindow) advance(nb uint64) {
	if nb-w.base >= windowBits {
		w.bits = [windowBits / 64]uint64{}
		w.base = nb
		return
	}
	for s := w.base; s < nb; s++ {
		w.bits[(s%windowBits)/64] &^= uint64(1) << (s % 64)
	}
	w.base = nb
}
