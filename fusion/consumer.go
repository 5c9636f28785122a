package fusion

import (
	"context"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode"
)

// Consumer feeds the store from the CUAS_OBS stream. Every cuasd instance
// runs one and sees every observation, so any instance can serve the whole
// picture; on start it replays the last TTL of the stream, which rebuilds
// the tracks after a restart.
type Consumer struct {
	js    jetstream.JetStream
	store *Store
	log   *slog.Logger

	applied prometheus.Counter
	latency prometheus.Histogram
	bad     prometheus.Counter
}

// NewConsumer returns a consumer feeding store. The continuous gate reads
// the store itself (it polls Store.Version), so nothing is called back.
func NewConsumer(js jetstream.JetStream, store *Store, log *slog.Logger, reg prometheus.Registerer) *Consumer {
	c := &Consumer{
		js: js, store: store, log: log,
		applied: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cuasd_observations_applied_total",
			Help: "Observations applied to the track store.",
		}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "cuasd_frame_to_track_seconds",
			Help:    "Time from a frame's acceptance by an adapter to its observation updating a track.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}),
		bad: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cuasd_observation_messages_malformed_total",
			Help: "CUAS_OBS messages that were not valid observation batches.",
		}),
	}
	if reg != nil {
		reg.MustRegister(c.applied, c.latency, c.bad, newStoreCollector(store))
	}
	return c
}

// Run consumes until ctx ends.
func (c *Consumer) Run(ctx context.Context) error {
	start := time.Now()
	cons, err := c.js.OrderedConsumer(ctx, bus.StreamObs, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{bus.ObsPrefix + ".>"},
		DeliverPolicy:  jetstream.DeliverByStartTimePolicy,
		OptStartTime:   new(start.Add(-c.store.TTL() - 5*time.Second)),
	})
	if err != nil {
		return err
	}
	startNs := start.UnixNano()
	buf := make([]decode.Observation, 0, 64)
	cc, err := cons.Consume(func(m jetstream.Msg) {
		buf = buf[:0]
		err := decode.EachInBatch(m.Data(), func(o *decode.Observation) error {
			buf = append(buf, *o)
			return nil
		})
		if err != nil {
			c.bad.Inc()
			c.log.Warn("malformed observation message", "subject", m.Subject(), "err", err)
			return
		}
		c.store.ApplyBatch(buf)
		now := time.Now().UnixNano()
		for i := range buf {
			if in := buf[i].IngestUnixNano; in >= startNs {
				c.latency.Observe(float64(now-in) / 1e9)
			}
		}
		c.applied.Add(float64(len(buf)))
	}, jetstream.PullMaxMessages(1024))
	if err != nil {
		return err
	}
	<-ctx.Done()
	cc.Stop()
	return nil
}

// RunExpiry removes expired tracks every period until ctx ends.
func (s *Store) RunExpiry(ctx context.Context, period time.Duration, onExpire func([]string)) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if gone := s.Expire(); len(gone) > 0 && onExpire != nil {
				onExpire(gone)
			}
		}
	}
}

// storeCollector exports the store's gauges at scrape time.
type storeCollector struct {
	s       *Store
	active  *prometheus.Desc
	dropped *prometheus.Desc
}

func newStoreCollector(s *Store) prometheus.Collector {
	return &storeCollector{
		s:       s,
		active:  prometheus.NewDesc("cuasd_tracks_active", "Live tracks, by protocol (a fused track counts once per protocol).", []string{"protocol"}, nil),
		dropped: prometheus.NewDesc("cuasd_observations_dropped_total", "Observations not applied to a track, by reason.", []string{"reason"}, nil),
	}
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.active; ch <- c.dropped }
func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	for p, n := range c.s.CountByProtocol() {
		ch <- prometheus.MustNewConstMetric(c.active, prometheus.GaugeValue, float64(n), p)
	}
	for r, n := range c.s.Dropped() {
		ch <- prometheus.MustNewConstMetric(c.dropped, prometheus.CounterValue, float64(n), r)
	}
}
