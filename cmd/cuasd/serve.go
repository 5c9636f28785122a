package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/httpapi"
	"github.com/cuasd/cuasd/web"
)

// runServe runs the service until ctx is cancelled (SIGINT/SIGTERM), then
// shuts down gracefully: stop accepting, finish in-flight requests, stop the
// workers, drain NATS and let the embedded server sync JetStream to disk.
func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	start := time.Now()

	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	bopts := bus.Options{
		URL:         cfg.NATSURL,
		DataDir:     cfg.DataDir,
		Listen:      cfg.NATSListen,
		MaxMemory:   int64(cfg.JSMaxMemory),
		MaxStore:    int64(cfg.JSMaxStore),
		ConnectName: "cuasd",
		Logger:      log,
	}
	if cfg.JSSync == "always" {
		bopts.SyncAlways = true
	} else {
		d, _ := time.ParseDuration(cfg.JSSync) // validated by parseConfig
		bopts.SyncInterval = d
	}
	auth, tlsCfg, err := security(cfg, &bopts, log)
	if err != nil {
		return err
	}
	b, err := bus.Start(ctx, bopts)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Duration(cfg.ShutdownWait))
		defer cancel()
		if err := b.Close(cctx); err != nil {
			log.Warn("nats drain", "err", err)
		}
		log.Info("stopped")
	}()
	limits := bus.DefaultLimits()
	limits.RawMaxAge, limits.RawMaxBytes = time.Duration(cfg.RawMaxAge), int64(cfg.RawMaxBytes)
	limits.ObsMaxAge, limits.ObsMaxBytes = time.Duration(cfg.ObsMaxAge), int64(cfg.ObsMaxBytes)
	limits.Replicas = cfg.Replicas
	if err := b.EnsureStreams(ctx, limits); err != nil {
		return err
	}

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

	st := startPipeline(ctx, b, cfg, reg, log)
	defer st.stop()
	if err := st.startAdapters(ctx, cfg, log); err != nil {
		return err
	}
	if err := st.startMAVLinkNet(cfg, log); err != nil {
		return err
	}
	svc, err := openServices(ctx, b, cfg, st, reg, log)
	if err != nil {
		return err
	}
	defer svc.close()
	if cfg.Demo {
		st.startDemo(st.ctx, log)
	}
	web := webHandler(cfg)

	deps := httpapi.Deps{
		Logger:   log,
		Version:  version(),
		BasePath: cfg.BasePath,
		Registry: reg,
		Gatherer: reg,
		Ready: func(ctx context.Context) []string {
			reasons := b.Ready(ctx)
			if svc.drones == nil || svc.drones.Len() == 0 {
				reasons = append(reasons, "drone database not loaded")
			}
			return reasons
		},
		SigningMode: svc.ledger.SigningMode(),

		Publisher:  st.publisher,
		Tracks:     st.store,
		Threats:    svc.board,
		Live:       liveTracks{st.store},
		Ledger:     svc.ledger,
		Drones:     svc.drones,
		Zones:      svc.zones,
		MAVLinkKey: cfg.mavlinkKey(),
		Web:        web,

		Auth:         auth,
		RateLimit:    cfg.RateLimit,
		MetricsToken: cfg.MetricsToken,
	}
	handler := httpapi.NewServer(deps)

	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("http listen: %w", err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		// The Server-Sent Events stream outlives this: it moves its own
		// write deadline forward before every event.
		WriteTimeout:   time.Minute,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:    func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	scheme := "http"
	if tlsCfg != nil {
		srv.TLSConfig, scheme = tlsCfg, "https"
		go func() { errc <- srv.ServeTLS(ln, "", "") }()
	} else {
		go func() { errc <- srv.Serve(ln) }()
	}

	url := scheme + "://" + displayAddr(ln.Addr().String()) + cfg.BasePath + "/"
	log.Info("cuasd ready", "url", url, "version", version(), "startup", time.Since(start).Round(time.Millisecond),
		"nats", natsDesc(b))
	for _, a := range st.listenAddrs {
		fmt.Fprintf(stdout, "cuasd adapter %s\n", a)
	}
	if u := b.ClientURL(); u != "" {
		fmt.Fprintf(stdout, "cuasd nats %s\n", u)
	}
	fmt.Fprintf(stdout, "cuasd serving %s\n", url)

	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-errc:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("http: %w", err)
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Duration(cfg.ShutdownWait))
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("http shutdown", "err", err)
	}
	return nil
}

func natsDesc(b *bus.Bus) string {
	if !b.Embedded() {
		return "external"
	}
	if u := b.ClientURL(); u != "" {
		return "embedded, sensors at " + u
	}
	return "embedded, in-process only"
}

// displayAddr turns a wildcard listen address into one a browser can open.
func displayAddr(a string) string {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return a
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

func newLogger(cfg config, w io.Writer) *slog.Logger {
	var level slog.Level
	switch strings.ToLower(cfg.LogLevel) {
	case "debug":
		level = slog.LevelDebug
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	default:
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// webHandler serves the map at the base path.
func webHandler(cfg config) http.Handler {
	return web.Handler(cfg.BasePath, web.Options{TileURL: cfg.TileURL, TileAttribution: cfg.TileAttribution})
}
