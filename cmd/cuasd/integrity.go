package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/worker"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/fusion/zones"
	"github.com/cuasd/cuasd/ledger"
	"github.com/cuasd/cuasd/lifecycle"
)

// integrityInterval is how often the JetStream resources are checked
// (issue 23).
var integrityInterval = 2 * time.Second

// integrity watches the JetStream resources cuasd depends on: the
// pipeline streams, the decoders' durable consumers, the zone and
// ownership buckets, and the ledger's stream. Anything but the ledger that
// went missing (an administrator's `nats stream rm`, a lost store) is
// logged and recreated; a missing or truncated ledger is logged as an
// error, counted, and keeps /readyz not ready: it is never recreated,
// since an empty ledger in its place would hide the loss of acknowledged
// receipts.
type integrity struct {
	bus       *bus.Bus
	ledger    *ledger.Log
	zones     *zones.Store
	owners    *fusion.Owners
	protocols []string
	log       *slog.Logger

	recreated    *prometheus.CounterVec
	ledgerIntact prometheus.Gauge

	mu        sync.Mutex
	ledgerErr error
}

func newIntegrity(s *service) *integrity {
	in := &integrity{bus: s.bus, ledger: s.ledger, zones: s.zones, owners: s.owners, log: s.log,
		recreated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_jetstream_recreated_total",
			Help: "JetStream streams, consumers and buckets cuasd found missing and recreated, by resource.",
		}, []string{"resource"}),
		ledgerIntact: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "cuasd_ledger_intact",
			Help: "1 while the ledger's stream holds every batch this process stored; 0 when it is missing or truncated.",
		}),
	}
	in.ledgerIntact.Set(1)
	// The decoders' durable consumers exist only with
	// --publish-observations (fusion decodes CUAS_RAW through an ordered
	// consumer of its own, which nats.go recreates by itself).
	if s.cfg.PublishObs {
		for _, d := range frameDecoders(s.cfg) {
			in.protocols = append(in.protocols, string(d.Protocol()))
		}
	}
	in.declare()
	s.reg.MustRegister(in.recreated, in.ledgerIntact)
	return in
}

// declare creates the recreation counter of every resource repair can
// recreate at 0, so that /metrics shows them before the first loss
// (issue 24).
func (in *integrity) declare() {
	for _, c := range bus.StreamConfigs(bus.Limits{}) {
		in.recreated.WithLabelValues("stream " + c.Name)
	}
	for _, p := range in.protocols {
		in.recreated.WithLabelValues("consumer " + worker.ConsumerName(p))
	}
	in.recreated.WithLabelValues("bucket " + bus.BucketZones)
	in.recreated.WithLabelValues("bucket " + fusion.OwnersBucket)
}

// integrityStage is the watcher as a pipeline stage of serve.
func (s *service) integrityStage() lifecycle.Component {
	c := s.stage("integrity", upThen(func(ctx context.Context) error { return s.integrity.Run(ctx) }))
	c.Start = func(context.Context) error {
		s.integrity = newIntegrity(s)
		return nil
	}
	return c
}

// Run checks and repairs every integrityInterval until ctx ends.
func (in *integrity) Run(ctx context.Context) error {
	t := time.NewTicker(integrityInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		in.checkLedger(ctx)
		in.repair(ctx)
	}
}

// checkLedger runs the ledger's own check and remembers the outcome.
func (in *integrity) checkLedger(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := in.ledger.CheckStore(cctx)
	if err != nil && !errors.Is(err, ledger.ErrIntegrity) {
		return // unreachable JetStream: not a verdict on the ledger
	}
	in.mu.Lock()
	was := in.ledgerErr
	in.ledgerErr = err
	in.mu.Unlock()
	switch {
	case err != nil && was == nil:
		in.ledgerIntact.Set(0)
		in.log.Error("ledger integrity lost: acknowledged receipts are gone; the ledger is NOT recreated, restore its stream", "err", err)
	case err == nil && was != nil:
		in.ledgerIntact.Set(1)
		in.log.Warn("ledger integrity restored")
	}
}

// missing lists, by name, the consumers and buckets that do not exist
// now.
func (in *integrity) missing(ctx context.Context) []string {
	// The pipeline streams are in bus.Ready's reasons already.
	var out []string
	for _, p := range in.protocols {
		if _, err := in.bus.JetStream().Consumer(ctx, bus.StreamRaw, worker.ConsumerName(p)); errors.Is(err, bus.ErrConsumerNotFound) || errors.Is(err, bus.ErrStreamNotFound) {
			out = append(out, "consumer "+bus.StreamRaw+"/"+worker.ConsumerName(p))
		}
	}
	if gone, _ := in.zones.Missing(ctx); gone {
		out = append(out, "bucket "+bus.BucketZones)
	}
	if gone, _ := in.owners.Missing(ctx); gone {
		out = append(out, "bucket "+fusion.OwnersBucket)
	}
	return out
}

// repair recreates what is missing, pipeline streams first (a consumer
// needs its stream).
func (in *integrity) repair(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	streams, _ := in.bus.MissingStreams(rctx)
	for _, s := range streams {
		in.redo("stream "+s, func() error { return in.bus.RecreateStream(rctx, s) })
	}
	for _, p := range in.protocols {
		if _, err := in.bus.JetStream().Consumer(rctx, bus.StreamRaw, worker.ConsumerName(p)); errors.Is(err, bus.ErrConsumerNotFound) {
			in.redo("consumer "+worker.ConsumerName(p), func() error {
				_, err := in.bus.JetStream().EnsureConsumer(rctx, bus.StreamRaw, worker.ConsumerConfig(p))
				return err
			})
		}
	}
	if gone, _ := in.zones.Missing(rctx); gone {
		in.redo("bucket "+bus.BucketZones, func() error { return in.zones.Recreate(rctx) })
	}
	if gone, _ := in.owners.Missing(rctx); gone {
		in.redo("bucket "+fusion.OwnersBucket, func() error { return in.owners.Recreate(rctx) })
	}
}

func (in *integrity) redo(what string, fn func() error) {
	in.log.Warn("jetstream: "+what+" was missing; recreating it", "resource", what)
	if err := fn(); err != nil {
		in.log.Error("jetstream: recreating "+what+" failed", "err", err)
		return
	}
	in.recreated.WithLabelValues(what).Inc()
}

// NotReady are the readiness reasons: the ledger's state, and every
// resource missing now (until the next repair recreates it).
func (in *integrity) NotReady(ctx context.Context) []string {
	var out []string
	in.mu.Lock()
	if in.ledgerErr != nil {
		out = append(out, "ledger: "+in.ledgerErr.Error())
	}
	in.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for _, m := range in.missing(cctx) {
		out = append(out, fmt.Sprintf("jetstream: %s is missing (being recreated)", m))
	}
	return out
}
