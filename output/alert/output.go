package alert

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/lifecycle"
	"github.com/cuasd/cuasd/output"
)

// Options configure the rule engine's output.
type Options struct {
	// ReceiptURL makes the URL of a receipt index (nil: a relative
	// /v1/receipt/{index}).
	ReceiptURL func(int64) string
	Metrics    *Metrics
	Logger     *slog.Logger
	// Replicas of the stream and bucket (3 on a cluster).
	Replicas int
	// QueueLen bounds the events waiting for the engine (default 4096).
	QueueLen int
	// ConfirmAfter is how long after a start an alert left open by the
	// previous run waits for its track to be seen again before it is
	// resolved (default 2 minutes: longer than the default track TTL).
	ConfirmAfter time.Duration
}

// Rules is the rule engine as an output: it reads threat, track-lost and
// swarm events, runs the Engine and publishes each alert message to the
// durable stream, once per sink.
type Rules struct {
	cfg   *Config
	js    JetStream
	store *Store
	opt   Options
	q     *output.Queue[event]
}

type event struct {
	subject string
	data    []byte
}

// JetStream is what the rule engine needs of JetStream; *bus.JetStream
// implements it.
type JetStream interface {
	Buckets
	EnsureAlertStream(ctx context.Context, maxAge time.Duration, replicas int) error
	EnsureConsumer(ctx context.Context, stream string, cfg bus.ConsumerConfig) (*bus.Consumer, error)
	// Setup is how the handle makes what it makes at start-up (the alert
	// stream and bucket do through it): Open creates each sink's consumer
	// through it too, so all of them wait for a forming cluster alike.
	Setup() bus.Setup
	// Publish waits until the message is stored.
	Publish(ctx context.Context, msg *nats.Msg) (bus.PubAck, error)
}

// Open creates the stream, the bucket and one durable consumer per sink
// (before anything is published, so no sink misses a message) and returns
// the rule engine's output and the store of alert records.
func Open(ctx context.Context, js JetStream, cfg *Config, o Options) (*Rules, *Store, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	if o.QueueLen <= 0 {
		o.QueueLen = 4096
	}
	if o.ConfirmAfter <= 0 {
		o.ConfirmAfter = 2 * time.Minute
	}
	giveUp := time.Duration(0)
	for _, s := range cfg.Sinks {
		giveUp = max(giveUp, s.GiveUpD)
	}
	if err := js.EnsureAlertStream(ctx, max(2*giveUp, 24*time.Hour), o.Replicas); err != nil {
		return nil, nil, &Error{Msg: "create stream " + bus.StreamAlerts, Err: err}
	}
	for _, s := range cfg.Sinks {
		err := js.Setup().Do(ctx, "consumer sink-"+s.Name, func(ctx context.Context) error {
			_, err := js.EnsureConsumer(ctx, bus.StreamAlerts, consumerConfig(s))
			return err
		})
		if err != nil {
			return nil, nil, &Error{Sink: s.Name, Msg: "create consumer", Err: err}
		}
	}
	st, err := OpenStore(ctx, js, StoreConfig{Replicas: o.Replicas})
	if err != nil {
		return nil, nil, err
	}
	return &Rules{cfg: cfg, js: js, store: st, opt: o, q: output.NewQueue[event](o.QueueLen)}, st, nil
}

// consumerConfig is a sink's durable consumer: only its own subjects, new
// messages only when first created, explicit acks, no delivery limit (the
// give-up age decides), and a bounded number in flight.
func consumerConfig(s SinkConfig) bus.ConsumerConfig {
	return bus.ConsumerConfig{
		Durable:       "sink-" + s.Name,
		Description:   "cuasd alert sink " + s.Name,
		FilterSubject: bus.AlertPrefix + "." + bus.Token(s.Name) + ".>",
		DeliverNew:    true,
		AckWait:       s.TimeoutD + 5*time.Second,
		MaxDeliver:    -1,
		MaxAckPending: 256,
	}
}

// Name implements output.Output.
func (r *Rules) Name() string { return "alert-rules" }

