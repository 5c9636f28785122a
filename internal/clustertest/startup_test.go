package clustertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/ledger"
)

// retryLine is what cuasd logs for each retry of a stream or bucket the
// cluster cannot place yet (bus.Setup.Do).
const retryLine = "JetStream cannot create it yet"

// cuasd started against a three-node cluster that is still forming, or
// recovering, must wait, not give up, and then serve with every stream
// and bucket at three replicas. Forming, one node up: nothing answers
// (there is no meta leader; a new cluster elects none before all three
// met). Recovering, a formed cluster restarted with one node late: the
// meta leader answers, and refuses three replicas while it has not heard
// from the third node ("no suitable peers for placement, peer offline"):
// the fault suite's cluster case stopped at start-up on that, for the
// owners bucket, when a node of a just formed cluster had not yet
// reported.
func TestStartOnFormingCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three nats-servers and a cuasd, twice (about 30 s); not with -short")
	}
	t.Run("forming, 1 of 3 up", func(t *testing.T) { startOnIncompleteCluster(t, false) })
	t.Run("recovering, 1 of 3 down", func(t *testing.T) { startOnIncompleteCluster(t, true) })
}

// startOnIncompleteCluster starts one node of three (recovering: all
// three, stops them, starts two), then cuasd, then the missing nodes once
// cuasd says it retries, and checks the replicas.
func startOnIncompleteCluster(t *testing.T, recovering bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	nodes := natsClusterConfigs(t, dir, 3)
	missing := nodes[1:]
	if recovering {
		// A formed cluster, all stopped, two back: they elect a meta
		// leader, which has not heard from the third since it started.
		startNATSCluster(ctx, t, dir, nodes)
		for _, nd := range nodes {
			nd.p.stop(10 * time.Second)
		}
		startNATSCluster(ctx, t, dir, nodes[:2])
		missing = nodes[2:]
	} else {
		startNATSNode(t, dir, nodes[0])
		// cuasd's first connection must find it (a cuasd that finds no
		// server at all exits: that is not what this tests).
		nc, _ := connect(t, clientURLs(nodes[:1]))
		waitConnected(ctx, t, nc)
		nc.Close()
	}
	cuasd := startProc(t, dir, "cuasd", cuasdBinary(t), "serve", "--nats-url", clientURLs(nodes),
		"--replicas", "3", "--instance", "forming", "--nats-listen", "off", "--http-addr", "127.0.0.1:0",
		"--data-dir", filepath.Join(dir, "data"))
	// The other nodes start only once cuasd has met the incomplete
	// cluster and said it retries: no sleep decides the order.
	if err := waitLogged(ctx, cuasd, retryLine); err != nil {
		t.Fatalf("cuasd did not wait for the forming cluster: %v\n%s", err, tail(cuasd.logPath, 30))
	}
	for _, nd := range missing {
		startNATSNode(t, dir, nd)
	}
	u, err := cuasd.waitLine(ctx, "cuasd serving ")
	if err != nil {
		t.Fatalf("%v\n%s", err, tail(cuasd.logPath, 30))
	}
	if err := waitReady(ctx, strings.TrimSuffix(u, "/")+"/readyz"); err != nil {
		t.Fatalf("not ready: %v\n%s", err, tail(cuasd.logPath, 30))
	}
	nc, js := connect(t, clientURLs(nodes))
	defer nc.Close()
	ledgerStream, _ := ledger.StreamFor("forming")
	names := []string{ledgerStream, "KV_" + fusion.OwnersBucket, "KV_" + bus.BucketZones}
	for _, cfg := range bus.StreamConfigs(bus.DefaultLimits()) {
		names = append(names, cfg.Name)
	}
	for _, name := range names {
		checkReplicas(ctx, t, js, name, 3)
	}
	retries := grepFile(cuasd.logPath, retryLine)
	t.Logf("cuasd's retries while the cluster formed:\n%s", retries)
	if recovering && !strings.Contains(retries, "no suitable peers for placement") {
		t.Errorf("with a meta leader and a peer down, the refusal was not 'no suitable peers for placement'")
	}
}

// checkReplicas checks that stream name exists with want replicas.
func checkReplicas(ctx context.Context, t *testing.T, js jetstream.JetStream, name string, want int) {
	t.Helper()
	st, err := js.Stream(ctx, name)
	if err != nil {
		t.Errorf("stream %s: %v", name, err)
		return
	}
	if got := st.CachedInfo().Config.Replicas; got != want {
		t.Errorf("stream %s has %d replicas, want %d", name, got, want)
	}
}

// A refusal no waiting can cure still fails the start at once: three
// replicas on a nats-server that is not clustered. cuasd exits with the
// server's reason and without a retry.
func TestStartFailsAtOnceOnPermanentRefusal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	ports := freePorts(t, 1)
	conf := filepath.Join(dir, "single.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("listen: \"127.0.0.1:%d\"\njetstream { store_dir: %q }\n",
		ports[0], filepath.Join(dir, "js"))), 0o600); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("nats://127.0.0.1:%d", ports[0])
	startProc(t, dir, "nats-server", natsServerBinary(t), "-c", conf)
	nc, _ := connect(t, url) // RetryOnFailedConnect: connects once the server listens
	waitConnected(ctx, t, nc)
	nc.Close()
	cuasd := startProc(t, dir, "cuasd", cuasdBinary(t), "serve", "--nats-url", url, "--replicas", "3",
		"--nats-listen", "off", "--http-addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"))
	select {
	case <-cuasd.done:
	case <-ctx.Done():
		t.Fatalf("cuasd did not stop on a permanent refusal\n%s", tail(cuasd.logPath, 30))
	}
	var exit interface{ ExitCode() int }
	if !errors.As(cuasd.err, &exit) || exit.ExitCode() == 0 {
		t.Errorf("cuasd exited with %v, want a failure", cuasd.err)
	}
	b, _ := os.ReadFile(cuasd.logPath)
	if !strings.Contains(string(b), "replicas > 1 not supported in non-clustered mode") {
		t.Errorf("cuasd's log does not give the server's reason:\n%s", tail(cuasd.logPath, 30))
	}
	if n := strings.Count(string(b), retryLine); n != 0 {
		t.Errorf("cuasd retried a permanent refusal %d times:\n%s", n, tail(cuasd.logPath, 30))
	}
}

// waitConnected waits until nc is connected.
func waitConnected(ctx context.Context, t *testing.T, nc interface{ IsConnected() bool }) {
	t.Helper()
	for !nc.IsConnected() {
		select {
		case <-ctx.Done():
			t.Fatal("the nats-server did not accept a connection")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitLogged waits until p's log holds s; it fails when p exits first.
func waitLogged(ctx context.Context, p *proc, s string) error {
	for {
		if b, _ := os.ReadFile(p.logPath); strings.Contains(string(b), s) {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited (%v) before logging %q", p.name, p.err, s)
		case <-ctx.Done():
			return fmt.Errorf("%s did not log %q: %w", p.name, s, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// grepFile returns the lines of path that hold s.
func grepFile(path, s string) string {
	b, _ := os.ReadFile(path)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
