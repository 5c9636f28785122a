package bus

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Error is the error type of package bus.
type Error struct {
	Op  string
	Err error
}

func (e *Error) Error() string { return "bus: " + e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Options configure Start.
type Options struct {
	// URL of an external NATS. Empty starts the embedded server.
	URL string
	// DataDir holds the embedded server's JetStream store (DataDir/jetstream).
	DataDir string
	// Listen is the embedded server's client listener for sensors
	// ("127.0.0.1:4222"); "off" or "" keeps it in-process only.
	Listen string
	// MaxMemory and MaxStore are the embedded JetStream's resource limits.
	MaxMemory int64
	MaxStore  int64
	// SyncInterval is how often the embedded JetStream fsyncs its files;
	// SyncAlways fsyncs every write. See docs/design/bus.md, "Durability".
	SyncInterval time.Duration
	SyncAlways   bool
	// ServerName names the embedded server (defaults to "cuasd").
	ServerName string
	// ConnectName is the NATS connection name, shown in monitoring.
	ConnectName string
	// NATSOptions are extra client options of the connection to an
	// external NATS (credentials, TLS).
	NATSOptions []nats.Option
	// Users are the credentials of the embedded server's client listener
	// (--nats-users); none means clients without credentials are anonymous
	// (see Permissions).
	Users []User
	// TLS, when set, makes the embedded client listener TLS-only.
	TLS *tls.Config
	// MonitorAddr, when set, serves nats-server's HTTP monitoring endpoints
	// (for nats-surveyor and the Prometheus NATS exporter) on this address.
	MonitorAddr string
	// MaxConns bounds the client connections of the embedded listener
	// (DefaultMaxConns when 0); nats-server's own default is 65,536.
	MaxConns int
	// OnOversize is called for every client message the embedded server
	// refuses for being over MaxMessageBytes (a client that ignored the
	// limit it was told; nats.go clients refuse such a publish themselves).
	OnOversize func()
	// SetupTimeout bounds how long start-up retries one stream or bucket
	// that a forming or recovering cluster cannot place yet (Setup;
	// DefaultSetupTimeout when 0).
	SetupTimeout time.Duration
	Logger       *slog.Logger
}

// DefaultMaxConns is the embedded NATS listener's connection limit (issue
// 23): receivers and event consumers of one site are tens, and a local
// process opening idle connections by the thousand is refused past it
// ("maximum connections exceeded") instead of holding memory and
// goroutines for each. Like ingest.DefaultMaxConns, one limit a listener.
const DefaultMaxConns = 1024

// Bus is a live connection to NATS with JetStream, and the embedded server
// when there is one.
type Bus struct {
	Conn   *nats.Conn
	JS     jetstream.JetStream
	srv    *server.Server
	log    *slog.Logger
	limits Limits
	setup  Setup
	// jsCfg is the embedded JetStream's configuration at start, for
	// RestartJetStream when the server has disabled JetStream.
	jsCfg server.JetStreamConfig
}

// Start starts the embedded server (unless o.URL is set) and connects.
func Start(ctx context.Context, o Options) (*Bus, error) {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	b := &Bus{log: log, setup: Setup{Timeout: o.SetupTimeout, Log: log}}
	copts := append([]nats.Option{
		nats.Name(o.ConnectName),
		// Replies to cuasd (acks, consumer deliveries, KV and API answers)
		// go where no sensor or reader may subscribe (see Permissions).
		nats.CustomInboxPrefix(InternalInboxPrefix),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("nats reconnected", "url", c.ConnectedUrlRedacted()) }),
	}, o.NATSOptions...)

	url := o.URL
	if url == "" {
		srv, internal, err := startEmbedded(&o)
		if err != nil {
			return nil, err
		}
		copts = append(copts, internal...)
		b.srv, b.jsCfg = srv, jetStreamConfig(srv)
		// In-process connection: no TCP, no loopback port needed.
		copts = append(copts, nats.InProcessServer(srv))
		url = srv.ClientURL()
		if !Listens(o.Listen) {
			url = ""
		}
	}
	nc, err := nats.Connect(url, copts...)
	if err != nil {
		b.shutdownServer()
		return nil, &Error{"connect", err}
	}
	// A decoder worker publishes up to a fetched batch times the partitions
	// before it waits for acknowledgements.
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(65536), jetstream.WithPublishAsyncTimeout(AsyncAckTimeout))
	if err != nil {
		nc.Close()
		b.shutdownServer()
		return nil, &Error{"jetstream", err}
	}
	b.Conn, b.JS = nc, js
	if b.srv != nil {
		log.Info("embedded nats-server started", "jetstream_dir", filepath.Join(o.DataDir, "jetstream"),
			"client_listener", listenDesc(o.Listen))
	} else {
		log.Info("connected to external NATS", "url", nc.ConnectedUrlRedacted())
	}
	return b, nil
}

