// Package natstest starts an embedded nats-server with JetStream for tests:
// the one helper every test that needs NATS uses, so that no test hand-makes
// a server. The server listens on a free loopback port as well, so that a
// second process (a `cuasd` under test, a Python publisher, the nats CLI)
// can connect to URL.
package natstest

import (
	"context"
	"fmt"
	"net"
	"strings"
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
	srv := launch(tb, opts...)
	return connect(tb, srv)
}

// launch starts a server without waiting for it.
func launch(tb testing.TB, opts ...Option) *server.Server {
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
	return srv
}

// connect waits until srv takes connections and connects in process.
func connect(tb testing.TB, srv *server.Server) *Server {
	tb.Helper()
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

// StartCluster starts n JetStream servers (n1, n2, …) as one cluster,
// routed on loopback, and returns once the JetStream meta group has a
// leader. Each Server's in-process client is its own; a client that must
// outlive a server it is not on connects to URL (Connect). Stop one to
// take that server out of the cluster.
func StartCluster(tb testing.TB, n int) []*Server {
	tb.Helper()
	ports := make([]int, n)
	var routes []string
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		l.Close()
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[i]))
	}
	// All are started before any is waited for: a server of a cluster
	// takes connections only once it has heard from the others.
	var srvs []*server.Server
	for i := range n {
		srvs = append(srvs, launch(tb, func(o *server.Options) {
			o.ServerName = fmt.Sprintf("n%d", i+1)
			o.Cluster = server.ClusterOpts{Name: "natstest", Host: "127.0.0.1", Port: ports[i]}
			o.Routes = server.RoutesFromStr(strings.Join(routes, ","))
		}))
	}
	var nodes []*Server
	for _, srv := range srvs {
		nodes = append(nodes, connect(tb, srv))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		actx, acancel := context.WithTimeout(ctx, time.Second)
		_, err := nodes[0].JS.AccountInfo(actx)
		acancel()
		if err == nil && routed(nodes) {
			return nodes
		}
		select {
		case <-ctx.Done():
			tb.Fatalf("natstest: the cluster of %d has no JetStream meta leader within 30s", n)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// routed reports whether every server has a route to every other.
func routed(nodes []*Server) bool {
	for _, s := range nodes {
		if s.Srv.NumRoutes() < len(nodes)-1 {
			return false
		}
	}
	return true
}

// ConsumerHost names the server holding the newest ephemeral consumer of
// stream (an ordered consumer: one replica, on one server of a cluster),
// "" while there is none or it has no leader yet. Consumers an ordered
// consumer left behind stay until their inactivity threshold, hence the
// newest.
func ConsumerHost(ctx context.Context, js jetstream.JetStream, stream string) (string, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return "", err
	}
	var newest *jetstream.ConsumerInfo
	l := s.ListConsumers(ctx)
	for ci := range l.Info() {
		if ci.Config.Durable == "" && (newest == nil || ci.Created.After(newest.Created)) {
			newest = ci
		}
	}
	if err := l.Err(); err != nil {
		return "", err
	}
	if newest == nil || newest.Cluster == nil {
		return "", nil
	}
	return newest.Cluster.Leader, nil
}
