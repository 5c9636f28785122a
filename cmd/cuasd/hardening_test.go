package main

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/gate/board"
	"github.com/cuasd/cuasd/ledger"
	"github.com/cuasd/cuasd/lifecycle"
)

// TestReadinessDegradedWhenBoardStale: /readyz said ready while the board
// fell minutes behind (issue 23, item 5).
func TestReadinessDegradedWhenBoardStale(t *testing.T) {
	now := time.Now()
	b := board.New(board.Config{Store: fusion.NewStore(fusion.Config{TTL: time.Minute}), Now: func() time.Time { return now }}, nil)
	b.Sweep(context.Background())
	s := &service{gate: b, status: lifecycle.NewStatus(prometheus.NewRegistry())}
	if r := s.readiness(context.Background()); len(r.Degraded) != 0 {
		t.Fatalf("fresh board: degraded %v", r.Degraded)
	}
	now = now.Add(time.Minute)
	r := s.readiness(context.Background())
	if len(r.Degraded) != 1 || !strings.Contains(r.Degraded[0], "gate: the threat board is 1m0s old") {
		t.Errorf("stale board: degraded %q", r.Degraded)
	}
}

// waitFor polls cond every 100 ms until it holds or 30 s pass (a bound on
// a hang, not a timed assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("gave up waiting for %s", what)
}

// TestMissingJetStreamResources: with an admin credential, deleting the
// ledger's stream went unnoticed (/readyz stayed ready) and deleted
// pipeline streams, consumers and buckets stayed gone (issue 23, item 1).
// Now the ledger is reported (readyz, metric) and never recreated, and the
// others come back.
func TestMissingJetStreamResources(t *testing.T) {
	old := integrityInterval
	integrityInterval = 200 * time.Millisecond
	defer func() { integrityInterval = old }()
	users := filepath.Join(t.TempDir(), "users.yaml")
	if err := writeFile(users, "- user: ops\n  password: correct-horse-battery\n  role: admin\n"); err != nil {
		t.Fatal(err)
	}
	// --publish-observations: the decoders' durable consumers exist.
	base, url, stop := startServeNATS(t, "--nats-users", users, "--publish-observations")
	defer stop()
	root := strings.TrimSuffix(base, "/api/cuas")
	nc, err := nats.Connect(url, nats.UserInfo("ops", "correct-horse-battery"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := t.Context()
	if resp, body := get(t, base+"/readyz"); resp.StatusCode != 200 {
		t.Fatalf("before: %d %s", resp.StatusCode, body)
	}

	// Non-ledger resources are recreated.
	for _, del := range []struct {
		name string
		rm   func() error
		back func() error
	}{
		{"stream CUAS_DEAD", func() error { return js.DeleteStream(ctx, bus.StreamDead) },
			func() error { _, err := js.Stream(ctx, bus.StreamDead); return err }},
		{"consumer cuas-decode-adsb", func() error { return js.DeleteConsumer(ctx, bus.StreamRaw, "cuas-decode-adsb") },
			func() error { _, err := js.Consumer(ctx, bus.StreamRaw, "cuas-decode-adsb"); return err }},
		{"bucket CUAS_ZONES", func() error { return js.DeleteKeyValue(ctx, bus.BucketZones) },
			func() error { _, err := js.KeyValue(ctx, bus.BucketZones); return err }},
		{"bucket CUAS_FUSION_OWNERS", func() error { return js.DeleteKeyValue(ctx, fusion.OwnersBucket) },
			func() error { _, err := js.KeyValue(ctx, fusion.OwnersBucket); return err }},
	} {
		if err := del.rm(); err != nil {
			t.Fatalf("delete %s: %v", del.name, err)
		}
		waitFor(t, del.name+" to be recreated", func() bool { return del.back() == nil })
		waitFor(t, "the recreation of "+del.name+" to be counted", func() bool {
			_, m := get(t, root+"/metrics")
			return strings.Contains(string(m), `cuasd_jetstream_recreated_total{resource="`+del.name+`"} 1`)
		})
	}
	waitFor(t, "ready again", func() bool { resp, _ := get(t, base+"/readyz"); return resp.StatusCode == 200 })

	// The ledger is reported and stays gone.
	if err := js.DeleteStream(ctx, ledger.StreamName); err != nil {
		t.Fatal(err)
	}
	var body []byte
	waitFor(t, "/readyz to name the ledger", func() bool {
		var resp *http.Response
		resp, body = get(t, base+"/readyz")
		return resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(body), "CUAS_LEDGER is missing")
	})
	if _, m := get(t, root+"/metrics"); !strings.Contains(string(m), "cuasd_ledger_intact 0") {
		t.Error("cuasd_ledger_intact is not 0")
	}
	time.Sleep(5 * integrityInterval) // several repair rounds
	if _, err := js.Stream(ctx, ledger.StreamName); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Errorf("the ledger stream was recreated: %v", err)
	}
	if resp, _ := get(t, base+"/readyz"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("readyz %d after the ledger was deleted", resp.StatusCode)
	}
}

