package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/bus"
)

// Error is the error type of package ingest.
type Error struct {
	Op string
	// Pressure is true when JetStream refused the frames because a stream
	// is full or the publisher is saturated: the caller should retry later.
	Pressure bool
	// Full is true when the refusal was for lack of space: a stream at its
	// byte or message cap (discard-new) or the JetStream store exhausted.
	// Space returns only when old frames age out or an operator makes
	// room, so callers answer "unavailable" rather than "slow down".
	Full bool
	Err  error
}

func (e *Error) Error() string { return "ingest: " + e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Backpressure reports whether retrying later may succeed.
func (e *Error) Backpressure() bool { return e.Pressure }

// StoreFull reports whether JetStream refused the frames for lack of
// space.
func (e *Error) StoreFull() bool { return e.Full }

// Protocols are the protocol tokens of the raw subjects.
var Protocols = []string{"adsb", "remoteid", "mavlink", "dji"}

// ValidProtocol reports whether p names a protocol with a raw subject.
func ValidProtocol(p string) bool { return slices.Contains(Protocols, p) }

// JetStream is the acknowledged publishing the Publisher needs;
// *bus.JetStream implements it.
type JetStream interface {
	// PublishAsync publishes without waiting; the future tells whether
	// the message was stored.
	PublishAsync(msg *nats.Msg) (bus.PubAckFuture, error)
	// Publish waits until the message is stored.
	Publish(ctx context.Context, msg *nats.Msg) (bus.PubAck, error)
}

// Publisher publishes raw frames to JetStream and reports success only
// after JetStream has acknowledged them: nothing it acknowledges to a
// caller is lost.
type Publisher struct {
	js      JetStream
	frames  *prometheus.CounterVec
	dropped *prometheus.CounterVec
	modeAC  *prometheus.CounterVec
	timeout time.Duration
}

// NewPublisher returns a Publisher on js, registering its metrics on reg
// (nil: unregistered).
func NewPublisher(js JetStream, reg prometheus.Registerer) *Publisher {
	p := &Publisher{
		js: js,
		frames: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_frames_received_total",
			Help: "Raw frames accepted into CUAS_RAW, by protocol and adapter.",
		}, []string{"protocol", "adapter"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_frames_dropped_total",
			Help: "Raw frames an adapter could not publish, by protocol, adapter and reason.",
		}, []string{"protocol", "adapter", "reason"}),
		modeAC: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_modeac_frames_total",
			Help: "Mode A/C replies received by the Mode S adapters, by adapter (relayed by Beast out, not decoded).",
		}, []string{"adapter"}),
		timeout: 10 * time.Second,
	}
	if reg != nil {
		reg.MustRegister(p.frames, p.dropped, p.modeAC)
	}
	return p
}

// Frame is one raw frame with its receiver metadata.
type Frame struct {
	Data []byte
	// RecvUnixNano is the receive time; 0 means now.
	RecvUnixNano int64
	// Signal is the receiver's signal level in dBFS; NaN or 0 means unknown.
	Signal float64
	// Carrier names a Remote ID frame's wrapping (see bus.HeaderCarrier).
	Carrier string
	// Link is the network address the frame came from, as metadata (see
	// bus.HeaderLink); empty: none.
	Link string
	// ID is the de-duplication id; empty derives one from the reception
	// (protocol, sensor, RecvUnixNano, Data) with MsgID.
	ID string

	// ProductType is a DJI DroneID product type number a field sensor
	// relayed (issue 25; see bus.HeaderProductType); 0: none.
	ProductType uint16

	// SensorNs is the sensor's own time of the frame in nanoseconds (issue
	// 30; see bus.HeaderSensorTime), 0: none; Clock says which clock it is
	// on ("receiver", the default, or "gps", see bus.HeaderClock).
	SensorNs int64
	Clock    string
}

// Result is what a publish achieved.
type Result struct {
	Subject    string
	Accepted   int
	Duplicates int
}