// AsyncAckTimeout is how long an asynchronous publish waits for its
// acknowledgement before it fails and frees its place among the publishes
// in flight. Without it, publishes the server never answers (a stream
// stuck on a write error, a stalled server) stay in flight for ever, and
// once 65,536 are, every later publish is refused as back-pressure, long
// after the server recovered (issue 32).
const AsyncAckTimeout = 30 * time.Second

// Listens reports whether a listen address (Options.Listen, --nats-listen)
// asks the embedded server for a client listener ("" and "off" do not).
func Listens(l string) bool { return l != "" && l != "off" }

func listenDesc(l string) string {
	if !Listens(l) {
		return "off (in-process only)"
	}
	return l
}

func startEmbedded(o *Options) (*server.Server, []nats.Option, error) {
	so := &server.Options{
		ServerName:         o.ServerName,
		JetStream:          true,
		StoreDir:           filepath.Join(o.DataDir, "jetstream"),
		JetStreamMaxMemory: o.MaxMemory,
		JetStreamMaxStore:  o.MaxStore,
		SyncInterval:       o.SyncInterval,
		SyncAlways:         o.SyncAlways,
		// The process owns its signals; the embedded server must never
		// exit the process on its own.
		NoSigs:     true,
		NoLog:      true,
		MaxPayload: MaxMessageBytes,
		MaxConn:    cmp.Or(o.MaxConns, DefaultMaxConns),
	}
	if so.ServerName == "" {
		so.ServerName = "cuasd"
	}
	if !Listens(o.Listen) {
		so.DontListen = true
	} else {
		host, p, err := splitPort(o.Listen, "nats-listen")
		if err != nil {
			return nil, nil, err
		}
		so.Host, so.Port = host, p
	}
	if o.MonitorAddr != "" {
		host, p, err := splitPort(o.MonitorAddr, "nats-monitor")
		if err != nil {
			return nil, nil, err
		}
		so.HTTPHost, so.HTTPPort = host, p
	}
	internal, err := applySecurity(so, o)
	if err != nil {
		return nil, nil, &Error{"embedded server", err}
	}
	srv, err := server.NewServer(so)
	if err != nil {
		return nil, nil, &Error{"embedded server", err}
	}
	srv.SetLoggerV2(serverLog{log: cmp.Or(o.Logger, slog.Default()), onOversize: o.OnOversize}, false, false, false)
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, nil, &Error{"embedded server", errors.New("not ready for connections within 10s")}
	}
	if o.Logger != nil {
		o.Logger.Info("embedded NATS users", "users", describeUsers(o.Users), "tls", o.TLS != nil)
	}
	return srv, internal, nil
}

// splitPort parses a HOST:PORT listen address; port 0 picks a free port.
func splitPort(addr, flag string) (string, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, &Error{flag, fmt.Errorf("%q: %w", addr, err)}
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return "", 0, &Error{flag, fmt.Errorf("%q: bad port", addr)}
	}
	if p == 0 {
		p = server.RANDOM_PORT
	}
	return host, p, nil
}