// TestSecondServeOnOneDataDir: two servers on one --data-dir both started
// and wrote duplicate receipt indexes (issue 23, item 2). The second now
// exits at once, naming the holder's pid, and the first keeps serving.
func TestSecondServeOnOneDataDir(t *testing.T) {
	dir := t.TempDir()
	base, stop := startServe(t, "--data-dir", dir)
	defer stop()
	// "serving" is printed before the last stages report up.
	waitFor(t, "the first server to be ready", func() bool { resp, _ := get(t, base+"/readyz"); return resp.StatusCode == 200 })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := run(ctx, []string{"serve", "--data-dir", dir, "--http-addr", "127.0.0.1:0", "--nats-listen", "off", "--log-level", "error"},
		func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second serve on one data directory: %v, want an error naming pid %d", err, os.Getpid())
	}
	if resp, body := get(t, base+"/readyz"); resp.StatusCode != 200 {
		t.Errorf("the first server after the second's attempt: %d %s", resp.StatusCode, body)
	}
}

// TestListenerInUseTouchesNoDataDir: an address in use is found before
// anything is created in the data directory (issue 23, item 2).
func TestListenerInUseTouchesNoDataDir(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := filepath.Join(t.TempDir(), "data")
	err = run(context.Background(), []string{"serve", "--data-dir", dir, "--http-addr", busy.Addr().String(), "--nats-listen", "off", "--log-level", "error"},
		func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--http-addr") {
		t.Fatalf("serve on a busy address: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the data directory was created although the listener could not bind: %v", err)
	}
}

