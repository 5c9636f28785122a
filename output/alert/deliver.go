package alert

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/lifecycle"
)

// Sink is where a delivery worker sends alert messages: a webhook, an MQTT
// broker.
type Sink interface {
	// Send delivers one message (body is its JSON) or says why not. An
	// error wrapped by Permanent is not retried.
	Send(ctx context.Context, m *Message, body []byte) error
}

// Permanent marks err as not worth retrying (the receiver refused the
// message itself, e.g. HTTP 400).
func Permanent(err error) error { return &permanentError{err} }

type permanentError struct{ error }

// IsPermanent says whether err (or an error it wraps) was marked Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

func (p *permanentError) Unwrap() error { return p.error }

// Backoff is the delay before retry attempt n (1 = the first retry):
// exponential from one second, capped at five minutes, with ±20% jitter
// so that many pending alerts do not hit a recovering receiver at once.
func Backoff(n int) time.Duration {
	d := time.Second << min(max(n-1, 0), 9)
	d = min(d, 5*time.Minute)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// Consumers binds durable consumers; *bus.JetStream implements it.
type Consumers interface {
	Consumer(ctx context.Context, stream, name string) (*bus.Consumer, error)
}

// Deliverer runs one sink's durable consumer.
type Deliverer struct {
	JS      Consumers
	Store   *Store
	Sink    Sink
	Config  SinkConfig
	Metrics *Metrics
	Logger  *slog.Logger
	// Workers is the number of messages sent at once (default 4).
	Workers int
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time

	// failing is set from a retried failure until the next delivery, so
	// that a receiver down for an hour is logged once when it fails and
	// once when it delivers again, not once per attempt of every alert.
	// (A pointer, made by Run, because a Deliverer is passed by value.)
	failing *atomic.Bool
	// sent remembers the states this sink delivered in this process, so a
	// redelivery whose acknowledgement and status write were both lost (a
	// NATS server restart between Send and Ack) is not sent again even
	// though the store never heard of it. Made once and kept across the
	// supervisor's restarts of Run; the store covers other processes.
	sent *sentSet
}

// sentSet is a bounded set of "id/seq" keys, oldest forgotten first, and
// the keys being sent right now. The second closes a race the first alone
// leaves open: after a stall longer than the acknowledgement wait,
// JetStream redelivers a message whose first delivery is still being sent,
// and another worker would send it again.
type sentSet struct {
	mu       sync.Mutex
	keys     map[string]struct{}
	ring     []string
	next     int
	inFlight map[string]struct{}
}

func newSentSet(n int) *sentSet {
	return &sentSet{keys: make(map[string]struct{}, n), ring: make([]string, n), inFlight: map[string]struct{}{}}
}

// claim marks k as being sent and reports true, or reports false when k
// was sent already or is being sent now.
func (s *sentSet) claim(k string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, sent := s.keys[k]
	_, sending := s.inFlight[k]
	if sent || sending {
		return false
	}
	s.inFlight[k] = struct{}{}
	return true
}

// release ends a claim; add (when the send succeeded) goes first.
func (s *sentSet) release(k string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.inFlight, k)
}

func (s *sentSet) add(k string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.keys[k]; ok {
		return
	}
	delete(s.keys, s.ring[s.next])
	s.ring[s.next] = k
	s.keys[k] = struct{}{}
	s.next = (s.next + 1) % len(s.ring)
}

func (s *sentSet) has(k string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.keys[k]
	return ok
}

func sentKey(a *Message) string { return a.ID + "/" + strconv.Itoa(a.Seq) }

// Run consumes until ctx ends. A message is acknowledged when the sink
// has it, retried later (negative acknowledgement with back-off) when the
// sink failed, and terminated as failed when it is older than the sink's
// give-up age or the sink refused it.
func (d *Deliverer) Run(ctx context.Context, rep lifecycle.Reporter) error {
	workers := d.defaults()
	cons, err := d.JS.Consumer(ctx, bus.StreamAlerts, consumerConfig(d.Config).Durable)
	if err != nil {
		return &Error{Sink: d.Config.Name, Msg: "consumer", Err: err}
	}
	it, err := cons.Messages(workers * 2)
	if err != nil {
		return &Error{Sink: d.Config.Name, Msg: "consume", Err: err}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { <-ctx.Done(); it.Stop() }()
	go d.watchPending(ctx, cons)
	rep.Up()
	msgs := make(chan bus.Msg)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for m := range msgs {
				d.handle(ctx, m, rep)
			}
		})
	}
	defer wg.Wait()
	defer close(msgs)
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, bus.ErrIteratorClosed) {
				return nil
			}
			return &Error{Sink: d.Config.Name, Msg: "next", Err: err}
		}
		msgs <- m
	}
}