// RestartJetStream stops the embedded server's JetStream and starts it
// again from its store (issue 32). A stream whose file store hit a write
// error (ENOSPC on a full disk) keeps refusing every write until it is
// reopened; the server never reopens it by itself, and it disables
// JetStream altogether on some out-of-space paths. The connection then
// reconnects, so that every consumer pulls again at once: durable ones
// from the store, ordered ones recreated.
func (b *Bus) RestartJetStream() error {
	if b.srv == nil {
		return &Error{"jetstream restart", errors.New("the bus is external: restart its nats-server")}
	}
	cfg := b.jsCfg
	if c := b.srv.JetStreamConfig(); c != nil {
		cfg = *c
	}
	if err := b.srv.ShutdownJetStream(); err != nil {
		return &Error{"jetstream restart", err}
	}
	// EnableJetStream adds the jetstream directory to StoreDir itself.
	cfg.StoreDir = filepath.Dir(cfg.StoreDir)
	if err := b.srv.EnableJetStream(&cfg); err != nil {
		return &Error{"jetstream restart", err}
	}
	// The pull requests and ordered consumers the old JetStream held are
	// gone: a reconnect makes every consumer pull again (and every ordered
	// one recreate itself) at once instead of after its missed heartbeats.
	if err := b.Conn.ForceReconnect(); err != nil {
		return &Error{"jetstream restart: reconnect", err}
	}
	return nil
}

// jetStreamConfig is srv's JetStream configuration (zero when disabled).
func jetStreamConfig(srv *server.Server) server.JetStreamConfig {
	if c := srv.JetStreamConfig(); c != nil {
		return *c
	}
	return server.JetStreamConfig{}
}

// Embedded reports whether the bus runs its own nats-server.
func (b *Bus) Embedded() bool { return b.srv != nil }

// ClientURL is the embedded server's client URL for sensors ("" when it
// does not listen or the bus is external).
func (b *Bus) ClientURL() string {
	if b.srv == nil || b.srv.Addr() == nil {
		return ""
	}
	return b.srv.ClientURL()
}

// Setup is how the bus creates streams and buckets at start-up: retrying
// while the cluster forms (Options.SetupTimeout).
func (b *Bus) Setup() Setup { return b.setup }

// EnsureStreams creates or updates the pipeline's streams with limits l,
// waiting through Setup for a cluster that cannot place them yet.
func (b *Bus) EnsureStreams(ctx context.Context, l Limits) error {
	b.limits = l
	for _, cfg := range StreamConfigs(l) {
		err := b.setup.Do(ctx, "stream "+cfg.Name, func(ctx context.Context) error {
			_, err := b.JS.CreateOrUpdateStream(ctx, cfg)
			return err
		})
		if err != nil {
			return &Error{"stream " + cfg.Name, err}
		}
	}
	return nil
}

// MissingStreams names the pipeline streams that do not exist (deleted by
// an administrator, or lost with the server's store).
func (b *Bus) MissingStreams(ctx context.Context) ([]string, error) {
	var out []string
	for _, cfg := range StreamConfigs(b.limits) {
		_, err := b.JS.Stream(ctx, cfg.Name)
		switch {
		case errors.Is(err, jetstream.ErrStreamNotFound):
			out = append(out, cfg.Name)
		case err != nil:
			return out, &Error{"stream " + cfg.Name, err}
		}
	}
	return out, nil
}

// RecreateStream creates the pipeline stream name again with the limits
// of EnsureStreams. The ledger's stream is not a pipeline stream: it is
// never recreated (package ledger reports it missing instead).
func (b *Bus) RecreateStream(ctx context.Context, name string) error {
	for _, cfg := range StreamConfigs(b.limits) {
		if cfg.Name == name {
			if _, err := b.JS.CreateOrUpdateStream(ctx, cfg); err != nil {
				return &Error{"recreate stream " + name, err}
			}
			return nil
		}
	}
	return &Error{"recreate stream " + name, errors.New("not a pipeline stream")}
}

