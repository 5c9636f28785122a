package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/worker"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/sim"
)

// stages are the pipeline's long-running parts, started by startPipeline
// and stopped, in order, by stop.
type stages struct {
	store     *fusion.Store
	publisher *ingest.Publisher
	wg        sync.WaitGroup
	// listenAddrs are the bound adapter listeners ("beast=127.0.0.1:30004").
	listenAddrs []string
	cancel      context.CancelFunc
	ctx         context.Context // cancelled by stop
}

// startPipeline starts the decoder workers, the fusion consumer and track
// expiry on b.
func startPipeline(ctx context.Context, b *bus.Bus, cfg config, reg prometheus.Registerer, log *slog.Logger) *stages {
	ctx, cancel := context.WithCancel(ctx)
	s := &stages{cancel: cancel, ctx: ctx}
	s.publisher = ingest.NewPublisher(b.JS, reg)
	s.store = fusion.NewStore(fusion.Config{TTL: time.Duration(cfg.TrackTTL)})

	m := worker.NewMetrics(reg)
	for _, dec := range frameDecoders(cfg) {
		w := worker.NewWorker(b.JS, dec, m, log)
		s.goRun(ctx, log, "decoder "+string(dec.Protocol()), w.Run)
	}
	cons := fusion.NewConsumer(b.JS, s.store, log, reg)
	s.goRun(ctx, log, "fusion", cons.Run)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.store.RunExpiry(ctx, time.Second, nil)
	}()
	return s
}

// startAdapters starts the receiver adapters the configuration asks for.
// A listener that cannot bind is a start-up error; outbound connections
// retry by themselves.
func (s *stages) startAdapters(ctx context.Context, cfg config, log *slog.Logger) error {
	ctx, cancel := context.WithCancel(ctx)
	prev := s.cancel
	s.cancel = func() { cancel(); prev() }
	for _, l := range []struct {
		addr   string
		format ingest.ModeSFormat
	}{{cfg.BeastListen, ingest.Beast}, {cfg.AVRListen, ingest.AVR}} {
		if l.addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			return fmt.Errorf("--%s-listen: %w", l.format, err)
		}
		log.Info("accepting Mode S receivers", "format", l.format, "addr", ln.Addr().String())
		s.listenAddrs = append(s.listenAddrs, string(l.format)+"="+ln.Addr().String())
		format := l.format
		s.goRun(ctx, log, string(format)+" listener", func(ctx context.Context) error {
			return ingest.ListenModeS(ctx, ln, format, string(format)+"-in", s.publisher, log)
		})
	}
	for _, c := range []struct {
		addr   string
		format ingest.ModeSFormat
	}{{cfg.BeastConnect, ingest.Beast}, {cfg.AVRConnect, ingest.AVR}} {
		if c.addr == "" {
			continue
		}
		addr, format := c.addr, c.format
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			ingest.ConnectModeS(ctx, addr, format, bus.Token(addr), s.publisher, log)
		}()
	}
	return nil
}

// startDemo runs the simulator in-process, publishing through the same
// JetStream path as every other adapter.
func (s *stages) startDemo(ctx context.Context, log *slog.Logger) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		log.Info("demo traffic simulator running", "site_lat", sim.DemoSite[0], "site_lon", sim.DemoSite[1])
		_, _ = sim.Run(ctx, sim.DefaultDemo(), &publisherSink{pub: s.publisher, sensor: "demo"})
	}()
}

// frameDecoders are the protocols the pipeline decodes.
func frameDecoders(cfg config) []worker.FrameDecoder {
	mav, err := worker.NewMAVLink(cfg.mavlinkKey())
	if err != nil {
		panic(err) // the key length was validated with the configuration
	}
	return []worker.FrameDecoder{&worker.ADSB{Fix: cfg.ADSBFix}, worker.NewRemoteID(), mav}
}

// goRun runs fn until ctx ends, restarting it after a pause if it fails
// (for example while NATS is reconnecting).
func (s *stages) goRun(ctx context.Context, log *slog.Logger, name string, fn func(context.Context) error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for ctx.Err() == nil {
			if err := fn(ctx); err != nil && ctx.Err() == nil {
				log.Error("pipeline stage failed; restarting", "stage", name, "err", err)
				select {
				case <-time.After(time.Second):
				case <-ctx.Done():
				}
			}
		}
	}()
}

// stop stops every stage and waits for them.
func (s *stages) stop() {
	s.cancel()
	s.wg.Wait()
}
