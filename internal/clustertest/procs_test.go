package clustertest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cuasd/cuasd/internal/testshared"
)

// binDir holds the binaries built once per test run (see TestMain).
var (
	binDir    string
	buildMu   sync.Mutex
	builtBins = map[string]string{}
)

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "cuasd-clustertest-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binDir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// buildBinary builds a main package of the module (or of a module go.mod
// requires) once per test run and returns the binary's path.
func buildBinary(t testing.TB, name, pkg string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := builtBins[pkg]; ok {
		return p
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build %s: %v", pkg, err)
	}
	out := filepath.Join(binDir, name)
	cmd := exec.Command(goBin, "build", "-o", out, pkg)
	cmd.Dir = testshared.RepoRoot()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	builtBins[pkg] = out
	return out
}

func cuasdBinary(t testing.TB) string { return buildBinary(t, "cuasd", "./cmd/cuasd") }

func natsServerBinary(t testing.TB) string {
	return buildBinary(t, "nats-server", "github.com/nats-io/nats-server/v2")
}

// proc is a child process whose output goes to a log file; it is killed
// when the test ends if it is still running.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error
	lines   chan string // stdout lines, for start-up announcements
}

// startProc starts bin with args. Standard output is copied to the log file
// and to p.lines; standard error to the log file.
func startProc(t *testing.T, dir, name, bin string, args ...string) *proc {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(logf, "=== %s %s %s\n", time.Now().Format(time.RFC3339Nano), bin, strings.Join(args, " "))
	p := &proc{name: name, logPath: logPath, done: make(chan struct{}), lines: make(chan string, 64)}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = cleanEnv()
	p.cmd.Stderr = logf
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	// Its own process group, so a signal to the test's group (Ctrl-C)
	// does not race the test's own cleanup.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			select {
			case p.lines <- line:
			default:
			}
		}
	}()
	go func() {
		p.err = p.cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		if t.Failed() && p.running() {
			// A Go process dumps its goroutines on SIGQUIT: the log then
			// shows where a stuck process was stuck.
			_ = p.cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case <-p.done:
			case <-time.After(2 * time.Second):
			}
		}
		p.kill()
		if t.Failed() {
			t.Logf("--- last lines of %s (%s):\n%s", name, logPath, tail(logPath, 25))
		}
	})
	return p
}

// cleanEnv is the test's environment without CUAS_* variables, which would
// configure the cuasd under test behind the test's back.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CUAS_") {
			env = append(env, kv)
		}
	}
	return env
}

func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	if p.running() {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-p.done
}

// stop sends SIGTERM and waits up to d, then kills.
func (p *proc) stop(d time.Duration) {
	if p.running() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-p.done:
	case <-time.After(d):
		p.kill()
	}
}

// waitLine waits for a stdout line with the prefix and returns the rest.
func (p *proc) waitLine(ctx context.Context, prefix string) (string, error) {
	for {
		select {
		case l := <-p.lines:
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				return strings.TrimSpace(rest), nil
			}
		case <-p.done:
			return "", fmt.Errorf("%s exited (%v) before printing %q", p.name, p.err, prefix)
		case <-ctx.Done():
			return "", fmt.Errorf("%s did not print %q: %w", p.name, prefix, ctx.Err())
		}
	}
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// freePorts returns n distinct loopback TCP ports that were free a moment
// ago. nats-server cluster routes must be written into the configuration
// before start, so port 0 cannot be used there.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// startCuasd starts `cuasd serve` with args and returns its base URL
// (http://127.0.0.1:PORT/api/cuas) once /readyz answers 200.
func startCuasd(ctx context.Context, t *testing.T, dir, name string, args ...string) (*proc, string) {
	t.Helper()
	// The shared decoder workers publish CUAS_OBS, which this test reads to
	// check that every acknowledged frame was decoded exactly once.
	p := startProc(t, dir, name, cuasdBinary(t), append([]string{"serve", "--publish-observations"}, args...)...)
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	u, err := p.waitLine(wctx, "cuasd serving ")
	if err != nil {
		t.Fatalf("%v\n%s", err, tail(p.logPath, 30))
	}
	base := strings.TrimSuffix(u, "/")
	if err := waitReady(wctx, base+"/readyz"); err != nil {
		t.Fatalf("%s not ready: %v\n%s", name, err, tail(p.logPath, 30))
	}
	return p, base
}

func waitReady(ctx context.Context, url string) error {
	var last error
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Errorf("%s: %d %s", url, resp.StatusCode, bytes.TrimSpace(b))
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
