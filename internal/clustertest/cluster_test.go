package clustertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/worker"
)

// clusterEnv enables TestClusterFaults (make test-cluster sets it).
const clusterEnv = "CUAS_CLUSTER_TEST"

// Timeline of the fault scenario, from the first frame sent.
const (
	streamFor    = 20 * time.Second
	killNATSAt   = 6 * time.Second
	killCuasdAt  = 12 * time.Second
	retryFor     = 20 * time.Second // how long one frame is retried
	scenarioTime = 3 * time.Minute  // the whole test after the builds
)

// natsNode is one nats-server of the test cluster.
type natsNode struct {
	name        string
	clientPort  int
	monitorPort int
	conf        string // its configuration file
	p           *proc
}

// newNATSCluster writes a configuration for each of n nats-servers with
// JetStream (file store in dir) and full-mesh cluster routes on loopback,
// starts them, and returns once the JetStream meta group answers.
func newNATSCluster(ctx context.Context, t *testing.T, dir string, n int) []*natsNode {
	t.Helper()
	nodes := natsClusterConfigs(t, dir, n)
	startNATSCluster(ctx, t, dir, nodes)
	return nodes
}

// startNATSCluster starts the nodes and returns once the JetStream meta
// group answers.
func startNATSCluster(ctx context.Context, t *testing.T, dir string, nodes []*natsNode) {
	t.Helper()
	for _, nd := range nodes {
		startNATSNode(t, dir, nd)
	}
	waitNATSCluster(ctx, t, nodes)
}

// natsClusterConfigs writes the configuration of each of n nats-servers
// of one cluster (JetStream, full-mesh routes on loopback) without
// starting any.
func natsClusterConfigs(t *testing.T, dir string, n int) []*natsNode {
	t.Helper()
	ports := freePorts(t, 3*n) // client, route and monitoring port of each
	var routes []string
	for i := range n {
		routes = append(routes, fmt.Sprintf("%q", fmt.Sprintf("nats-route://127.0.0.1:%d", ports[n+i])))
	}
	var nodes []*natsNode
	for i := range n {
		name := fmt.Sprintf("n%d", i+1)
		conf := fmt.Sprintf(`server_name: %q
listen: "127.0.0.1:%d"
http: "127.0.0.1:%d"
jetstream {
  store_dir: %q
  max_memory_store: 256MB
  max_file_store: 8GB
}
cluster {
  name: "cuasd-clustertest"
  listen: "127.0.0.1:%d"
  routes: [%s]
}
`, name, ports[i], ports[2*n+i], filepath.Join(dir, name, "jetstream"), ports[n+i], strings.Join(routes, ", "))
		cf := filepath.Join(dir, name+".conf")
		if err := os.WriteFile(cf, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, &natsNode{name: name, clientPort: ports[i], monitorPort: ports[2*n+i], conf: cf})
	}
	return nodes
}

// startNATSNode starts the nats-server of nd's configuration.
func startNATSNode(t *testing.T, dir string, nd *natsNode) {
	t.Helper()
	nd.p = startProc(t, dir, nd.name, natsServerBinary(t), "-c", nd.conf)
}