// PublishFrames publishes each frame as its own message on
// cuas.raw.{protocol}.{sensor} with a de-duplication id derived from its
// content, sensor and receive time, so that a retried request adds nothing.
// It returns after JetStream acknowledged every frame, or with an error
// (then some frames may be stored; a retry de-duplicates them).
func (p *Publisher) PublishFrames(ctx context.Context, adapter, protocol, sensor string, frames []Frame) (Result, error) {
	subj := bus.RawSubject(protocol, sensor)
	res := Result{Subject: subj}
	if len(frames) == 0 {
		return res, nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	now := time.Now().UnixNano()
	ingestNs := strconv.FormatInt(now, 10)
	futures := make([]bus.PubAckFuture, 0, len(frames))
	for i := range frames {
		f := &frames[i]
		id := f.ID
		if id == "" {
			recv := f.RecvUnixNano
			if recv == 0 {
				recv = now
			}
			id = MsgID(protocol, sensor, recv, f.Data)
		}
		msg := rawMsg(subj, sensor, f.Data, f.RecvUnixNano, now, ingestNs, id)
		markSimulated(msg, adapter)
		if f.Signal != 0 && f.Signal == f.Signal {
			msg.Header.Set(bus.HeaderSignal, strconv.FormatFloat(f.Signal, 'f', 1, 64))
		}
		if f.Carrier != "" {
			msg.Header.Set(bus.HeaderCarrier, f.Carrier)
		}
		if f.Link != "" {
			msg.Header.Set(bus.HeaderLink, f.Link)
		}
		if f.ProductType != 0 { // issue 25
			msg.Header.Set(bus.HeaderProductType, strconv.Itoa(int(f.ProductType)))
		}
		if f.SensorNs != 0 { // issue 30
			msg.Header.Set(bus.HeaderSensorTime, strconv.FormatInt(f.SensorNs, 10))
			if f.Clock != "" {
				msg.Header.Set(bus.HeaderClock, f.Clock)
			}
		}
		fut, err := p.js.PublishAsync(msg)
		if err != nil {
			p.dropped.WithLabelValues(protocol, adapter, "publish").Add(float64(len(frames) - i))
			return res, classify("publish", err)
		}
		futures = append(futures, fut)
	}
	return p.wait(ctx, adapter, protocol, res, futures, 1)
}

// PublishBatch publishes many frames as one lp-framed message (see
// bus.FramingLP): the efficient path for high-rate adapters. All frames
// share recvUnixNano; id, when not empty, is the de-duplication id. A
// batch without an id is not de-duplicated: the adapters that publish
// batches (TCP receivers, the simulator, the single-frame intake) never
// publish one twice, and hashing every batch for an id cost about 2% of
// the pipeline's CPU.
func (p *Publisher) PublishBatch(ctx context.Context, adapter, protocol, sensor string, batch []byte, n int, recvUnixNano int64, id string) (Result, error) {
	return p.PublishBatchFramed(ctx, adapter, protocol, sensor, bus.FramingLP, "", "", batch, n, recvUnixNano, id)
}

// PublishBatchFramed is PublishBatch with another framing: bus.FramingBeast
// keeps the receiver's timestamps, signal levels and Mode A/C replies.
func (p *Publisher) PublishBatchFramed(ctx context.Context, adapter, protocol, sensor, framing, clock, position string, batch []byte, n int, recvUnixNano int64, id string) (Result, error) {
	w, err := p.SendBatch(adapter, protocol, sensor, framing, clock, position, batch, n, recvUnixNano, id)
	if err != nil {
		return Result{Subject: bus.RawSubject(protocol, sensor)}, err
	}
	return w.Wait(ctx)
}

// SendBatch sends a batch as PublishBatchFramed does without waiting for
// its acknowledgement: Wait on the answer waits (up to the publisher's
// timeout) and reports as PublishBatchFramed would. Batches sent one after
// another from one goroutine are stored in that order. The batch may be
// reused once Wait returned.
func (p *Publisher) SendBatch(adapter, protocol, sensor, framing, clock, position string, batch []byte, n int, recvUnixNano int64, id string) (Acker, error) {
	subj := bus.RawSubject(protocol, sensor)
	sent := &sentBatch{p: p, adapter: adapter, protocol: protocol, n: n, res: Result{Subject: subj}}
	if n == 0 {
		return sent, nil
	}
	now := time.Now().UnixNano()
	msg := rawMsg(subj, sensor, batch, recvUnixNano, now, strconv.FormatInt(now, 10), id)
	msg.Header.Set(bus.HeaderFraming, framing)
	if clock != "" {
		msg.Header.Set(bus.HeaderClock, clock)
	}
	if position != "" {
		msg.Header.Set(bus.HeaderSensorPosition, position)
	}
	markSimulated(msg, adapter)
	fut, err := p.js.PublishAsync(msg)
	if err != nil {
		p.dropped.WithLabelValues(protocol, adapter, "publish").Add(float64(n))
		return nil, classify("publish", err)
	}
	sent.futures = []bus.PubAckFuture{fut}
	return sent, nil
}

// Acker is a batch sent and not yet acknowledged (BatchSender).
type Acker interface {
	// Wait waits for JetStream's acknowledgement (at most the sender's
	// timeout, or until ctx ends) and says what was stored.
	Wait(ctx context.Context) (Result, error)
}

// BatchSender is a FramedSink that can send a batch and wait for its
// acknowledgement apart (*Publisher): a Mode S adapter keeps several
// batches in flight, so that one whose acknowledgement never comes (sent
// to a stream leader that stopped) holds up only its own frames, not the
// receiver's whole stream for the acknowledgement timeout.
type BatchSender interface {
	FramedSink
	SendBatch(adapter, protocol, sensor, framing, clock, position string, batch []byte, n int, recvUnixNano int64, id string) (Acker, error)
}

var _ BatchSender = (*Publisher)(nil)

type sentBatch struct {
	p                 *Publisher
	adapter, protocol string
	n                 int
	res               Result
	futures           []bus.PubAckFuture
}

func (s *sentBatch) Wait(ctx context.Context) (Result, error) {
	if len(s.futures) == 0 {
		return s.res, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.p.timeout)
	defer cancel()
	return s.p.wait(ctx, s.adapter, s.protocol, s.res, s.futures, s.n)
}

// SimulatorAdapter is the adapter name of the simulator source
// (Simulator): its frames are marked simulated.
const SimulatorAdapter = "simulator"

// markSimulated sets bus.HeaderSimulated on the simulator's messages, so
// that no feed passes made-up traffic off as received (issue 34).
func markSimulated(msg *nats.Msg, adapter string) {
	if adapter == SimulatorAdapter {
		msg.Header.Set(bus.HeaderSimulated, "1")
	}
}

// rawMsg is a raw-frame message on subj with the headers every raw message
// carries: receive time (recv, 0 meaning now), ingest time (now, and
// ingestNs its decimal text, formatted once per publish), sensor and, when
// id is not empty, the de-duplication id.
func rawMsg(subj, sensor string, data []byte, recv, now int64, ingestNs, id string) *nats.Msg {
	recvNs := ingestNs
	if recv != 0 && recv != now {
		recvNs = strconv.FormatInt(recv, 10)
	}
	msg := &nats.Msg{Subject: subj, Data: data, Header: nats.Header{}}
	msg.Header.Set(bus.HeaderRecvTime, recvNs)
	msg.Header.Set(bus.HeaderIngestTime, ingestNs)
	msg.Header.Set(bus.HeaderSensor, sensor)
	if id != "" {
		msg.Header.Set(bus.HeaderMsgID, id)
	}
	return msg
}

func (p *Publisher) wait(ctx context.Context, adapter, protocol string, res Result, futures []bus.PubAckFuture, perMsg int) (Result, error) {
	var firstErr error
	for _, fut := range futures {
		ack, err := fut.Wait(ctx)
		switch {
		case err == nil && ack.Duplicate:
			res.Duplicates += perMsg
		case err == nil:
			res.Accepted += perMsg
		case firstErr != nil:
		case err == ctx.Err():
			firstErr = &Error{Op: "ack", Pressure: true, Err: fmt.Errorf("no JetStream acknowledgement: %w", err)}
		default:
			firstErr = classify("ack", err)
		}
	}
	p.frames.WithLabelValues(protocol, adapter).Add(float64(res.Accepted))
	if firstErr != nil {
		failed := len(futures)*perMsg - res.Accepted - res.Duplicates
		p.dropped.WithLabelValues(protocol, adapter, reasonOf(firstErr)).Add(float64(failed))
	}
	return res, firstErr
}

// publishReasons are the drop reasons the Publisher itself counts.
var publishReasons = []string{"publish", "backpressure", "error"}

// Declare creates c's counters at 0: frames received for each protocol,
// and frames dropped for each protocol and reason (the Publisher's own
// and c.DropReasons).
func (p *Publisher) Declare(c Counters) {
	for _, proto := range c.Protocols {
		p.frames.WithLabelValues(proto, c.Adapter)
		for _, r := range publishReasons {
			p.dropped.WithLabelValues(proto, c.Adapter, r)
		}
		for _, r := range c.DropReasons {
			p.dropped.WithLabelValues(proto, c.Adapter, r)
		}
	}
}

// Dropped counts frames an adapter discarded before publishing (for
// example a full buffer or an unparsable stream).
func (p *Publisher) Dropped(protocol, adapter, reason string, n int) {
	p.dropped.WithLabelValues(protocol, adapter, reason).Add(float64(n))
}

// ModeAC counts Mode A/C replies an adapter received.
func (p *Publisher) ModeAC(adapter string, n int) {
	p.modeAC.WithLabelValues(adapter).Add(float64(n))
}

func reasonOf(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Pressure {
		return "backpressure"
	}
	return "error"
}

// classify marks the JetStream errors that mean "full, retry later".
func classify(op string, err error) error {
	pressure := errors.Is(err, bus.ErrTooManyStalledMsgs) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrTimeout) || errors.Is(err, bus.ErrNoStreamResponse)
	full := false
	// nats-server's JSErrCode values: 10028 memory and 10047 storage
	// resources exceeded; 10077 the stream failed to store the message,
	// which is how a full DiscardNew stream answers (maximum bytes or
	// messages exceeded; also a message too large for the store);
	// 10078 is JSConsumerConfigRequiredErr, which a publish does not get.
	switch bus.ErrorCode(err) {
	case 10047, 10077, 10028:
		pressure, full = true, true
	case 10078:
		pressure = true
	}
	if s := err.Error(); strings.Contains(s, "maximum bytes") || strings.Contains(s, "maximum messages") ||
		strings.Contains(s, "resources exceeded") || strings.Contains(s, "insufficient resources") {
		pressure, full = true, true
	}
	return &Error{Op: op, Pressure: pressure, Full: full, Err: err}
}