// StreamConfigs are the configurations of the pipeline's streams.
//
// CUAS_RAW and CUAS_OBS discard *new* messages when full: a publisher then
// gets an error and the HTTP/TCP adapters push back, instead of JetStream
// silently dropping old frames that a decoder has not yet consumed — that
// would lose frames the service had already acknowledged.
func StreamConfigs(l Limits) []jetstream.StreamConfig {
	r := max(l.Replicas, 1)
	return []jetstream.StreamConfig{
		{
			Name:        StreamRaw,
			Description: "Raw frames from receivers, replayable (cuas.raw.{protocol}.{sensor}).",
			Subjects:    []string{RawPrefix + ".>"},
			Storage:     jetstream.FileStorage,
			Retention:   jetstream.LimitsPolicy,
			Discard:     jetstream.DiscardNew,
			MaxAge:      l.RawMaxAge,
			MaxBytes:    l.RawMaxBytes,
			MaxMsgSize:  MaxMessageBytes,
			Duplicates:  l.DuplicateWindow,
			Replicas:    r,
		},
		{
			Name:        StreamObs,
			Description: "Normalised observations, batched per track-key partition (cuas.obs.{protocol}.pNN); fusion rebuilds from it.",
			Subjects:    []string{ObsPrefix + ".>"},
			Storage:     jetstream.FileStorage,
			Retention:   jetstream.LimitsPolicy,
			Discard:     jetstream.DiscardNew,
			MaxAge:      l.ObsMaxAge,
			MaxBytes:    l.ObsMaxBytes,
			MaxMsgSize:  MaxMessageBytes,
			Duplicates:  l.DuplicateWindow,
			Replicas:    r,
		},
		{
			Name:        StreamDead,
			Description: "Frames that failed to decode, with the reason in the Cuas-Reason header.",
			Subjects:    []string{DeadPrefix + ".>"},
			Storage:     jetstream.FileStorage,
			Retention:   jetstream.LimitsPolicy,
			Discard:     jetstream.DiscardOld,
			MaxAge:      l.DeadMaxAge,
			MaxBytes:    l.DeadMaxBytes,
			MaxMsgSize:  MaxMessageBytes,
			Duplicates:  deadDuplicates(l),
			Replicas:    r,
		},
	}
}

// deadDuplicates is CUAS_DEAD's de-duplication window: an hour (within the
// stream's age). Every instance decodes every raw frame, and on a restart
// replays the last track TTL of them, so each dead letter is published
// several times under one id; dead letters are rare, so remembering their
// ids for an hour is cheap, and it covers any track TTL up to an hour.
func deadDuplicates(l Limits) time.Duration {
	d := time.Hour
	if l.DeadMaxAge > 0 && l.DeadMaxAge < d {
		d = l.DeadMaxAge
	}
	return d
}

// Ready returns why the bus is not ready (empty when it is): the connection
// must be up and every stream must exist.
func (b *Bus) Ready(ctx context.Context) []string {
	if b == nil || b.Conn == nil {
		return []string{"nats: not started"}
	}
	if !b.Conn.IsConnected() {
		return []string{"nats: not connected (" + b.Conn.Status().String() + ")"}
	}
	var reasons []string
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for _, cfg := range StreamConfigs(b.limits) {
		if _, err := b.JS.Stream(ctx, cfg.Name); err != nil {
			reasons = append(reasons, "jetstream: stream "+cfg.Name+": "+err.Error())
		}
	}
	return reasons
}

// Close drains the connection (flushing what was published) and shuts the
// embedded server down, which syncs JetStream's files to disk.
func (b *Bus) Close(ctx context.Context) error {
	var err error
	if b.Conn != nil && !b.Conn.IsClosed() {
		done := make(chan struct{})
		b.Conn.SetClosedHandler(func(*nats.Conn) { close(done) })
		if derr := b.Conn.Drain(); derr != nil {
			b.Conn.Close()
		} else {
			select {
			case <-done:
			case <-ctx.Done():
				b.Conn.Close()
				err = ctx.Err()
			}
		}
	}
	b.shutdownServer()
	return err
}

func (b *Bus) shutdownServer() {
	if b.srv != nil {
		b.srv.Shutdown()
		b.srv.WaitForShutdown()
	}
}
