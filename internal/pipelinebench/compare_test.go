package pipelinebench

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/internal/testcapture"
	"github.com/cuasd/cuasd/internal/testshared"
)

// TestCompareWithDump1090 is `make bench-compare`: the real Beast capture,
// repeated to a few million Mode S frames, is sent over TCP as fast as each
// takes it to cuasd (--beast-listen: stored in JetStream, decoded, fused,
// scored, events published) and to Debian's dump1090-mutability (Beast
// input port, decoding only), one after the other in the same run. For
// each it reports the wall rate (frames over the time from the first byte
// sent until the process has gone idle) and frames per CPU-second (the
// process's user+system time from /proc), and the ratio.
func TestCompareWithDump1090(t *testing.T) {
	if os.Getenv("CUAS_BENCH_COMPARE") != "1" {
		t.Skip("set CUAS_BENCH_COMPARE=1 (make bench-compare) to compare with dump1090-mutability")
	}
	capture, err := os.ReadFile(testshared.Path(t, "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin"))
	if err != nil {
		t.Fatal(err)
	}
	repeat := 200
	if v, err := strconv.Atoi(os.Getenv("CUAS_BENCH_REPEAT")); err == nil && v > 0 {
		repeat = v
	}
	// One continuous feed, not the same minute 200 times: repeated
	// receiver timestamps are exact duplicates to cuasd since issue 30,
	// and each repetition would look like a receiver restart.
	data, frames, err := testcapture.Continued(capture, repeat, captureGap)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("machine: %s; %d Mode S frames (the capture ×%d, %d MB)", machine(), frames, repeat, len(data)>>20)

	cu := runCuasd(t, data, frames)
	t.Logf("cuasd:  %s", cu.line(frames))
	d1090, err := exec.LookPath("dump1090-mutability")
	if err != nil {
		t.Skip("dump1090-mutability is not installed (Debian package dump1090-mutability): cuasd measured alone")
	}
	du := runDump1090(t, d1090, data)
	t.Logf("dump1090-mutability: %s", du.line(frames))
	t.Logf("cuasd / dump1090: wall rate %.2f×, frames per CPU-second %.2f×",
		du.wall.Seconds()/cu.wall.Seconds(), du.cpu.Seconds()/cu.cpu.Seconds())
}

// result is one process's run.
type result struct {
	wall, cpu time.Duration
}

func (r result) line(frames int) string {
	return strconv.FormatFloat(float64(frames)/r.wall.Seconds(), 'f', 0, 64) + " frames/s wall, " +
		strconv.FormatFloat(float64(frames)/r.cpu.Seconds(), 'f', 0, 64) + " frames per CPU-second (" +
		r.cpu.Round(time.Millisecond).String() + " CPU in " + r.wall.Round(time.Millisecond).String() + ")"
}

// captureGap is the receiver time (12 MHz ticks) testcapture.Continued puts
// between the last frame of one repetition and the first of the next:
// 100 ms, a quiet moment on a receiver.
const captureGap = 12_000_000 / 10