// waitNATSCluster returns once every node is healthy and the JetStream
// meta group answers.
func waitNATSCluster(ctx context.Context, t *testing.T, nodes []*natsNode) {
	t.Helper()
	// /healthz answers 200 only once the node is routed and knows the
	// JetStream meta leader; a JetStream API request before that can hang.
	wctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	for _, nd := range nodes {
		if err := waitReady(wctx, fmt.Sprintf("http://127.0.0.1:%d/healthz", nd.monitorPort)); err != nil {
			t.Fatalf("nats-server %s is not healthy: %v", nd.name, err)
		}
	}
	nc, js := connect(t, clientURLs(nodes))
	defer nc.Close()
	for {
		actx, acancel := context.WithTimeout(wctx, 2*time.Second)
		_, err := js.AccountInfo(actx)
		acancel()
		if err == nil {
			return
		}
		if wctx.Err() != nil {
			t.Fatalf("the JetStream cluster did not form: %v", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func clientURLs(nodes []*natsNode) string {
	var u []string
	for _, n := range nodes {
		u = append(u, fmt.Sprintf("nats://127.0.0.1:%d", n.clientPort))
	}
	return strings.Join(u, ",")
}

func connect(t *testing.T, urls string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(urls, nats.MaxReconnects(-1), nats.ReconnectWait(200*time.Millisecond),
		nats.RetryOnFailedConnect(true), nats.Name("clustertest"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// instance is one cuasd under test.
type instance struct {
	name  string
	base  string
	p     *proc
	dir   string
	alive atomic.Bool
}

// sentFrame is one frame of the stream: its identity is (sensor, recv,
// bytes), which is also what cuasd de-duplicates on, so a retry on either
// instance is the same frame.
type sentFrame struct {
	f      *bulkFrame
	sensor string
	recv   int64
	pref   int
	acked  atomic.Bool
	tries  atomic.Int32
	by     atomic.Value // name of the instance that answered 202
}

// emitted is a receipt an instance acknowledged with 201.
type emitted struct {
	Index    uint64 `json:"index"`
	LeafHash string `json:"leaf_hash"`
	TreeSize uint64 `json:"tree_size"`
	raw      []byte
}

func TestClusterFaults(t *testing.T) {
	if os.Getenv(clusterEnv) != "1" {
		t.Skipf("set %s=1 (make test-cluster) to run the fault-injected cluster test", clusterEnv)
	}
	bulk, pairs := chooseFrames(t)
	cuasdBinary(t)
	natsServerBinary(t)

	ctx, cancel := context.WithTimeout(context.Background(), scenarioTime)
	defer cancel()
	began := time.Now()
	dir := t.TempDir()
	nodes := newNATSCluster(ctx, t, dir, 3)
	urls := clientURLs(nodes)
	nc, js := connect(t, urls)
	defer nc.Close()

	insts := []*instance{{name: "a"}, {name: "b"}}
	for _, in := range insts {
		in.dir = filepath.Join(dir, "cuasd-"+in.name)
		in.p, in.base = startCuasd(ctx, t, dir, "cuasd-"+in.name, serveArgs(urls, in)...)
		in.alive.Store(true)
	}
	t.Logf("cluster of 3 nats-servers and 2 cuasd up in %v", time.Since(began).Round(time.Millisecond))

	checkReplication(ctx, t, js, insts)

	// --- Stream with faults. ---
	rate := 150.0
	if s := os.Getenv("CUAS_CLUSTER_RATE"); s != "" {
		if v, err := strconv.ParseFloat(s, 64); err == nil && v > 0 {
			rate = v
		}
	}
	recvBase := time.Now().UnixNano()
	var (
		frames   []*sentFrame
		framesMu sync.Mutex
		jobs     = make(chan *sentFrame, 4096)
		wg       sync.WaitGroup
		client   = &http.Client{Timeout: 12 * time.Second}
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range jobs {
				deliver(ctx, client, insts, f)
			}
		}()
	}
	receipts := make([][]emitted, len(insts))
	emitFailures := make([]atomic.Int32, len(insts))
	streamCtx, stopStream := context.WithTimeout(ctx, streamFor)
	defer stopStream()
	for i, in := range insts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			receipts[i] = emitLoop(streamCtx, client, in, &emitFailures[i])
		}()
	}
	var killedNATS string
	faults := make(chan struct{})
	go func() {
		defer close(faults)
		select {
		case <-time.After(killNATSAt):
		case <-streamCtx.Done():
			return
		}
		killedNATS = killRawLeader(ctx, t, js, nodes)
		select {
		case <-time.After(killCuasdAt - killNATSAt):
		case <-streamCtx.Done():
			return
		}
		insts[1].alive.Store(false)
		insts[1].p.kill()
		t.Logf("SIGKILLed cuasd b at %v", time.Since(began).Round(time.Millisecond))
	}()
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	for i := 0; streamCtx.Err() == nil; i++ {
		<-tick.C
		pref := i % 2
		if !insts[pref].alive.Load() {
			pref = 0
		}
		f := &sentFrame{f: &bulk[i%len(bulk)], sensor: "ct-" + insts[i%2].name,
			recv: recvBase + int64(i)*int64(time.Millisecond), pref: pref}
		framesMu.Lock()
		frames = append(frames, f)
		framesMu.Unlock()
		select {
		case jobs <- f:
		default:
			// The workers cannot keep up (a fault is blocking them): the
			// frame is never sent and never acknowledged.
		}
	}
	tick.Stop()
	close(jobs)
	wg.Wait()
	<-faults
	if killedNATS == "" || insts[1].p.running() {
		t.Fatalf("the faults did not happen within the stream (nats killed %q, cuasd b running %v)", killedNATS, insts[1].p.running())
	}
	var acked, unacked, retried, dupByOther int
	for _, f := range frames {
		switch {
		case f.acked.Load():
			acked++
			if f.tries.Load() > 1 {
				retried++
			}
		default:
			unacked++
		}
		if by, _ := f.by.Load().(string); by != "" && by != insts[f.pref].name {
			dupByOther++
		}
	}
	t.Logf("stream: %d frames, %d acknowledged (202), %d not, %d needed a retry, %d acknowledged by the other instance; receipts: a %d (+%d failed), b %d (+%d failed)",
		len(frames), acked, unacked, retried, dupByOther, len(receipts[0]), emitFailures[0].Load(), len(receipts[1]), emitFailures[1].Load())
	if acked < len(frames)/2 {
		t.Errorf("only %d of %d frames were acknowledged", acked, len(frames))
	}

	// --- Every raw frame decoded and acknowledged by the decoders. ---
	waitDecodersDrained(ctx, t, js)
	t.Logf("decoders drained at %v", time.Since(began).Round(time.Millisecond))

	// --- Exactly one observation per acknowledged frame. ---
	obsCount := map[obsKey]int{}
	perKey := map[string]int{}
	readStream(ctx, t, js, bus.StreamObs, func(m jetstream.Msg) {
		err := decode.EachInBatch(m.Data(), func(o *decode.Observation) error {
			obsCount[obsKey{o.Sensor, o.Key, o.TimeUnixNano}]++
			perKey[o.Key]++
			return nil
		})
		if err != nil {
			t.Errorf("CUAS_OBS message %s: %v", m.Subject(), err)
		}
	})
	deadCount := map[obsKey]int{}
	readStream(ctx, t, js, bus.StreamDead, func(m jetstream.Msg) {
		recv, _ := strconv.ParseInt(m.Headers().Get(bus.HeaderRecvTime), 10, 64)
		deadCount[obsKey{m.Headers().Get(bus.HeaderSensor), strings.ToUpper(fmt.Sprintf("%X", m.Data())), recv}]++
	})
	sentKeys := map[obsKey]bool{}
	var missing, doubled, deadWrong int
	for _, f := range frames {
		if f.f.icao == "" {
			k := obsKey{f.sensor, f.f.hex, f.recv}
			sentKeys[k] = true
			if n := deadCount[k]; (f.acked.Load() && n != 1) || n > 1 {
				deadWrong++
				if deadWrong <= 5 {
					t.Errorf("invalid frame %s sent at %d (acknowledged %v): %d dead letters, want exactly one when acknowledged and never more",
						f.f.vector, f.recv, f.acked.Load(), n)
				}
			}
			continue
		}
		k := obsKey{f.sensor, f.f.icao, f.recv}
		sentKeys[k] = true
		n := obsCount[k]
		switch {
		case f.acked.Load() && n == 0:
			missing++
			if missing <= 5 {
				t.Errorf("acknowledged frame %s (ICAO %s, sensor %s, recv %d) has no observation in CUAS_OBS", f.f.vector, f.f.icao, f.sensor, f.recv)
			}
		case n > 1:
			doubled++
			if doubled <= 5 {
				t.Errorf("frame %s (ICAO %s, sensor %s, recv %d) has %d observations in CUAS_OBS, want one", f.f.vector, f.f.icao, f.sensor, f.recv, n)
			}
		}
	}
	var strays int
	for k, n := range obsCount {
		if !sentKeys[k] {
			strays += n
		}
	}
	if strays > 0 {
		t.Errorf("%d observations in CUAS_OBS belong to no frame the test sent", strays)
	}
	t.Logf("CUAS_OBS: %d observations of %d distinct frames; %d acknowledged frames missing, %d frames doubled; CUAS_DEAD: %d dead letters",
		sum(obsCount), len(obsCount), missing, doubled, sum(deadCount))

	// --- The surviving instance's tracks. ---
	a := insts[0]
	checkTracks(ctx, t, a, bulk, perKey)
	checkPairs(ctx, t, client, a, pairs)

	// --- Ledgers: the survivor, then b after a restart on its data. ---
	checkLedger(ctx, t, a, receipts[0])
	b := insts[1]
	b.p, b.base = startCuasd(ctx, t, dir, "cuasd-b-restarted", serveArgs(urls, b)...)
	checkLedger(ctx, t, b, receipts[1])

	if el := time.Since(began); el > scenarioTime {
		t.Errorf("the scenario took %v, more than its bound of %v", el, scenarioTime)
	} else {
		t.Logf("scenario done in %v (killed NATS node %s and cuasd b)", el.Round(time.Millisecond), killedNATS)
	}
	for _, in := range insts {
		in.p.stop(20 * time.Second)
	}
}

func serveArgs(urls string, in *instance) []string {
	return []string{
		"--nats-url", urls, "--replicas", "3", "--instance", in.name,
		"--http-addr", "127.0.0.1:0", "--nats-listen", "off", "--data-dir", in.dir,
		// Tracks must outlive the wait for redeliveries (AckWait 30 s).
		"--track-ttl", "10m",
		// Every node reserves the streams' byte caps from its
		// max_file_store; keep the reservation small on a test machine.
		"--raw-max-bytes", "1GiB", "--obs-max-bytes", "512MiB",
	}
}

type obsKey struct {
	sensor string
	key    string
	recv   int64
}

func sum(m map[obsKey]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// checkReplication reports every stream that holds acknowledged data with
// fewer than three replicas: with one node down such a stream is lost or
// unavailable. It also reports instances that share a ledger stream.
func checkReplication(ctx context.Context, t *testing.T, js jetstream.JetStream, insts []*instance) {
	t.Helper()
	var ledgers []string
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	names := js.StreamNames(ctx)
	var all []string
	for n := range names.Name() {
		all = append(all, n)
	}
	sort.Strings(all)
	for _, n := range all {
		s, err := js.Stream(ctx, n)
		if err != nil {
			t.Errorf("stream %s: %v", n, err)
			continue
		}
		info := s.CachedInfo()
		if strings.Contains(n, "LEDGER") {
			ledgers = append(ledgers, n)
		}
		if info.Config.Replicas < 3 {
			t.Errorf("stream %s is created with %d replica(s) although cuasd runs with --replicas 3: while its node is down it is unavailable, and lost with that node's disk",
				n, info.Config.Replicas)
		}
	}
	t.Logf("streams: %s; ledger streams: %v", strings.Join(all, ", "), ledgers)
	if len(ledgers) < len(insts) {
		t.Errorf("%d instances but %d ledger stream(s) %v: the ledger is single-writer per stream, so instances sharing one conflict (expected-last-sequence failures)",
			len(insts), len(ledgers), ledgers)
	}
}

// killRawLeader SIGKILLs the nats-server that leads CUAS_RAW, which forces
// a leader election of the stream every frame goes through.
func killRawLeader(ctx context.Context, t *testing.T, js jetstream.JetStream, nodes []*natsNode) string {
	t.Helper()
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	leader := ""
	if s, err := js.Stream(ictx, bus.StreamRaw); err == nil {
		if info := s.CachedInfo(); info.Cluster != nil {
			leader = info.Cluster.Leader
		}
	}
	victim := nodes[0]
	for _, n := range nodes {
		if n.name == leader {
			victim = n
		}
	}
	victim.p.kill()
	t.Logf("SIGKILLed nats-server %s (CUAS_RAW leader: %q)", victim.name, leader)
	return victim.name
}

// deliver posts one frame until an instance answers 202, alternating
// between the live instances, for at most retryFor.
func deliver(ctx context.Context, client *http.Client, insts []*instance, f *sentFrame) {
	body, _ := json.Marshal(map[string]any{
		"frames": []string{f.f.hex}, "sensor": f.sensor, "recv_time_unix_ns": f.recv,
	})
	deadline := time.Now().Add(retryFor)
	k := f.pref
	for ctx.Err() == nil {
		in := insts[k]
		if in.alive.Load() {
			f.tries.Add(1)
			if code, err := postIngest(ctx, client, in.base, body); err == nil && code == http.StatusAccepted {
				f.acked.Store(true)
				f.by.Store(in.name)
				return
			}
		}
		if time.Now().After(deadline) {
			return
		}
		k = (k + 1) % len(insts)
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// postIngest posts a JSON body to the ADS-B ingest endpoint under base and
// returns the answer's status code, its body read and discarded.
func postIngest(ctx context.Context, client *http.Client, base string, body []byte) (int, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/ingest/adsb", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// emitLoop emits a receipt on in every 200 ms until ctx ends or in dies,
// returning the receipts answered with 201.
func emitLoop(ctx context.Context, client *http.Client, in *instance, failures *atomic.Int32) []emitted {
	var out []emitted
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return out
		case <-t.C:
		}
		if !in.alive.Load() {
			return out
		}
		body, _ := json.Marshal(map[string]any{
			"subject": fmt.Sprintf("clustertest/%s/%d", in.name, n),
			"payload": map[string]any{"instance": in.name, "n": n},
		})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, in.base+"/v1/receipt/emit", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			failures.Add(1)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			failures.Add(1)
			continue
		}
		var e emitted
		if json.Unmarshal(b, &e) == nil {
			e.raw = b
			out = append(out, e)
		}
	}
}

// waitDecodersDrained waits until every decoder consumer of CUAS_RAW has
// nothing pending and nothing unacknowledged. Messages the killed cuasd
// held are redelivered after the consumers' AckWait (30 s).
func waitDecodersDrained(ctx context.Context, t *testing.T, js jetstream.JetStream) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 75*time.Second)
	defer cancel()
	var last string
	for {
		done := true
		var parts []string
		for _, p := range []string{"adsb", "remoteid", "mavlink"} {
			c, err := js.Consumer(wctx, bus.StreamRaw, worker.ConsumerName(p))
			if err != nil {
				done = false
				parts = append(parts, p+": "+err.Error())
				continue
			}
			info, err := c.Info(wctx)
			if err != nil {
				done = false
				parts = append(parts, p+": "+err.Error())
				continue
			}
			parts = append(parts, fmt.Sprintf("%s pending %d ack-pending %d redelivered %d", p, info.NumPending, info.NumAckPending, info.NumRedelivered))
			if info.NumPending != 0 || info.NumAckPending != 0 {
				done = false
			}
		}
		last = strings.Join(parts, "; ")
		if done {
			t.Logf("decoder consumers: %s", last)
			return
		}
		select {
		case <-wctx.Done():
			t.Fatalf("the decoder consumers did not drain: %s", last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// readStream calls fn for every message of the stream, in order.
func readStream(ctx context.Context, t *testing.T, js jetstream.JetStream, name string, fn func(jetstream.Msg)) {
	t.Helper()
	s, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatalf("stream %s: %v", name, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatalf("stream %s: %v", name, err)
	}
	last := info.State.LastSeq
	if info.State.Msgs == 0 {
		return
	}
	c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatalf("stream %s: %v", name, err)
	}
	rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for rctx.Err() == nil {
		batch, err := c.Fetch(1000, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			continue
		}
		for m := range batch.Messages() {
			fn(m)
			if md, err := m.Metadata(); err == nil && md.Sequence.Stream >= last {
				return
			}
		}
	}
	t.Fatalf("stream %s: could not read up to sequence %d", name, last)
}

// trackJSON is the part of GET /v1/tracks/{id} the test checks.
type trackJSON struct {
	ID           string   `json:"id"`
	ICAO         string   `json:"icao"`
	Callsign     string   `json:"callsign"`
	Lat          *float64 `json:"lat"`
	Lon          *float64 `json:"lon"`
	Method       string   `json:"position_method"`
	Observations uint64   `json:"observations"`
}

func getTrack(ctx context.Context, base, icao string) (trackJSON, int, error) {
	var tr trackJSON
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/tracks/adsb:"+icao, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return tr, 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return tr, resp.StatusCode, nil
	}
	return tr, resp.StatusCode, json.Unmarshal(b, &tr)
}

// checkTracks: the survivor has one track per address streamed, with the
// vectors' callsigns, and has applied every observation of CUAS_OBS exactly
// once (its observation count equals the stream's).
func checkTracks(ctx context.Context, t *testing.T, in *instance, bulk []bulkFrame, perKey map[string]int) {
	t.Helper()
	want := map[string]string{}
	for _, f := range bulk {
		if f.icao != "" && (want[f.icao] == "" || f.callsign != "") {
			want[f.icao] = f.callsign
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for icao, callsign := range want {
		var (
			tr   trackJSON
			code int
			err  error
		)
		for {
			tr, code, err = getTrack(wctx, in.base, icao)
			if err == nil && code == http.StatusOK && tr.Observations == uint64(perKey[icao]) {
				break
			}
			if wctx.Err() != nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		switch {
		case err != nil || code != http.StatusOK:
			t.Errorf("track adsb:%s on cuasd %s: HTTP %d, %v", icao, in.name, code, err)
		case tr.Observations != uint64(perKey[icao]):
			t.Errorf("track adsb:%s on cuasd %s applied %d observations, CUAS_OBS holds %d", icao, in.name, tr.Observations, perKey[icao])
		case callsign != "" && tr.Callsign != callsign:
			t.Errorf("track adsb:%s callsign %q, the vector says %q", icao, tr.Callsign, callsign)
		}
	}
	t.Logf("cuasd %s: %d tracks checked against the vectors and CUAS_OBS", in.name, len(want))
}

// checkPairs sends each CPR pair to the survivor, older frame first, and
// checks the global position against the vector's.
func checkPairs(ctx context.Context, t *testing.T, client *http.Client, in *instance, pairs []cprPair) {
	t.Helper()
	recv := time.Now().UnixNano()
	post := func(hexFrame string, at int64) error {
		body, _ := json.Marshal(map[string]any{"frames": []string{hexFrame}, "sensor": "ct-pairs", "recv_time_unix_ns": at})
		for range 20 {
			code, err := postIngest(ctx, client, in.base, body)
			if err == nil {
				if code == http.StatusAccepted {
					return nil
				}
				err = fmt.Errorf("HTTP %d", code)
			}
			if ctx.Err() != nil {
				return err
			}
			time.Sleep(250 * time.Millisecond)
		}
		return errors.New("not acknowledged after 20 tries")
	}
	for _, p := range pairs {
		older, newer := p.even, p.odd
		if !p.newestOdd {
			older, newer = p.odd, p.even
		}
		if err := post(older, recv); err != nil {
			t.Errorf("pair %s: %v", p.vector, err)
			continue
		}
		// The newer frame must reach fusion after the older one.
		wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		for {
			if _, code, _ := getTrack(wctx, in.base, p.icao); code == http.StatusOK || wctx.Err() != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		cancel()
		if err := post(newer, recv+int64(time.Second)); err != nil {
			t.Errorf("pair %s: %v", p.vector, err)
			continue
		}
		recv += 2 * int64(time.Second)
		wctx, cancel = context.WithTimeout(ctx, 15*time.Second)
		var tr trackJSON
		for {
			tr, _, _ = getTrack(wctx, in.base, p.icao)
			if tr.Lat != nil || wctx.Err() != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		cancel()
		switch {
		case tr.Lat == nil || tr.Lon == nil:
			t.Errorf("pair %s (ICAO %s): no position on cuasd %s", p.vector, p.icao, in.name)
		case abs(*tr.Lat-p.lat) > p.latTol || abs(*tr.Lon-p.lon) > p.lonTol:
			t.Errorf("pair %s (ICAO %s): position %.6f, %.6f (%s), the vector says %.6f, %.6f ± %g, %g",
				p.vector, p.icao, *tr.Lat, *tr.Lon, tr.Method, p.lat, p.lon, p.latTol, p.lonTol)
		}
	}
	t.Logf("cuasd %s: %d CPR pairs resolved and compared with the vectors", in.name, len(pairs))
}

// checkLedger: the instance's ledger is its own (origin cuasd/<name>), has
// entries 0..size-1 with no gap, holds every receipt it acknowledged with
// the same leaf hash, and an acknowledged bundle verifies offline with
// `cuasd verify` against the current checkpoint.
func checkLedger(ctx context.Context, t *testing.T, in *instance, acked []emitted) {
	t.Helper()
	var cp struct {
		Origin   string `json:"origin"`
		TreeSize uint64 `json:"tree_size"`
		RootHash string `json:"root_hash"`
	}
	cpRaw := getJSON(ctx, t, in.base+"/v1/receipt/checkpoint", &cp)
	if cp.Origin != "cuasd/"+in.name {
		t.Errorf("cuasd %s: ledger origin %q, want %q", in.name, cp.Origin, "cuasd/"+in.name)
	}
	leaves := map[uint64]string{}
	for from := uint64(0); from < cp.TreeSize; {
		var page struct {
			TreeSize uint64 `json:"tree_size"`
			Entries  []struct {
				Index    uint64 `json:"index"`
				LeafHash string `json:"leaf_hash"`
			} `json:"entries"`
		}
		getJSON(ctx, t, fmt.Sprintf("%s/v1/receipt/ledger?from=%d&limit=1000", in.base, from), &page)
		if len(page.Entries) == 0 {
			t.Errorf("cuasd %s: ledger listing from %d is empty, tree size %d", in.name, from, cp.TreeSize)
			break
		}
		for _, e := range page.Entries {
			if e.Index != from {
				t.Errorf("cuasd %s: ledger entry %d where %d was due: a gap", in.name, e.Index, from)
			}
			leaves[e.Index] = e.LeafHash
			from = e.Index + 1
		}
	}
	if uint64(len(leaves)) != cp.TreeSize {
		t.Errorf("cuasd %s: %d entries listed, checkpoint size %d", in.name, len(leaves), cp.TreeSize)
	}
	var lost int
	for _, r := range acked {
		if leaves[r.Index] != r.LeafHash {
			lost++
			if lost <= 5 {
				t.Errorf("cuasd %s: acknowledged receipt %d (leaf %s) is not in the ledger (there: %q)", in.name, r.Index, r.LeafHash, leaves[r.Index])
			}
		}
	}
	t.Logf("cuasd %s: ledger %s size %d, %d acknowledged receipts all present: %v", in.name, cp.Origin, cp.TreeSize, len(acked), lost == 0)
	if len(acked) == 0 {
		t.Errorf("cuasd %s acknowledged no receipt during the stream", in.name)
		return
	}

	// Offline verification of the first acknowledged bundle against the
	// current checkpoint, through a consistency proof.
	dir := t.TempDir()
	r := acked[0]
	bundle := filepath.Join(dir, "bundle.json")
	cpFile := filepath.Join(dir, "checkpoint.json")
	proofFile := filepath.Join(dir, "consistency.json")
	os.WriteFile(bundle, r.raw, 0o600)
	os.WriteFile(cpFile, cpRaw, 0o600)
	args := []string{"verify", bundle, "--pubkey", filepath.Join(in.dir, "ledger-signing-key.pub.pem"), "--checkpoint", cpFile}
	if r.TreeSize != cp.TreeSize {
		var proof json.RawMessage
		proofRaw := getJSON(ctx, t, fmt.Sprintf("%s/v1/receipt/proof/consistency?first=%d&second=%d", in.base, r.TreeSize, cp.TreeSize), &proof)
		os.WriteFile(proofFile, proofRaw, 0o600)
		args = append(args, "--consistency", proofFile)
	}
	out, err := exec.CommandContext(ctx, cuasdBinary(t), args...).CombinedOutput()
	if err != nil {
		t.Errorf("cuasd %s: cuasd verify of receipt %d against checkpoint size %d: %v\n%s", in.name, r.Index, cp.TreeSize, err, out)
	}
}

func getJSON(ctx context.Context, t *testing.T, url string, v any) []byte {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return b
}