// delivered reports whether the alert store records a's state as
// delivered to this sink already.
func (d *Deliverer) delivered(ctx context.Context, a *Message) bool {
	if d.Store == nil {
		return false
	}
	r, ok, err := d.Store.Get(ctx, a.ID)
	if err != nil || !ok {
		return false
	}
	for _, dl := range r.Deliveries {
		if dl.Sink == d.Config.Name && dl.Seq == a.Seq && dl.Status == Delivered {
			return true
		}
	}
	return false
}

// defaults fills the unset fields and returns the number of workers.
func (d *Deliverer) defaults() int {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Metrics == nil {
		d.Metrics = NewMetrics(nil)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	d.failing = new(atomic.Bool)
	if d.sent == nil {
		d.sent = newSentSet(4096)
	}
	if d.Workers <= 0 {
		return 4
	}
	return d.Workers
}

// watchPending keeps cuasd_alert_pending current for this sink.
func (d *Deliverer) watchPending(ctx context.Context, cons *bus.Consumer) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		if pending, ackPending, err := cons.Pending(ctx); err == nil {
			d.Metrics.setPending(d.Config.Name, pending+ackPending)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// handle makes one delivery attempt of m.
func (d *Deliverer) handle(ctx context.Context, m bus.Msg, rep lifecycle.Reporter) {
	var a Message
	meta, ok := m.Meta()
	if !ok || json.Unmarshal(m.Data(), &a) != nil {
		d.Logger.Error("alert sink: unreadable message; dropped", "sink", d.Config.Name)
		_ = m.Term()
		return
	}
	attempts := int(meta.Delivered)
	key := sentKey(&a)
	if attempts > 1 && (d.sent.has(key) || d.delivered(ctx, &a)) {
		// Sent before, and its acknowledgement to JetStream was lost (a
		// stall, a JetStream restart): not sent twice (issue 32).
		_ = m.Ack()
		return
	}
	if !d.sent.claim(key) {
		// Its first delivery is being sent by another worker (redelivered
		// after a stall): look again once that one has finished.
		_ = m.NakWithDelay(d.Config.TimeoutD)
		return
	}
	sctx, cancel := context.WithTimeout(ctx, d.Config.TimeoutD)
	err := d.Sink.Send(sctx, &a, m.Data())
	cancel()
	defer d.sent.release(key)
	now := d.Now()
	switch {
	case err == nil:
		d.sent.add(sentKey(&a))
		_ = m.Ack()
		d.outcome(ctx, &a, Delivered, "delivered", attempts, "")
		rep.Up()
		if d.failing.Swap(false) {
			d.Logger.Info("alert sink delivering again", "sink", d.Config.Name)
		}
	case ctx.Err() != nil:
		// Shutting down: leave the message for the next run or instance.
		_ = m.Nak()
	case IsPermanent(err) || now.Sub(meta.Timestamp) >= d.Config.GiveUpD:
		_ = m.Term()
		d.outcome(ctx, &a, Failed, "failed", attempts, err.Error())
		d.Logger.Error("alert delivery failed; given up", "sink", d.Config.Name, "alert", a.ID, "state", a.State, "attempts", attempts, "err", err)
	default:
		_ = m.NakWithDelay(Backoff(attempts))
		d.outcome(ctx, &a, Pending, "retry", attempts, err.Error())
		rep.Retrying(err)
		level := slog.LevelDebug
		if !d.failing.Swap(true) {
			level = slog.LevelWarn
		}
		d.Logger.Log(ctx, level, "alert delivery failed; will retry (logged at debug level until the sink delivers again)",
			"sink", d.Config.Name, "alert", a.ID, "attempts", attempts, "err", err)
	}
}

func (d *Deliverer) outcome(ctx context.Context, a *Message, status, result string, attempts int, lastErr string) {
	d.Metrics.deliveries.WithLabelValues(d.Config.Name, result).Inc()
	if d.Store == nil {
		return
	}
	if err := d.Store.attempt(ctx, a.ID, d.Config.Name, a.Seq, status, attempts, lastErr, d.Now()); err != nil {
		d.Logger.Warn("alert status not recorded", "alert", a.ID, "err", err)
	}
}
