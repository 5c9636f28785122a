package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/worker"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/fusion/mlatstage"
	"github.com/cuasd/cuasd/fusion/zones"
	"github.com/cuasd/cuasd/gate/board"
	"github.com/cuasd/cuasd/httpapi"
	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/ingest/sensors"
	"github.com/cuasd/cuasd/internal/dirlock"
	"github.com/cuasd/cuasd/internal/diskspace"
	"github.com/cuasd/cuasd/internal/ratelimit"
	"github.com/cuasd/cuasd/ledger"
	"github.com/cuasd/cuasd/lifecycle"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/output/history"
	"github.com/cuasd/cuasd/output/readsbjson"
	"github.com/cuasd/cuasd/reference"
	"github.com/cuasd/cuasd/web"
)

// runServe runs the service until ctx is cancelled (SIGINT/SIGTERM). The
// service is one lifecycle.Group: its components start in the order of
// the data flow and stop in exactly the reverse order, on a requested
// shutdown and on every failure alike (see service.components).
func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	out := stderr
	if wantsHelp(args) {
		out = stdout
	}
	cfg, err := parseConfig(args, getenv, out)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	s := newService(cfg, log, stdout)
	return s.group.Run(ctx)
}

// service is everything `cuasd serve` runs. Each field is set by the Start
// of the component that owns it, before any later component starts.
type service struct {
	cfg   config
	log   *slog.Logger
	out   io.Writer
	start time.Time
	reg   *prometheus.Registry
	// oversize counts NATS messages refused for their size (issue 32).
	oversize prometheus.Counter
	status   *lifecycle.Status
	group    lifecycle.Group

	// Bound before anything else, so that an address in use stops the
	// start before the data directory is touched.
	httpLn  net.Listener
	sources []ingest.Source
	// sensorReg is the registry of the field sensor inputs (issue 25).
	sensorReg *sensors.Registry
	// Checked with the listeners, used when their components start.
	auth    *httpapi.Authenticator
	httpTLS *tls.Config
	busOpts bus.Options

	lock      *dirlock.Lock
	bus       *bus.Bus
	publisher *ingest.Publisher
	// httpIn is HTTP ingest, an input whose Sink the request handlers
	// publish through while the inputs run (issue 17).
	httpIn *ingest.HTTP
	store  *fusion.Store
	drones *reference.DB
	ledger *ledger.Log
	zones  *zones.Store
	owners *fusion.Owners
	// modeS hands the Mode S messages the fusion feed decodes to
	// per-message SBS (issue 30).
	modeS     worker.ModeSTap
	gate      *board.Gate
	integrity *integrity
	http      *http.Server
	alerts    alertStoreRef    // issue 19
	disk      *diskspace.Watch // issue 32

	historyOnce sync.Once
	history     *history.Recorder                 // nil with --history=false
	cot         cotOutputs                        // issue 18
	readsb      atomic.Pointer[readsbjson.Writer] // set by readsbOutputs (issue 21)
	mlat        *mlatstage.Stage                  // issue 31; made when fusion starts
}

func newService(cfg config, log *slog.Logger, out io.Writer) *service {
	s := &service{cfg: cfg, log: log, out: out, start: time.Now(), reg: newRegistry(), httpIn: ingest.NewHTTP()}
	s.status = lifecycle.NewStatus(s.reg)
	s.group = lifecycle.Group{Log: log, StopTimeout: time.Duration(cfg.ShutdownWait)}
	s.group.Add(s.components()...)
	return s
}

// components are the parts of the service in start order: what feeds a
// stage starts after it, so nothing is produced before its consumer runs,
// and on shutdown every stage drains into one that is still running.
//
//	listeners → data directory → bus → reference data, ledger, zones →
//	fusion (decoders, consumer, expiry, ownership) → gate → outputs →
//	inputs → HTTP
func (s *service) components() []lifecycle.Component {
	cs := []lifecycle.Component{
		{Name: "listeners", Start: s.bindListeners, Stop: s.closeListeners},
		{Name: "data directory", Start: s.lockDataDir, Stop: func(context.Context) error { return s.lock.Release() }},
		{Name: "bus", Start: s.startBus, Stop: func(ctx context.Context) error { removeNATSURL(s.cfg.DataDir); return s.bus.Close(ctx) }},
		s.diskWatch(), // issue 32: free-space watermarks
		{Name: "drone database", Start: s.loadDrones},
		{Name: "ledger", Start: s.openLedger, Stop: func(context.Context) error { return s.ledger.Close() }},
		{Name: "zones", Start: s.openZones, Stop: func(context.Context) error { return s.zones.Close() }},
	}
	cs = append(cs, s.fusionStages()...)
	cs = append(cs, s.integrityStage()) // issue 23: missing streams, consumers, buckets, ledger
	cs = append(cs, s.gateStage())
	cs = append(cs, s.outputs())
	cs = append(cs, s.sensorSync()) // issue 25: the sensor registry on NATS
	cs = append(cs, s.inputs())
	cs = append(cs, lifecycle.Component{Name: "http", Start: s.startHTTP, Run: s.serveHTTP})
	return cs
}

