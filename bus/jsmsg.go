package bus

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// More JetStream errors other packages test for (the client's own values).
var (
	// ErrTooManyStalledMsgs: too many asynchronous publishes await their
	// acknowledgement.
	ErrTooManyStalledMsgs = jetstream.ErrTooManyStalledMsgs
	// ErrNoStreamResponse: no stream answered a publish.
	ErrNoStreamResponse = jetstream.ErrNoStreamResponse
	// ErrIteratorClosed: a consumer's message iterator was stopped.
	ErrIteratorClosed = jetstream.ErrMsgIteratorClosed
)

// ErrorCode is the JetStream API error code in err's chain (nats-server's
// JSErrCode, for example 10077 for a message a full stream refused), or 0.
func ErrorCode(err error) int {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return int(apiErr.ErrorCode)
	}
	return 0
}

// ConnectJetStream wraps a connection of its own (a command-line client
// such as `cuasd replay`); maxPending bounds the asynchronous publishes
// awaiting acknowledgement (0: the client's default).
func ConnectJetStream(nc *nats.Conn, maxPending int) (*JetStream, error) {
	opts := []jetstream.JetStreamOpt{jetstream.WithPublishAsyncTimeout(AsyncAckTimeout)}
	if maxPending > 0 {
		opts = append(opts, jetstream.WithPublishAsyncMaxPending(maxPending))
	}
	js, err := jetstream.New(nc, opts...)
	if err != nil {
		return nil, &Error{"jetstream", err}
	}
	return &JetStream{js: js}, nil
}

// PubAck is JetStream's acknowledgement of a stored message.
type PubAck struct {
	Stream   string
	Sequence uint64
	// Duplicate: the message id was already stored; nothing was added.
	Duplicate bool
}

func pubAck(a *jetstream.PubAck) PubAck {
	return PubAck{Stream: a.Stream, Sequence: a.Sequence, Duplicate: a.Duplicate}
}

// Publish publishes msg and waits for JetStream to store it.
func (j *JetStream) Publish(ctx context.Context, msg *nats.Msg) (PubAck, error) {
	a, err := j.js.PublishMsg(ctx, msg)
	if err != nil {
		return PubAck{}, err
	}
	return pubAck(a), nil
}

// PublishAsync publishes msg without waiting; the future says whether it
// was stored.
func (j *JetStream) PublishAsync(msg *nats.Msg) (PubAckFuture, error) {
	f, err := j.js.PublishMsgAsync(msg)
	return PubAckFuture{f: f}, err
}

// PubAckFuture is the outcome of an asynchronous publish.
type PubAckFuture struct{ f jetstream.PubAckFuture }

// Wait waits for the outcome: the acknowledgement, the publish's error,
// or ctx.Err() (the very value) when ctx ends first.
func (f PubAckFuture) Wait(ctx context.Context) (PubAck, error) {
	select {
	case a := <-f.f.Ok():
		return pubAck(a), nil
	case err := <-f.f.Err():
		return PubAck{}, err
	case <-ctx.Done():
		return PubAck{}, ctx.Err()
	}
}

// Subject is the published message's subject.
func (f PubAckFuture) Subject() string { return f.f.Msg().Subject }

// Msg is a message delivered by a consumer. It is a small value: passing
// it around allocates nothing.
type Msg struct{ m jetstream.Msg }

// Subject is the message's subject.
func (m Msg) Subject() string { return m.m.Subject() }

// Data is the message's body.
func (m Msg) Data() []byte { return m.m.Data() }

// Header is the message's header (nil when it has none).
func (m Msg) Header() nats.Header { return m.m.Headers() }

// MsgMeta is where a delivered message sits in its stream.
type MsgMeta struct {
	// Sequence is the message's stream sequence.
	Sequence uint64
	// Delivered counts the deliveries of the message, this one included.
	Delivered uint64
	// Timestamp is when the stream stored it.
	Timestamp time.Time
}

// Meta parses the message's metadata (false for a message that did not
// come from a consumer).
func (m Msg) Meta() (MsgMeta, bool) {
	md, err := m.m.Metadata()
	if err != nil {
		return MsgMeta{}, false
	}
	return MsgMeta{Sequence: md.Sequence.Stream, Delivered: md.NumDelivered, Timestamp: md.Timestamp}, true
}

// Ack acknowledges the message.
func (m Msg) Ack() error { return m.m.Ack() }

// Nak asks for the message again at once.
func (m Msg) Nak() error { return m.m.Nak() }

// NakWithDelay asks for the message again after d.
func (m Msg) NakWithDelay(d time.Duration) error { return m.m.NakWithDelay(d) }

// Term tells the server never to deliver the message again.
func (m Msg) Term() error { return m.m.Term() }

// MaxPulledBytes bounds what one consumer pulls ahead of its handler
// (issue 32): by message count alone, 1,024 messages of 8 MB were 8 GB
// that cuasd's memory had to hold under a flood. 32 MiB is still hundreds
// of the pipeline's largest batches.
const MaxPulledBytes = 32 << 20

// ConsumeHeartbeat is how often ConsumeFrom's consumer asks the server
// holding it for a sign of life while no message flows. An ordered
// consumer is a single-replica consumer on one server of a cluster; when
// that server stops, its pending pull request goes with it and nothing
// answers: only the missing heartbeats (two of them) tell the client to
// re-create the consumer on a server that is up. The client's default
// for ordered consumers, 5 s, held the fusion feed (and so SBS and
// history) for 10 s after a nats-server restart whenever the restarted
// server held its consumer (issue: make faults, "(b) external
// nats-server restarted"). A heartbeat a second costs the server one
// empty message a second on an idle stream.
const ConsumeHeartbeat = time.Second

