package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/cuasd/cuasd/httpapi"
	"github.com/cuasd/cuasd/lifecycle"
)

// newRegistry is the service's private Prometheus registry with the Go,
// process and build-information collectors.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	buildInfo := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cuasd_build_info",
		Help: "Build information of the running cuasd; the value is always 1.",
	}, []string{"version", "goversion"})
	buildInfo.WithLabelValues(version(), runtime.Version()).Set(1)
	reg.MustRegister(buildInfo)
	return reg
}

// startHTTP builds the API on everything started before it. It is the last
// component to start, so it also announces that the service is ready.
func (s *service) startHTTP(context.Context) error {
	tlsCfg := s.httpTLS
	handler := httpapi.NewServer(s.httpDeps(s.auth))
	s.http = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		// The Server-Sent Events stream outlives this: it moves its own
		// write deadline forward before every event.
		WriteTimeout:   time.Minute,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: httpapi.ServerMaxHeaderBytes, // httpapi answers over httpapi.MaxHeaderBytes with a 431 problem
		ErrorLog:       slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		TLSConfig:      tlsCfg,
	}
	scheme := "http"
	if tlsCfg != nil {
		scheme = "https"
	}
	url := scheme + "://" + displayAddr(s.httpLn.Addr().String()) + s.cfg.BasePath + "/"
	s.log.Info("cuasd ready", "url", url, "version", version(), "startup", time.Since(s.start).Round(time.Millisecond),
		"nats", natsDesc(s.bus))
	for _, src := range s.sources {
		if a := listenAddr(src); a != "" {
			fmt.Fprintf(s.out, "cuasd adapter %s\n", a)
		}
	}
	if u := s.bus.ClientURL(); u != "" {
		fmt.Fprintf(s.out, "cuasd nats %s\n", u)
	}
	// "serving" means ready: the pipeline stages' and inputs' goroutines
	// were started before this component, and report within moments (an
	// input that cannot connect reports retrying; at most 5 s are waited).
	for deadline := time.Now().Add(5 * time.Second); s.status.Starting(lifecycle.Stage, lifecycle.Input) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Fprintf(s.out, "cuasd serving %s\n", url)
	return nil
}

// serveHTTP serves until ctx ends, then stops accepting and gives the
// requests in flight up to --shutdown-wait to finish. Long-lived streams
// (SSE) take their context from ctx, so they end when the service stops
// instead of holding the shutdown open.
func (s *service) serveHTTP(ctx context.Context) error {
	s.http.BaseContext = func(net.Listener) context.Context { return ctx }
	errc := make(chan error, 1)
	go func() {
		if s.http.TLSConfig != nil {
			errc <- s.http.ServeTLS(s.httpLn, "", "")
		} else {
			errc <- s.http.Serve(s.httpLn)
		}
	}()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("http: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), time.Duration(s.cfg.ShutdownWait))
	defer cancel()
	if err := s.http.Shutdown(sctx); err != nil {
		s.log.Warn("http shutdown", "err", err)
	}
	<-errc
	return nil
}

// httpDeps wires the HTTP layer to the service's parts, through the small
// interfaces of httpapi.Deps.
func (s *service) httpDeps(auth *httpapi.Authenticator) httpapi.Deps {
	return httpapi.Deps{
		Logger:      s.log,
		Version:     version(),
		BasePath:    s.cfg.BasePath,
		Policy:      s.cfg.policy,
		Registry:    s.reg,
		Gatherer:    s.reg,
		Ready:       s.readiness,
		SigningMode: s.ledger.SigningMode(),

		Publisher:  s.httpIn, // through the Publisher while the inputs run
		Tracks:     s.store,
		Threats:    s.gate,
		Live:       liveTracks{s.store},
		Sensors:    mlatSensors{s}, // field sensors and Mode S receivers (issue 31)
		Alerts:     s.alertStore(), // issue 19
		Ledger:     s.ledger,
		Drones:     s.drones,
		Zones:      s.zones,
		History:    s.historyReader(),
		MAVLinkKey: s.cfg.mavlinkKey(),
		Web:        webHandler(s.cfg),
		Outputs:    s.outputStatus, // issue 18
		Storage:    s.disk.Refuse,  // issue 32
		Readsb:     s.readsbDocs(),

		Auth:         auth,
		RateLimit:    s.cfg.RateLimit,
		MetricsToken: s.cfg.MetricsToken,
	}
}

// readiness is /readyz: not ready while NATS, its streams, the reference
// data or a pipeline stage is down; degraded (still serving) while an
// input or output is down or the threat board is stale.
func (s *service) readiness(ctx context.Context) httpapi.Readiness {
	r := httpapi.Readiness{NotReady: s.bus.Ready(ctx), Components: s.status.Snapshot()}
	if s.drones == nil || s.drones.Len() == 0 {
		r.NotReady = append(r.NotReady, "drone database not loaded")
	}
	r.NotReady = append(r.NotReady, s.status.NotUp(lifecycle.Stage)...)
	if s.integrity != nil {
		r.NotReady = append(r.NotReady, s.integrity.NotReady(ctx)...)
	}
	r.Degraded = s.status.NotUp(lifecycle.Input, lifecycle.Output)
	r.Degraded = append(r.Degraded, sensorsDown(s.sensorReg)...)
	r.Degraded = append(r.Degraded, s.disk.Low()...) // issue 32
	if s.gate != nil {
		if lag := s.gate.Lag(); lag > s.gate.StaleAfter() { // a store below its mark says so itself
			r.Degraded = append(r.Degraded, fmt.Sprintf("gate: the threat board is %s old (stale after %s): sweeps are falling behind",
				lag.Round(time.Millisecond), s.gate.StaleAfter()))
		}
	}
	return r
}
