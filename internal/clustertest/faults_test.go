package clustertest

// The fault suite (issue 32, item 5; make faults): real processes — cuasd
// with the demo, a Beast push, alerts to a real webhook and Debian's
// mosquitto, CoT over UDP, SBS, history and JSON events on NATS — under
// (a) SIGSTOP for 40 s, (b) a restart of the external nats-server of a
// cluster that holds the fusion feed's consumer, (c) a full data
// filesystem freed after 30 s and (d) a hostile client flooding 8 MB raw
// messages and sniffing _INBOX.>. After each,
// every output must deliver again within 60 s; at the end every alert
// message reached each sink exactly once, and cuasd's peak memory stayed
// under faultMemBound. /readyz is checked during each fault and after it.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuasd/cuasd/internal/mosquittotest"
	"github.com/cuasd/cuasd/internal/natstest"
	"github.com/cuasd/cuasd/internal/testcapture"
	"github.com/cuasd/cuasd/internal/testshared"
)

// faultEnv enables TestFaultSuite (make faults sets it).
const faultEnv = "CUAS_FAULT_TEST"

const (
	// recoverWithin is how long every output may take to deliver again.
	recoverWithin = 60 * time.Second
	// faultMemBound is the peak resident memory cuasd must stay under,
	// floods included.
	faultMemBound = 512 << 20
	stallFor      = 40 * time.Second
	diskFullFor   = 30 * time.Second
)

// seen counts what an output delivered and when it last did.
type seen struct {
	n    atomic.Int64
	last atomic.Int64 // unix nanoseconds
}

func (s *seen) note() { s.n.Add(1); s.last.Store(time.Now().UnixNano()) }

// since reports whether something arrived after t.
func (s *seen) since(t time.Time) bool { return s.last.Load() > t.UnixNano() }

// alertLog records alert messages (id and seq) per sink.
type alertLog struct {
	mu   sync.Mutex
	keys map[string]int
	seen
}

func (a *alertLog) add(body []byte) {
	var m struct {
		ID  string `json:"id"`
		Seq int    `json:"seq"`
	}
	if json.Unmarshal(body, &m) != nil || m.ID == "" {
		return
	}
	a.mu.Lock()
	if a.keys == nil {
		a.keys = map[string]int{}
	}
	a.keys[m.ID+"/"+strconv.Itoa(m.Seq)]++
	a.mu.Unlock()
	a.note()
}

func (a *alertLog) snapshot() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.keys)
}

// rig is one cuasd under test and its outputs' receivers.
type rig struct {
	t       *testing.T
	dir     string
	p       *proc
	base    string // http://127.0.0.1:PORT/api/cuas
	root    string
	natsURL string
	hook    alertLog
	mqtt    alertLog
	cot     seen
	sbs     seen
	events  seen
	beast   seen // Beast chunks pushed
	peakRSS atomic.Int64
	summary *strings.Builder
	// probeNear: the probe zone is on the demo site now.
	probeNear bool
}