// lockDataDir creates the data directory and takes its lock: one cuasd per
// data directory, or two processes would write one ledger.
func (s *service) lockDataDir(context.Context) error {
	l, err := dirlock.Acquire(s.cfg.DataDir)
	if err != nil {
		return err
	}
	s.lock = l
	return nil
}

func (s *service) startBus(ctx context.Context) error {
	s.busOpts.OnOversize = s.oversizeCounter().Inc
	b, err := bus.Start(ctx, s.busOpts)
	if err != nil {
		return err
	}
	limits := bus.DefaultLimits()
	limits.RawMaxAge, limits.RawMaxBytes = time.Duration(s.cfg.RawMaxAge), int64(s.cfg.RawMaxBytes)
	limits.ObsMaxAge, limits.ObsMaxBytes = time.Duration(s.cfg.ObsMaxAge), int64(s.cfg.ObsMaxBytes)
	limits.Replicas = s.cfg.Replicas
	if err := b.EnsureStreams(ctx, limits); err != nil {
		_ = b.Close(context.WithoutCancel(ctx))
		return err
	}
	s.bus = b
	s.publisher = ingest.NewPublisher(b.JetStream(), s.reg)
	if err := writeNATSURL(s.cfg.DataDir, b.ClientURL()); err != nil {
		s.log.Warn("cannot record the NATS URL for cuasd replay and simulate", "err", err)
	}
	return nil
}

// oversizeCounter is cuasd_nats_oversize_refused_total, made and
// registered once however often the bus starts.
func (s *service) oversizeCounter() prometheus.Counter {
	if s.oversize == nil {
		s.oversize = prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cuasd_nats_oversize_refused_total",
			Help: "Client messages the embedded NATS server refused for exceeding bus.MaxMessageBytes (1 MiB); the client was disconnected.",
		})
		s.reg.MustRegister(s.oversize)
	}
	return s.oversize
}

func (s *service) loadDrones(context.Context) error {
	db, err := reference.Default()
	if err != nil {
		return fmt.Errorf("drone database: %w", err)
	}
	s.drones = db
	return nil
}

func (s *service) openLedger(ctx context.Context) error {
	l, err := ledger.Open(ctx, s.bus.JS, ledger.Options{
		Instance: s.cfg.Instance, DataDir: s.cfg.DataDir, SigningKeyFile: s.cfg.SigningKey,
		Unsigned: s.cfg.Unsigned, Logger: s.log, Replicas: s.cfg.Replicas, Registerer: s.reg,
		Setup: s.bus.Setup().Do, // waits for a forming cluster like the bus's streams
	})
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	s.ledger = l
	return nil
}

func (s *service) openZones(ctx context.Context) error {
	seed := s.cfg.Geofences
	if s.cfg.Demo && len(seed) == 0 {
		seed = demoGeofences()
	}
	zcfg := zones.Config{Replicas: s.cfg.Replicas, Geofences: seed, AllowList: s.cfg.AllowList, Logger: s.log,
		Reporter:   s.status.Reporter("zones watch", lifecycle.Stage), // issue 32: supervised
		VersionDir: filepath.Join(s.cfg.DataDir, "zone-versions"),     // issue 23: versions outlive the bucket
		Setup:      s.bus.Setup().Do}                                  // a forming cluster's new bucket
	kv, err := s.bus.JetStream().KeyValue(ctx, zones.BucketConfig(zcfg))
	if err != nil {
		return fmt.Errorf("zones: bucket: %w", err)
	}
	z, err := zones.Open(ctx, kv, zcfg)
	if err != nil {
		return fmt.Errorf("zones: %w", err)
	}
	s.zones = z
	return nil
}

// stage is a pipeline stage that restarts after a failure (for example
// while NATS reconnects), reporting its state; fn reports Up itself.
func (s *service) stage(name string, fn func(ctx context.Context, rep lifecycle.Reporter) error) lifecycle.Component {
	rep := s.status.Reporter(name, lifecycle.Stage)
	run := lifecycle.Retry(rep, 5*time.Second, func(ctx context.Context, rep lifecycle.Reporter) error {
		err := fn(ctx, rep)
		if err != nil && ctx.Err() == nil {
			s.log.Error("pipeline stage failed; restarting", "stage", name, "err", err)
		}
		return err
	})
	return lifecycle.Component{Name: name, Run: run}
}