// MsgID is the de-duplication id of a frame: a digest of what identifies a
// reception (protocol, sensor, receive time, bytes), so the same reception
// published twice is stored once, while the same bytes received at another
// time are kept.
func MsgID(protocol, sensor string, recvUnixNano int64, data []byte) string {
	h := sha256.New()
	h.Write([]byte(protocol))
	h.Write([]byte{0})
	h.Write([]byte(sensor))
	var t [8]byte
	binary.BigEndian.PutUint64(t[:], uint64(recvUnixNano))
	h.Write(t[:])
	h.Write(data)
	var sum [32]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:16])
}

// DeadLetterer is implemented by sinks that keep refused input: a source
// that refuses a message before it became a frame (a field sensor's
// unparsable JSON, issue 25) hands it over with its reason, to be kept in
// CUAS_DEAD beside the frames the decoders refused.
type DeadLetterer interface {
	DeadLetter(ctx context.Context, protocol, sensor, reason string, data []byte) error
}

// maxDeadLetter bounds what is kept of one refused message: enough to see
// what the sender sent, not a way to fill the stream.
const maxDeadLetter = 4 << 10

var _ DeadLetterer = (*Publisher)(nil)

// DeadLetter publishes a refused message on cuas.dead.{protocol} with the
// reason, the sensor and the receive time (now); a message over 4 KiB is
// cut, and says so in Cuas-Truncated.
func (p *Publisher) DeadLetter(ctx context.Context, protocol, sensor, reason string, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	now := time.Now().UnixNano()
	msg := &nats.Msg{Subject: bus.DeadSubject(protocol), Header: nats.Header{}}
	if len(data) > maxDeadLetter {
		msg.Header.Set(bus.HeaderTruncated, strconv.Itoa(len(data)))
		data = data[:maxDeadLetter]
	}
	msg.Data = data
	msg.Header.Set(bus.HeaderReason, reason)
	msg.Header.Set(bus.HeaderSensor, sensor)
	msg.Header.Set(bus.HeaderRecvTime, strconv.FormatInt(now, 10))
	msg.Header.Set(bus.HeaderMsgID, "s"+MsgID(protocol, sensor, now, data))
	if _, err := p.js.Publish(ctx, msg); err != nil {
		return classify("dead letter", err)
	}
	return nil
}