// Run implements output.Output.
func (r *Rules) Run(ctx context.Context, ev output.Events, rep lifecycle.Reporter) error {
	put := func(m *nats.Msg) { r.q.Put(event{m.Subject, bytes.Clone(m.Data)}) }
	for _, subj := range []string{bus.ThreatPrefix + ".>", bus.SwarmSubject} {
		unsub, err := ev.Subscribe(subj, put)
		if err != nil {
			return &Error{Msg: "subscribe " + subj, Err: err}
		}
		defer unsub()
	}
	// Track updates are frequent; only a loss matters here, so the rest is
	// skipped before it is copied.
	unsub, err := ev.Subscribe(bus.TrackPrefix+".>", func(m *nats.Msg) {
		if bytes.Contains(m.Data, LostMarker) {
			put(m)
		}
	})
	if err != nil {
		return &Error{Msg: "subscribe tracks", Err: err}
	}
	defer unsub()
	eng := NewEngine(r.cfg, r.opt.ReceiptURL)
	if err := r.restore(ctx, eng); err != nil {
		return err
	}
	rep.Up()
	prune := time.NewTicker(time.Minute)
	defer prune.Stop()
	confirm := time.NewTimer(r.opt.ConfirmAfter)
	defer confirm.Stop()
	for {
		var msgs []Message
		select {
		case <-ctx.Done():
			return nil
		case now := <-prune.C:
			eng.Prune(now)
		case now := <-confirm.C:
			msgs = eng.ResolveUnconfirmed(now)
		case e := <-r.q.C():
			msgs = r.apply(eng, e)
		}
		r.publishAll(ctx, msgs, rep)
	}
}

// publishAll publishes each message, retrying while JetStream is
// unreachable (a message not in the stream would never be delivered;
// publishing it again is harmless, its id de-duplicates). Meanwhile new
// events wait in the bounded queue.
func (r *Rules) publishAll(ctx context.Context, msgs []Message, rep lifecycle.Reporter) {
	for _, m := range msgs {
		b := lifecycle.Backoff{Min: 250 * time.Millisecond, Max: 10 * time.Second}
		for {
			err := r.publish(ctx, &m)
			if err == nil {
				rep.Up()
				break
			}
			rep.Retrying(err)
			r.opt.Logger.Error("alert not published yet; retrying", "alert", m.ID, "err", err)
			if !b.Sleep(ctx) {
				return
			}
		}
	}
}

// restore hands the engine the alerts a previous run left open.
func (r *Rules) restore(ctx context.Context, eng *Engine) error {
	recs, err := r.store.List(ctx, Filter{})
	if err != nil {
		return err
	}
	latest := make([]Message, len(recs))
	for i := range recs {
		latest[i] = recs[i].Message
	}
	eng.Restore(latest)
	if n := len(eng.open); n > 0 {
		r.opt.Logger.Info("alerts taken up from the previous run", "open", n)
	}
	return nil
}

// apply runs one event through the engine.
func (r *Rules) apply(eng *Engine, e event) []Message {
	h, err := events.Peek(e.data)
	if err != nil {
		return nil
	}
	switch h.Type {
	case events.TypeThreat:
		var t events.ThreatEvent
		if json.Unmarshal(e.data, &t) == nil {
			return eng.Threat(&t)
		}
	case events.TypeTrackLost:
		var t events.TrackEvent
		if json.Unmarshal(e.data, &t) == nil {
			return eng.TrackLost(t.Track.TrackID, t.Time)
		}
	case events.TypeSwarmFormed, events.TypeSwarmChanged, events.TypeSwarmGone:
		var s events.SwarmEvent
		if json.Unmarshal(e.data, &s) == nil {
			eng.Swarm(&s)
		}
	}
	return nil
}

// publish records the message and puts it into the stream once per sink;
// the message id makes a second instance's identical publish a no-op.
func (r *Rules) publish(ctx context.Context, m *Message) error {
	if err := r.store.put(ctx, m, time.Now()); err != nil {
		return err
	}
	body, err := json.Marshal(m)
	if err != nil {
		return &Error{Msg: "encode alert", Err: err}
	}
	for _, sink := range m.Sinks {
		msg := nats.NewMsg(bus.AlertSubject(sink, m.Zone.ID))
		msg.Data = body
		msg.Header.Set(bus.HeaderMsgID, m.ID+"."+strconv.Itoa(m.Seq)+"."+sink)
		if _, err := r.js.Publish(ctx, msg); err != nil {
			return &Error{Sink: sink, Msg: "publish alert " + m.ID, Err: err}
		}
	}
	r.opt.Metrics.alerts.WithLabelValues(m.Rule, m.State).Inc()
	r.opt.Logger.Info("alert", "id", m.ID, "state", m.State, "rule", m.Rule, "zone", m.Zone.ID, "track", m.Track.TrackID, "decision", m.Decision)
	return nil
}

// Dropped is the number of events the engine's queue dropped.
func (r *Rules) Dropped() uint64 { return r.q.Dropped() }

// LostMarker picks the track.lost events out of the frequent track
// updates before anything is copied or decoded.
var LostMarker = []byte(`"` + events.TypeTrackLost + `"`)