// upThen reports up and runs fn: for stages that work as soon as they run.
func upThen(fn func(context.Context) error) func(context.Context, lifecycle.Reporter) error {
	return func(ctx context.Context, rep lifecycle.Reporter) error {
		rep.Up()
		return fn(ctx)
	}
}

// rawLimits are the decoders' per-sensor rate and byte limits on
// cuas.raw (issue 32; none by default).
func (s *service) rawLimits() ratelimit.Limits {
	return ratelimit.Limits{FramesPerSecond: s.cfg.RawSensorRate, BytesPerSecond: float64(s.cfg.RawSensorBytes)}
}

// fusionStages are the feed that decodes every raw frame in place into
// the track store, track expiry, partition ownership and, with
// --publish-observations, the shared decoder workers that publish
// observations for other consumers.
func (s *service) fusionStages() []lifecycle.Component {
	start := lifecycle.Component{Name: "fusion", Start: s.startFusion}
	metrics := worker.NewMetrics(s.reg)
	out := []lifecycle.Component{start}
	if s.cfg.PublishObs {
		for _, dec := range frameDecoders(s.cfg) {
			out = append(out, s.stage("decoder "+string(dec.Protocol()), upThen(func(ctx context.Context) error {
				return worker.NewWorker(s.bus.JetStream(), dec, metrics, s.log).WithLimits(s.rawLimits()).Run(ctx)
			})))
		}
	}
	var feed *worker.Feed // made once: a restart after a failure reuses it and its metrics
	out = append(out,
		s.stage("fusion feed", upThen(func(ctx context.Context) error {
			if feed == nil {
				fc := worker.FeedConfig{
					Decoders: frameDecoders(s.cfg), Apply: s.store.ApplyBatch,
					Replay: time.Duration(s.cfg.TrackTTL) + 5*time.Second, Metrics: metrics, Log: s.log,
					Limits: s.rawLimits(),
				}
				fc.Timed = offerTimed(s.mlat)
				fc.ModeS = &s.modeS
				feed = worker.NewFeed(s.bus.JetStream(), fc, s.reg)
			}
			return feed.Run(ctx)
		})),
		s.stage("fusion expiry", upThen(func(ctx context.Context) error {
			s.store.RunExpiry(ctx, time.Second, nil)
			return nil
		})),
		s.stage("fusion owners", upThen(func(ctx context.Context) error { return s.owners.Run(ctx) })),
		s.stage("mlat", upThen(func(ctx context.Context) error {
			return s.mlat.Run(ctx) // idle until a receiver is configured or reports its position
		})),
	)
	return out
}

// startFusion makes the track store, attaches the history to it, and
// opens partition ownership and the multilateration stage.
func (s *service) startFusion(ctx context.Context) error {
	s.store = fusion.NewStore(fusion.Config{TTL: time.Duration(s.cfg.TrackTTL)})
	s.reg.MustRegister(s.store.Collector())
	if h := s.historyRecorder(); h != nil {
		// Before any frame is decoded: every accepted fix reaches the
		// history, also those fused before the outputs run (issue 30).
		if _, err := h.AttachFixes(output.StoreFixes(s.store)); err != nil {
			return fmt.Errorf("history: %w", err)
		}
	}
	kv, err := s.bus.JetStream().KeyValue(ctx, fusion.OwnersBucketConfig(0, s.cfg.Replicas))
	if err != nil {
		return fmt.Errorf("fusion owners: %w", err)
	}
	owners, err := fusion.OpenOwners(ctx, kv, s.cfg.instance(), 0, s.log)
	if err != nil {
		return fmt.Errorf("fusion owners: %w", err)
	}
	s.owners = owners
	s.mlat = s.mlatStage() // issue 31
	return nil
}

// frameDecoders are the protocols the decoder stage decodes.
func frameDecoders(cfg config) []worker.FrameDecoder {
	mav, err := worker.NewMAVLink(cfg.mavlinkKey())
	if err != nil {
		panic(err) // the key length was validated with the configuration
	}
	return []worker.FrameDecoder{&worker.ADSB{Fix: cfg.ADSBFix}, worker.NewRemoteID(), mav, worker.NewDJI()}
}