// receivers starts the webhook receiver, the MQTT subscriber and the CoT
// UDP socket, and returns the cuasd flags pointing at them.
func (r *rig) receivers(broker string) []string {
	t := r.t
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.hook.add(b)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(hl) }()
	t.Cleanup(func() { srv.Close() })

	c := paho.NewClient(paho.NewClientOptions().AddBroker("mqtt://" + broker).SetClientID("faults-" + filepath.Base(r.dir)).
		SetAutoReconnect(true).SetCleanSession(false))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("mqtt subscriber: %v", tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(100) })
	if tok := c.Subscribe("cuas/alerts/#", 1, func(_ paho.Client, m paho.Message) { r.mqtt.add(m.Payload()) }); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("mqtt subscribe: %v", tok.Error())
	}

	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { udp.Close() })
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, _, err := udp.ReadFrom(buf); err != nil {
				return
			}
			r.cot.note()
		}
	}()

	// Breaches end as soon as a track leaves a zone (no 30 s dwell), so
	// that moving the probe zone away resolves alerts at once.
	policy := filepath.Join(r.dir, "gate-policy.yaml")
	if err := os.WriteFile(policy, []byte("min_hold_s: 0.000000001\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(r.dir, "hook.secret")
	rules := filepath.Join(r.dir, "alerts.yaml")
	if err := os.WriteFile(secret, []byte("fault-suite-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yaml := fmt.Sprintf(`sinks:
  - {name: hook, webhook: "http://%s/hook", secret_file: %q}
  - {name: broker, mqtt: true}
rules:
  - {name: notable, min_decision: monitor, cooldown: 10s, sinks: [hook, broker]}
`, hl.Addr(), secret)
	if err := os.WriteFile(rules, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--alerts", rules, "--mqtt-url", "mqtt://" + broker, "--cot-udp", udp.LocalAddr().String(), "--gate-policy", policy}
}

// start runs cuasd with the outputs and inputs of the suite plus extra.
func (r *rig) start(ctx context.Context, broker string, extra ...string) {
	ports := freePorts(r.t, 2)
	sbs := fmt.Sprintf("127.0.0.1:%d", ports[0])
	beast := fmt.Sprintf("127.0.0.1:%d", ports[1])
	args := []string{"serve", "--demo", "--http-addr", "127.0.0.1:0", "--sbs-listen", sbs, "--beast-listen", beast, "--log-level", "warn"}
	args = append(append(args, r.receivers(broker)...), extra...)
	r.p = startProc(r.t, r.dir, "cuasd", cuasdBinary(r.t), args...)
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		l, err := r.p.waitLine(wctx, "cuasd ")
		if err != nil {
			r.t.Fatalf("%v\n%s", err, tail(r.p.logPath, 30))
		}
		if u, ok := strings.CutPrefix(l, "nats "); ok {
			r.natsURL = u
		}
		if u, ok := strings.CutPrefix(l, "serving "); ok {
			r.base = strings.TrimSuffix(u, "/")
			break
		}
	}
	r.root = strings.TrimSuffix(r.base, "/api/cuas")
	if err := waitReady(wctx, r.base+"/readyz"); err != nil {
		r.t.Fatalf("not ready: %v\n%s", err, tail(r.p.logPath, 30))
	}
	go r.sampleRSS(ctx)
	go r.readSBS(ctx, sbs)
	go r.pushBeast(ctx, beast)
}

// sampleRSS keeps the peak resident memory of cuasd.
func (r *rig) sampleRSS(ctx context.Context) {
	path := fmt.Sprintf("/proc/%d/status", r.p.cmd.Process.Pid)
	for ctx.Err() == nil && r.p.running() {
		if b, err := os.ReadFile(path); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
					kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
					if kb<<10 > r.peakRSS.Load() {
						r.peakRSS.Store(kb << 10)
					}
				}
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// readSBS reads SBS lines, reconnecting.
func (r *rig) readSBS(ctx context.Context, addr string) {
	for ctx.Err() == nil {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			time.Sleep(500 * time.Millisecond)
			continue
		}
		go func() { <-ctx.Done(); c.Close() }()
		sc := bufio.NewScanner(c)
		for sc.Scan() {
			r.sbs.note()
		}
		c.Close()
	}
}

// pushBeast sends the shared Beast capture in 4 KiB chunks ten times a
// second, again and again, reconnecting (a receiver's Beast push). Each
// time round, its timestamps go on from where the last round's ended, as
// a receiver's counter does (testcapture.Continuation): the same frames
// with the same timestamps again would be a feeder re-sending them,
// which cuasd drops.
func (r *rig) pushBeast(ctx context.Context, addr string) {
	capture, err := os.ReadFile(filepath.Join(testshared.Dir(r.t), "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin"))
	if err != nil {
		r.t.Errorf("beast capture: %v", err)
		return
	}
	cont, err := testcapture.Continue(capture, 12_000_000) // a second between rounds
	if err != nil {
		r.t.Errorf("beast capture: %v", err)
		return
	}
	var data []byte
	for round, off := 0, 0; ctx.Err() == nil; {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			time.Sleep(500 * time.Millisecond)
			continue
		}
		for ctx.Err() == nil {
			if off >= len(data) {
				data, _ = cont.Append(data[:0], round)
				off, round = 0, round+1
			}
			_ = c.SetWriteDeadline(time.Now().Add(2 * time.Second))
			n, err := c.Write(data[off:min(off+4096, len(data))])
			off += n
			if err != nil {
				break
			}
			r.beast.note()
			time.Sleep(100 * time.Millisecond)
		}
		c.Close()
	}
}

// subscribeEvents counts the JSON track events on NATS.
func (r *rig) subscribeEvents(url string) *nats.Conn {
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond))
	if err != nil {
		r.t.Fatalf("events subscriber: %v", err)
	}
	r.t.Cleanup(nc.Close)
	if _, err := nc.Subscribe("cuas.track.>", func(*nats.Msg) { r.events.note() }); err != nil {
		r.t.Fatal(err)
	}
	return nc
}

func (r *rig) getJSON(ctx context.Context, path string, v any) int {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.base+path, nil)
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(cctx))
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(v)
	return resp.StatusCode
}

type faultReadyz struct {
	Status     string   `json:"status"`
	Degraded   []string `json:"degraded"`
	Reasons    []string `json:"reasons"`
	Components []struct {
		Name, State string
		Restarts    int
	} `json:"components"`
}

func (r *rig) readyz(ctx context.Context) faultReadyz {
	var rd faultReadyz
	r.getJSON(ctx, "/readyz", &rd)
	return rd
}

// historySince is the number of history points recorded after t.
func (r *rig) historySince(ctx context.Context, t time.Time) int {
	var h struct {
		Points int `json:"points"`
	}
	r.getJSON(ctx, "/v1/history?limit=100&from="+t.UTC().Format(time.RFC3339Nano), &h)
	return h.Points
}

// recovered waits until every output delivered after t and /readyz is
// ready with every component up, and returns how long each took.
func (r *rig) recovered(ctx context.Context, phase string, t time.Time) {
	r.t.Helper()
	outs := map[string]func() bool{
		"webhook": func() bool { return r.hook.since(t) },
		"mqtt":    func() bool { return r.mqtt.since(t) },
		"cot":     func() bool { return r.cot.since(t) },
		"sbs":     func() bool { return r.sbs.since(t) },
		"events":  func() bool { return r.events.since(t) },
		"history": func() bool { return r.historySince(ctx, t) > 0 },
		"readyz": func() bool {
			rd := r.readyz(ctx)
			for _, c := range rd.Components {
				if c.State != "up" {
					return false
				}
			}
			return rd.Status == "ready"
		},
	}
	took := map[string]time.Duration{}
	deadline := t.Add(recoverWithin)
	probed, lastProbe := false, time.Time{}
	for len(took) < len(outs) && time.Now().Before(deadline) {
		// The probe zone moved onto the demo site or away: the alert
		// sinks have something new to deliver (the demo's own alerts come
		// only on changes). Refused (503) until writes are kept again.
		if !probed && time.Since(lastProbe) > 2*time.Second {
			lastProbe = time.Now()
			probed = r.probeZone(ctx)
		}
		for name, ok := range outs {
			if _, done := took[name]; !done && ok() {
				took[name] = time.Since(t).Round(100 * time.Millisecond)
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	fmt.Fprintf(r.summary, "%s: recovered", phase)
	for _, name := range []string{"webhook", "mqtt", "cot", "sbs", "events", "history", "readyz"} {
		if d, ok := took[name]; ok {
			fmt.Fprintf(r.summary, " %s %s", name, d)
		} else {
			fmt.Fprintf(r.summary, " %s NOT", name)
			r.t.Errorf("%s: %s did not deliver again within %s of the fault's end (probe zone put: %v; alert states %v, deliveries %v, pending %v; readyz %+v)",
				phase, name, recoverWithin, probed, r.metric(ctx, "cuasd_alerts_total"),
				r.metric(ctx, "cuasd_alert_deliveries_total"), r.metric(ctx, "cuasd_alert_pending"), r.readyz(ctx))
		}
	}
	fmt.Fprintf(r.summary, "; peak RSS so far %d MiB\n", r.peakRSS.Load()>>20)
}

// putZone puts a circular geofence of radius metres over the demo site
// and returns the status (0 when the request failed).
func (r *rig) putZone(ctx context.Context, id string, radius int) int {
	body := fmt.Sprintf(`{"name":%q,"class":"airport","center":[52.3086,4.7639],"radius_m":%d}`, id, radius)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, r.base+"/v1/geofences/"+id, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
		r.t.Errorf("PUT %s: 503 without Retry-After", id)
	}
	return resp.StatusCode
}

// probeZone moves the probe zone onto the demo site or away from it,
// whichever it is not: the tracks there start or end a breach, so the
// alert sinks get new messages (a zone replaced by another in the same
// place does not always make any). It reports whether the move was kept.
func (r *rig) probeZone(ctx context.Context) bool {
	center := "52.3086,4.7639"
	if r.probeNear {
		center = "10,10"
	}
	body := fmt.Sprintf(`{"name":"Probe","class":"airport","center":[%s],"radius_m":30000}`, center)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, r.base+"/v1/geofences/probe", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return false
	}
	r.probeNear = !r.probeNear
	return true
}

// stall stops cuasd for stallFor (SIGSTOP), then continues it.
func (r *rig) stall(ctx context.Context) time.Time {
	pid := r.p.cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		r.t.Fatal(err)
	}
	select {
	case <-time.After(stallFor):
	case <-ctx.Done():
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		r.t.Fatal(err)
	}
	return time.Now()
}

// fullDisk fills the data filesystem, checks /readyz, the board and a
// write while it is full, and frees it after diskFullFor.
func (r *rig) fullDisk(ctx context.Context, fs string) time.Time {
	t := r.t
	fill := filepath.Join(fs, "fill")
	f, err := os.Create(fill)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 256<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	start := time.Now()
	var degradedAfter time.Duration
	for time.Since(start) < diskFullFor {
		rd := r.readyz(ctx)
		if degradedAfter == 0 && rd.Status == "degraded" && strings.Contains(strings.Join(rd.Degraded, " "), "disk: data directory") {
			degradedAfter = time.Since(start)
			if code := r.putZone(ctx, "full", 300); code != http.StatusServiceUnavailable {
				t.Errorf("geofence PUT while the disk is full: %d, want 503", code)
			}
			var board struct {
				Stale bool `json:"stale"`
			}
			if r.getJSON(ctx, "/v1/threats/active", &board); !board.Stale {
				t.Error("the board is not stale while the disk is full")
			}
		}
		time.Sleep(time.Second)
	}
	if degradedAfter == 0 {
		t.Errorf("/readyz never said degraded naming the data directory while the disk was full: %+v", r.readyz(ctx))
	}
	fmt.Fprintf(r.summary, "disk full: /readyz degraded after %s\n", degradedAfter.Round(100*time.Millisecond))
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

// flood publishes 8 MB raw messages from a hostile client while another
// sniffs _INBOX.>; it returns what the sniffer read.
func (r *rig) flood(ctx context.Context) (sniffed int64, refused bool) {
	t := r.t
	sniff, err := nats.Connect(r.natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer sniff.Close()
	var n atomic.Int64
	if _, err := sniff.Subscribe("_INBOX.>", func(*nats.Msg) { n.Add(1) }); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 8<<20)
	for i := range big {
		big[i] = byte(i)
	}
	for i := 0; i < 40 && ctx.Err() == nil; i++ {
		fl, err := nats.Connect(r.natsURL, nats.MaxReconnects(0))
		if err != nil {
			refused = true
			continue
		}
		if err := fl.Publish("cuas.raw.adsb.flood", big); err != nil {
			refused = true
		}
		if err := fl.Flush(); err != nil {
			refused = true
		}
		fl.Close()
	}
	time.Sleep(10 * time.Second) // the sniffer listens while cuasd works
	return n.Load(), refused
}

// checkAlertsOnce waits until no alert is pending, then checks that each
// sink got every alert message exactly once.
func (r *rig) checkAlertsOnce(ctx context.Context) {
	t := r.t
	for deadline := time.Now().Add(recoverWithin); time.Now().Before(deadline); time.Sleep(time.Second) {
		if r.metric(ctx, "cuasd_alert_pending") == 0 {
			break
		}
	}
	time.Sleep(2 * time.Second)
	hook, mq := r.hook.snapshot(), r.mqtt.snapshot()
	dups, missing := 0, 0
	for _, p := range []struct {
		sink        string
		got, others map[string]int
	}{{"webhook", hook, mq}, {"mqtt", mq, hook}} {
		for k, v := range p.got {
			if v != 1 {
				dups++
				t.Errorf("%s got alert message %s %d times", p.sink, k, v)
			}
			if p.others[k] == 0 {
				missing++
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d alert messages reached one sink and not the other", missing)
	}
	if len(hook) == 0 {
		t.Error("no alert was delivered")
	}
	fmt.Fprintf(r.summary, "alerts: %d messages to the webhook, %d to MQTT, %d duplicates, %d on one sink only\n", len(hook), len(mq), dups, missing)
}

// metric sums the samples of a metric family.
func (r *rig) metric(ctx context.Context, name string) float64 {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.root+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if rest, ok := strings.CutPrefix(l, name); ok && (strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, "{")) {
			v, _ := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
			sum += v
		}
	}
	return sum
}

// dataFS mounts a 64 MiB tmpfs for the data directory (root only; the
// suite fails without it under CI=true, which runs as root).
func dataFS(t *testing.T, dir string) string {
	fs := filepath.Join(dir, "datafs")
	if err := os.MkdirAll(fs, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", fs).CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount a tmpfs (CI runs as root): %v %s", err, out)
		}
		t.Skipf("the fault suite needs root to mount a small data filesystem: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", fs).Run() })
	return fs
}

// TestFaultSuite is issue 32's fault suite: (a), (c) and (d) on a cuasd
// with the embedded NATS, (b) on one using an external nats-server cluster.
func TestFaultSuite(t *testing.T) {
	if os.Getenv(faultEnv) == "" {
		t.Skipf("set %s=1 (make faults) to run the fault suite (about 6 minutes)", faultEnv)
	}
	broker := mosquittotest.Start(t, "")
	summary := &strings.Builder{}
	defer func() { t.Logf("fault suite figures:\n%s", summary) }()
	t.Run("embedded", func(t *testing.T) { embeddedFaults(t, broker, summary) })
	t.Run("cluster", func(t *testing.T) { clusterFault(t, broker, summary) })
	if out := os.Getenv("CUAS_FAULT_SUMMARY"); out != "" {
		_ = os.WriteFile(out, []byte(summary.String()), 0o644)
	}
}

func embeddedFaults(t *testing.T, broker string, summary *strings.Builder) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dir := t.TempDir()
	fs := dataFS(t, dir)
	r := &rig{t: t, dir: dir, summary: summary}
	natsPort := freePorts(t, 1)[0]
	r.start(ctx, broker, "--data-dir", filepath.Join(fs, "data"), "--disk-low-mark", "8MiB",
		"--nats-listen", fmt.Sprintf("127.0.0.1:%d", natsPort))
	defer cancel()
	r.subscribeEvents(r.natsURL)
	r.recovered(ctx, "start", time.Now())

	r.recovered(ctx, "(a) SIGSTOP 40 s", r.stall(ctx))
	r.recovered(ctx, "(c) data filesystem full for 30 s", r.fullDisk(ctx, fs))

	before := r.peakRSS.Load()
	sniffed, refused := r.flood(ctx)
	end := time.Now()
	r.recovered(ctx, "(d) 40 × 8 MB raw flood and _INBOX.> sniffer", end)
	fmt.Fprintf(summary, "(d) sniffer read %d messages on _INBOX.>; flood refused: %v; peak RSS %d MiB before the flood, %d MiB after\n",
		sniffed, refused, before>>20, r.peakRSS.Load()>>20)
	if sniffed != 0 {
		t.Errorf("an anonymous client read %d messages on _INBOX.> (cuasd's replies must be private)", sniffed)
	}
	if p := r.peakRSS.Load(); p > faultMemBound {
		t.Errorf("cuasd's peak RSS %d MiB is over the bound of %d MiB", p>>20, faultMemBound>>20)
	}
	r.checkAlertsOnce(ctx)
	var hist struct {
		Failed, Dropped float64
	}
	hist.Failed = r.metric(ctx, `cuasd_history_points_total{result="failed"}`)
	hist.Dropped = r.metric(ctx, `cuasd_history_points_total{result="dropped"}`)
	fmt.Fprintf(summary, "history: %v points failed, %v dropped (counted); restarts %v\n", hist.Failed, hist.Dropped, r.metric(ctx, "cuasd_component_restarts_total"))
	r.p.stop(20 * time.Second)
}

// feedConsumerHost names the server holding the fusion feed's consumer
// of CUAS_RAW (an ordered consumer, one replica).
func feedConsumerHost(ctx context.Context, t *testing.T, urls string) string {
	nc, err := nats.Connect(urls)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	host, err := natstest.ConsumerHost(ctx, js, "CUAS_RAW")
	if err != nil || host == "" {
		t.Fatalf("the fusion feed's consumer of CUAS_RAW: %q, %v", host, err)
	}
	return host
}

// cuasdNode names the node cuasd's connection is on.
func cuasdNode(nodes []*natsNode) string {
	for _, nd := range nodes {
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(fmt.Sprintf("http://127.0.0.1:%d/connz", nd.monitorPort))
		if err != nil {
			continue
		}
		var cz struct {
			Connections []struct{ Name string }
		}
		_ = json.NewDecoder(resp.Body).Decode(&cz)
		resp.Body.Close()
		for _, c := range cz.Connections {
			if c.Name == "cuasd" {
				return nd.name
			}
		}
	}
	return "?"
}

func clusterFault(t *testing.T, broker string, summary *strings.Builder) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	nodes := newNATSCluster(ctx, t, dir, 3)
	urls := clientURLs(nodes)
	r := &rig{t: t, dir: dir, summary: summary}
	r.start(ctx, broker, "--data-dir", filepath.Join(dir, "data"), "--nats-url", urls, "--replicas", "3")
	r.natsURL = urls
	r.subscribeEvents(urls)
	r.recovered(ctx, "cluster start", time.Now())

	// Restart one node: stop it, wait, start it again on the same store.
	// The node is the one holding the fusion feed's consumer (an ordered
	// consumer has one replica): the worst case, where nothing but its
	// missing heartbeats tells cuasd that the consumer is gone — unless
	// cuasd is connected to that node too (one time in three), and its
	// reconnect re-creates the consumer.
	host, conn := feedConsumerHost(ctx, t, urls), cuasdNode(nodes)
	var n *natsNode
	for _, nd := range nodes {
		if nd.name == host {
			n = nd
		}
	}
	if n == nil {
		t.Fatalf("the fusion feed's consumer is on %q, not a node of the cluster", host)
	}
	fmt.Fprintf(summary, "(b) restarting %s, which holds the fusion feed's consumer; cuasd is connected to %s\n", n.name, conn)
	n.p.stop(10 * time.Second)
	time.Sleep(5 * time.Second)
	startNATSNode(t, dir, n)
	r.recovered(ctx, "(b) external nats-server restarted", time.Now())
	r.checkAlertsOnce(ctx)
	r.p.stop(20 * time.Second)
}