func runCuasd(t *testing.T, data []byte, frames int) result {
	t.Helper()
	// CUAS_BENCH_CUASD names a cuasd binary built elsewhere (another
	// commit's, for a before/after on the same feed); by default this
	// tree's is built.
	bin := os.Getenv("CUAS_BENCH_CUASD")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "cuasd")
		if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/cuasd").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	cmd := exec.Command(bin, "serve", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0", "--nats-listen", "off",
		"--beast-listen", "127.0.0.1:0", "--track-ttl", "10m", "--log-level", "warn", "--raw-max-bytes", "8GiB")
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var beast, base string
	sc := bufio.NewScanner(stdout)
	for base == "" && sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "cuasd adapter beast="); ok {
			beast = a
		}
		if u, ok := strings.CutPrefix(sc.Text(), "cuasd serving "); ok {
			base = u
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	if beast == "" {
		t.Fatal("cuasd printed no beast adapter address")
	}
	metrics := strings.TrimSuffix(base, "/api/cuas/") + "/metrics"
	// cuasd has background work (sweeps, ownership), so it never goes
	// idle: it is done when it has handled every frame sent (decoded,
	// rejected, or dropped as an exact duplicate).
	handled := func() float64 {
		return metricSum(metrics, "cuasd_frames_decoded_total") + metricSum(metrics, "cuasd_frames_rejected_total") +
			metricSum(metrics, "cuasd_frames_duplicate_total")
	}
	r := measureUntil(t, cmd.Process.Pid, beast, data, func() bool { return handled() >= float64(frames) })
	t.Logf("cuasd decoded %.0f frames, rejected %.0f, dropped %.0f as exact duplicates, found %.0f receiver clock restarts; applied %.0f observations",
		metricSum(metrics, "cuasd_frames_decoded_total"), metricSum(metrics, "cuasd_frames_rejected_total"),
		metricSum(metrics, "cuasd_frames_duplicate_total"), metricSum(metrics, "cuasd_sensor_clock_resets_total"),
		metricSum(metrics, "cuasd_observations_applied_total"))
	// Fixes the history recorder dropped (its queue full) would make it
	// look cheaper than it is: said, so a run that drops is seen.
	t.Logf("cuasd history: %.0f fixes dropped for a full queue", metricSum(metrics, `cuasd_history_points_total{result="dropped"}`))
	if h := handled(); h < float64(frames) {
		t.Errorf("cuasd handled %.0f of the %d frames sent within the deadline: the rate above is not a rate", h, frames)
	}
	return r
}

func runDump1090(t *testing.T, bin string, data []byte) result {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(bin, "--net-only", "--quiet", "--net-bind-address", "127.0.0.1", "--net-bi-port", strconv.Itoa(port),
		"--net-ri-port", "0", "--net-ro-port", "0", "--net-sbs-port", "0", "--net-bo-port", "0", "--net-http-port", "0",
		"--net-buffer", "2")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("dump1090 did not listen")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	return measure(t, cmd.Process.Pid, addr, data)
}

// measure sends data to addr and waits until pid has been idle (under 2%
// of a core) for half a second; the idle tail is not counted as wall time.
func measure(t *testing.T, pid int, addr string, data []byte) result {
	t.Helper()
	idleBefore(pid, time.Minute)
	return measureUntil(t, pid, addr, data, nil)
}

// measureUntil sends data to addr and waits until done reports true
// (polled every 20 ms), or, with done nil, until pid is idle.
func measureUntil(t *testing.T, pid int, addr string, data []byte, done func() bool) result {
	t.Helper()
	cpu0 := procCPU(t, pid)
	start := time.Now()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(data); err != nil {
		t.Fatal(err)
	}
	sent := time.Since(start)
	var end time.Time
	if done == nil {
		end = idleBefore(pid, 5*time.Minute)
	} else {
		deadline := time.Now().Add(2 * time.Minute)
		for !done() && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		end = time.Now()
	}
	cpu := procCPU(t, pid) - cpu0
	c.Close()
	return result{wall: max(end.Sub(start), sent), cpu: cpu}
}

// metricSum is the sum of every sample of a metric at url (0 on error).
func metricSum(url, name string) float64 {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	sum := 0.0
	for _, l := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(l, name); ok && (rest[0] == ' ' || rest[0] == '{') {
			if v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64); err == nil {
				sum += v
			}
		}
	}
	return sum
}

// idleBefore waits until pid used under 2% of a core over 500 ms and
// returns when that quiet period began.
func idleBefore(pid int, limit time.Duration) time.Time {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		t0, c0 := time.Now(), procCPUQuiet(pid)
		time.Sleep(500 * time.Millisecond)
		if d := procCPUQuiet(pid) - c0; d < 10*time.Millisecond {
			return t0
		}
	}
	return time.Now()
}

func procCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	d := procCPUQuiet(pid)
	if d < 0 {
		t.Fatalf("cannot read /proc/%d/stat", pid)
	}
	return d
}

// procCPUQuiet is a process's user+system CPU time from /proc (-1 on
// error).
func procCPUQuiet(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// Fields after the command (which may hold spaces) start after ')'.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const hz = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / hz
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