// TestGarbageOnEveryListener sends 1 MB of random bytes to every listener
// of a running cuasd (HTTP, NATS, Beast, AVR over TCP; MAVLink over UDP),
// then a valid stream to each adapter (issue 23, also-check): the service
// stays ready, the valid frames become tracks, and the garbage the
// decoders saw is counted as rejected.
func TestGarbageOnEveryListener(t *testing.T) {
	base, lines, stop := startServeLines(t, "--beast-listen", "127.0.0.1:0", "--avr-listen", "127.0.0.1:0",
		"--mavlink-udp", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0", "--track-ttl", "10m")
	defer stop()
	addrs := map[string]string{}
	for _, l := range lines {
		if a, ok := strings.CutPrefix(l, "cuasd adapter "); ok {
			k, v, _ := strings.Cut(a, "=")
			addrs[k] = v
		}
		if u, ok := strings.CutPrefix(l, "cuasd nats nats://"); ok {
			addrs["nats"] = u
		}
	}
	root := strings.TrimSuffix(base, "/api/cuas")
	addrs["http"] = strings.TrimPrefix(root, "http://")
	garbage := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(13, 14))
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	for _, k := range []string{"http", "nats", "beast", "avr"} {
		if addrs[k] == "" {
			t.Fatalf("no %s address in %q", k, lines)
		}
		c, err := net.Dial("tcp", addrs[k])
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write(garbage) // a server may close the connection part way: that is its answer
		c.Close()
	}
	udp, err := net.Dial("udp", addrs["mavlink-udp"])
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	for off := 0; off < len(garbage); off += 1024 {
		_, _ = udp.Write(garbage[off : off+1024])
		if off%(32<<10) == 0 {
			time.Sleep(time.Millisecond)
		}
	}

	// Valid streams: 406B90 over Beast, 4840D6 over AVR, a MAVLink
	// vehicle over UDP (repeated: a random datagram may have begun a frame).
	beast, err := net.Dial("tcp", addrs["beast"])
	if err != nil {
		t.Fatal(err)
	}
	defer beast.Close()
	avr, err := net.Dial("tcp", addrs["avr"])
	if err != nil {
		t.Fatal(err)
	}
	defer avr.Close()
	id, _ := hex.DecodeString("8D406B902015A678D4D220AA4BDA")
	beastRec := append([]byte{0x1a, '3', 0, 0, 0, 0, 0, 1, 0x80}, id...)
	gpi, _ := hex.DecodeString("fd1c000075ffbe21000040e201004a52401c43f41705b8720700fc6200000b028aff0c0084692c9d")
	waitFor(t, "tracks from every adapter after the garbage", func() bool {
		_, _ = beast.Write(beastRec)
		_, _ = avr.Write([]byte("*8D4840D6202CC371C32CE0576098;\n"))
		_, _ = udp.Write(gpi)
		_, body := get(t, base+"/v1/tracks")
		s := string(body)
		return strings.Contains(s, `"adsb:406B90"`) && strings.Contains(s, `"adsb:4840D6"`) && strings.Contains(s, `"mav:`)
	})
	if resp, body := get(t, base+"/readyz"); resp.StatusCode != 200 {
		t.Errorf("readyz after the garbage: %d %s", resp.StatusCode, body)
	}
	_, m := get(t, root+"/metrics")
	if !strings.Contains(string(m), `cuasd_frames_rejected_total{protocol="adsb"`) {
		t.Error("no rejected ADS-B frames counted after 1 MB of garbage on the Beast listener")
	}
}

// TestNATSMonitor: --nats-monitor serves the embedded server's monitoring
// endpoints on loopback (nats-surveyor, the Prometheus NATS exporter), and
// refuses a non-loopback address without --insecure-open (issue 23,
// item 1; already on main, untested).
func TestNATSMonitor(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, stop := startServe(t, "--nats-monitor", addr)
	defer stop()
	resp, body := get(t, "http://"+addr+"/varz")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"jetstream"`) {
		t.Errorf("/varz: %d %.200s", resp.StatusCode, body)
	}
	err = run(context.Background(), []string{"serve", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0", "--nats-listen", "off",
		"--nats-monitor", "0.0.0.0:0", "--log-level", "error"}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "refusing to serve NATS monitoring") {
		t.Errorf("a non-loopback monitor without --insecure-open: %v", err)
	}
}

// TestUDPKernelDropsExported (issue 32, item 4): each UDP input's kernel
// drops (datagrams lost to a full receive buffer before cuasd reads them)
// are a metric; ingest.TestUDPKernelDrops checks the count itself.
func TestUDPKernelDropsExported(t *testing.T) {
	base, lines, stop := startServeLines(t, "--mavlink-udp", "127.0.0.1:0", "--json-udp", "127.0.0.1:0")
	defer stop()
	var udp []string
	for _, l := range lines {
		if a, ok := strings.CutPrefix(l, "cuasd adapter "); ok {
			k, v, _ := strings.Cut(a, "=")
			if k == "mavlink-udp" || k == "json-udp" {
				udp = append(udp, `cuasd_udp_kernel_drops_total{source="`+k+" "+v+`"} 0`)
			}
		}
	}
	if len(udp) != 2 {
		t.Fatalf("UDP adapters in %q", lines)
	}
	_, m := get(t, strings.TrimSuffix(base, "/api/cuas")+"/metrics")
	for _, want := range udp {
		if !strings.Contains(string(m), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