// gateStage is the continuous gate: every live track against every zone.
func (s *service) gateStage() lifecycle.Component {
	c := s.stage("gate", upThen(func(ctx context.Context) error { return s.gate.Run(ctx) }))
	c.Start = func(context.Context) error {
		s.gate = board.New(board.Config{
			Owns:     s.owners.Owns,
			Store:    s.store,
			Zones:    s.zones.Snapshot,
			Classify: board.Classifier(s.drones),
			Ledger:   s.ledger,
			Interval: time.Duration(s.cfg.EvalInterval),
			Policy:   s.cfg.policy,
			Version:  version(),
			Events:   s.bus.Conn,
			Instance: s.cfg.instance(),
			Log:      s.log,
			// Stale while a store is below its low mark (issue 32).
			StaleWhile: s.storageLow,
		}, s.reg)
		return nil
	}
	return c
}

// outputs runs the consumers of the events (package output), built from
// the configuration by outputList once the bus is up. Like inputs, an
// output that fails leaves the service degraded, never stopped.
func (s *service) outputs() lifecycle.Component {
	return lifecycle.Component{Name: "outputs", Run: func(ctx context.Context) error {
		outs, err := s.outputList()
		if err != nil {
			return err
		}
		var wg sync.WaitGroup
		for _, o := range outs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.runOutput(ctx, o)
			}()
		}
		wg.Wait()
		return nil
	}}
}

// outputList builds the outputs the configuration asks for. Each output
// package adds its one line here.
func (s *service) outputList() ([]output.Output, error) {
	var outs []output.Output
	alerts, err := s.alertOutputs() // issue 19: rules, webhooks, MQTT
	if err != nil {
		return nil, err
	}
	outs = append(outs, alerts...)
	outs = append(outs, s.historyOutputs()...)
	outs = append(outs, s.cotSinks()...) // issue 18: --cot-udp, --tak-server
	outs, err = s.readsbOutputs(outs)    // issue 21: readsb JSON, SBS, Beast out
	return outs, err
}

// runOutput runs one output until ctx ends, restarting it after a failure
// with back-off; it reports its own state.
func (s *service) runOutput(ctx context.Context, o output.Output) {
	rep := s.status.Reporter(o.Name(), lifecycle.Output)
	ev := output.Conn(s.bus.Conn)
	if s.gate != nil {
		// The typed track events too (CoT), fusion's accepted fixes
		// (history) and the Mode S messages its feed decodes (SBS), issue 30.
		ev = output.InProcess(s.bus.Conn, s.gate, output.StoreFixes(s.store), &s.modeS)
	}
	_ = lifecycle.Retry(rep, 30*time.Second, func(ctx context.Context, rep lifecycle.Reporter) error {
		err := o.Run(ctx, ev, rep)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("output failed; retrying", "output", o.Name(), "err", err)
		}
		return err
	})(ctx)
}

// inputs runs the input sources bound by bindListeners (they are known
// only once the listeners component has started, hence one component for
// all of them): each reports its own state, and a source that fails leaves
// the service degraded rather than stopping it.
func (s *service) inputs() lifecycle.Component {
	return lifecycle.Component{Name: "inputs", Run: func(ctx context.Context) error {
		// The single-frame intake (cuas.in.>) is always on: it is how a
		// sensor script publishes one frame per message.
		// HTTP ingest is one too: requests reach the pipeline only while
		// the inputs run.
		intake := ingest.NewIntake(s.bus.Conn, s.log, s.reg)
		intake.Limits = &ingest.SensorLimits{FramesPerSecond: s.cfg.IntakeSensorRate, BytesPerSecond: float64(s.cfg.IntakeSensorBytes)}
		sources := append([]ingest.Source{intake, s.httpIn}, s.sources...)
		declareCounters(s.publisher, sources)
		registerKernelDrops(s.reg, sources)
		var wg sync.WaitGroup
		for _, src := range sources {
			// Registered before the goroutine runs, so that the HTTP
			// component sees every input as starting until it reports.
			rep := s.status.Reporter(src.Name(), lifecycle.Input)
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.runInput(ctx, src, rep)
			}()
		}
		wg.Wait()
		return nil
	}}
}

// runInput runs one source until ctx ends under the supervisor: one that
// fails is restarted with back-off (state restarting, counted) while the
// rest of the service goes on; one that finishes (a demo scenario or a
// replay that is over) stays finished.
func (s *service) runInput(ctx context.Context, src ingest.Source, rep lifecycle.Reporter) {
	_ = lifecycle.Retry(rep, 30*time.Second, func(ctx context.Context, rep lifecycle.Reporter) error {
		err := src.Run(ctx, s.publisher, rep)
		if err != nil && ctx.Err() == nil {
			s.log.Error("input failed; restarting", "input", src.Name(), "err", err)
			return err
		}
		<-ctx.Done()
		return nil
	})(ctx)
}

// natsDesc describes the bus for the start-up log.
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