// ConsumeFrom reads every message of stream on subjects matching filter
// stored since start, in stream order, with an ordered consumer of its
// own (not durable: it is recreated on a reconnect, and when its server
// misses two heartbeats (ConsumeHeartbeat), resuming after the last
// message read, and leaves nothing behind), calling fn for each from one
// goroutine. stop ends the consumption and returns once fn is no longer
// called; closed is closed when the consumption ended by itself (the
// connection closed), which its supervisor restarts.
func (j *JetStream) ConsumeFrom(ctx context.Context, stream, filter string, start time.Time, fn func(Msg)) (stop func(), closed <-chan struct{}, err error) {
	cons, err := j.js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{filter},
		DeliverPolicy:  jetstream.DeliverByStartTimePolicy,
		OptStartTime:   &start,
	})
	if err != nil {
		return nil, nil, err
	}
	log := j.logger()
	cc, err := cons.Consume(func(m jetstream.Msg) { fn(Msg{m: m}) },
		jetstream.PullMaxMessagesWithBytesLimit(1024, MaxPulledBytes),
		jetstream.PullHeartbeat(ConsumeHeartbeat),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			// The ordered consumer re-creates itself after these; the
			// warning says why the stream paused.
			if errors.Is(err, jetstream.ErrNoHeartbeat) {
				log.Warn("a consumer's server stopped answering; re-creating the consumer", "stream", stream, "filter", filter, "err", err)
			}
		}))
	if err != nil {
		return nil, nil, err
	}
	return func() {
		cc.Stop()
		<-cc.Closed()
	}, cc.Closed(), nil
}

// ConsumerConfig is a durable pull consumer with explicit
// acknowledgements.
type ConsumerConfig struct {
	Durable       string
	Description   string
	FilterSubject string
	// DeliverNew starts a new consumer at the end of the stream instead
	// of its first message.
	DeliverNew bool
	// AckWait is how long a delivered message waits for its
	// acknowledgement before it is delivered again.
	AckWait time.Duration
	// MaxDeliver bounds the deliveries of a message (-1 none, 0 the
	// server's default).
	MaxDeliver int
	// MaxAckPending bounds the messages delivered and not acknowledged.
	MaxAckPending int
}

func (c *ConsumerConfig) jetstream() jetstream.ConsumerConfig {
	deliver := jetstream.DeliverAllPolicy
	if c.DeliverNew {
		deliver = jetstream.DeliverNewPolicy
	}
	return jetstream.ConsumerConfig{
		Durable: c.Durable, Description: c.Description, FilterSubject: c.FilterSubject,
		DeliverPolicy: deliver, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: c.AckWait, MaxDeliver: c.MaxDeliver, MaxAckPending: c.MaxAckPending,
	}
}

// Consumer is a durable pull consumer.
type Consumer struct{ c jetstream.Consumer }

// EnsureConsumer creates the durable consumer cfg on stream, or updates
// its configuration.
func (j *JetStream) EnsureConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (*Consumer, error) {
	c, err := j.js.CreateOrUpdateConsumer(ctx, stream, cfg.jetstream())
	if err != nil {
		return nil, err
	}
	return &Consumer{c: c}, nil
}

// Consumer binds the existing durable consumer name of stream
// (ErrConsumerNotFound or ErrStreamNotFound when it is not there).
func (j *JetStream) Consumer(ctx context.Context, stream, name string) (*Consumer, error) {
	c, err := j.js.Consumer(ctx, stream, name)
	if err != nil {
		return nil, err
	}
	return &Consumer{c: c}, nil
}

// Pending returns the messages not yet delivered and those delivered and
// not yet acknowledged.
func (c *Consumer) Pending(ctx context.Context) (pending, ackPending uint64, err error) {
	info, err := c.c.Info(ctx)
	if err != nil {
		return 0, 0, err
	}
	return info.NumPending, uint64(info.NumAckPending), nil
}

// Fetch takes up to max waiting messages. With wait 0 it returns at once
// with what is waiting; otherwise it waits up to wait for the first. err
// is a failed request (nothing fetched); end is why a batch ended early,
// other than the wait expiring (msgs still holds what arrived).
func (c *Consumer) Fetch(max int, wait time.Duration) (msgs []Msg, end, err error) {
	var batch jetstream.MessageBatch
	if wait > 0 {
		batch, err = c.c.Fetch(max, jetstream.FetchMaxWait(wait))
	} else {
		batch, err = c.c.FetchNoWait(max)
	}
	if err != nil {
		return nil, nil, err
	}
	for m := range batch.Messages() {
		msgs = append(msgs, Msg{m: m})
	}
	if end = batch.Error(); errors.Is(end, nats.ErrTimeout) {
		end = nil
	}
	return msgs, end, nil
}

// Messages streams the consumer's messages, keeping up to buffered of
// them pulled ahead.
func (c *Consumer) Messages(buffered int) (*MsgIter, error) {
	it, err := c.c.Messages(jetstream.PullMaxMessagesWithBytesLimit(buffered, MaxPulledBytes))
	if err != nil {
		return nil, err
	}
	return &MsgIter{it: it}, nil
}

// MsgIter is a stream of a consumer's messages (Consumer.Messages).
type MsgIter struct{ it jetstream.MessagesContext }

// Next blocks for the next message; after Stop it returns
// ErrIteratorClosed.
func (i *MsgIter) Next() (Msg, error) {
	m, err := i.it.Next()
	return Msg{m: m}, err
}

// Stop ends the stream.
func (i *MsgIter) Stop() { i.it.Stop() }
