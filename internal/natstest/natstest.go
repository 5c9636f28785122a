// Package natstest starts an embedded nats-server with JetStream for tests:
// the one helper every test that needs NATS uses, so that no test hand-makes
// a server. The server listens on a free loopback port as well, so that a
// second process (a `cuasd` under test, a Python publisher, the nats CLI)
// can connect to URL.
package natstest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/bus"
)

// Server is a running test server and an in-process client connection.
type Server struct {
	Srv  *server.Server
	Conn *nats.Conn
	JS   jetstream.JetStream
	// URL is the server's loopback client URL.
	URL string

	stop sync.Once
}

// Option changes the server's options before it starts.
type Option func(*server.Options)

// InDir stores JetStream under dir instead of a fresh temporary directory,
// so that a test can stop a server and start another on the same data.
func InDir(dir string) Option { return func(o *server.Options) { o.StoreDir = dir } }

// SyncAlways fsyncs every stored message before its acknowledgement, as a
// production deployment that must survive a power cut runs.
func SyncAlways() Option { return func(o *server.Options) { o.SyncAlways = true } }

// Start starts a JetStream server in a fresh temporary directory, stopped
// when the test ends.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	so := &server.Options{
		JetStream: true, StoreDir: tb.TempDir(), Host: "127.0.0.1", Port: server.RANDOM_PORT,
		NoSigs: true, NoLog: true, MaxPayload: bus.MaxMessageBytes, // as production (bus.New)
	}
	for _, o := range opts {
		o(so)
	}
	srv, err := server.NewServer(so)
	if err != nil {
		tb.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		tb.Fatal("natstest: server not ready within 10s")
	}
	nc, err := nats.Connect("", nats.InProcessServer(srv))
	if err != nil {
		srv.Shutdown()
		tb.Fatal(err)
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(65536))
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{Srv: srv, Conn: nc, JS: js, URL: srv.ClientURL()}
	tb.Cleanup(s.Stop)
	return s
}

// Stop closes the in-process connection and shuts the server down, waiting
// until it has; it is idempotent and also runs when the test ends.
func (s *Server) Stop() {
	s.stop.Do(func() {
		s.Conn.Close()
		s.Srv.Shutdown()
		s.Srv.WaitForShutdown()
	})
}

// StartWithStreams starts a server and creates the pipeline's streams with
// limits l.
func StartWithStreams(tb testing.TB, l bus.Limits, opts ...Option) *Server {
	tb.Helper()
	s := Start(tb, opts...)
	for _, cfg := range bus.StreamConfigs(l) {
		if _, err := s.JS.CreateOrUpdateStream(context.Background(), cfg); err != nil {
			tb.Fatal(err)
		}
	}
	return s
}

// Connect opens another client connection to the server, closed when the
// test ends (a separate connection behaves like a separate process).
func (s *Server) Connect(tb testing.TB, opts ...nats.Option) *nats.Conn {
	tb.Helper()
	nc, err := nats.Connect(s.URL, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	return nc
}

// JetStream is the server's in-process client as bus's JetStream handle,
// which implements the small interfaces the packages under test declare.
func (s *Server) JetStream() *bus.JetStream { return bus.NewJetStream(s.JS) }
