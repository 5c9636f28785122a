package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A doc example is one shell command line (continuations joined) of a
// ```sh block in README.md or docs/*.md.
type docExample struct {
	file  string
	line  int
	cmd   string
	block string // file:line of the fence
}

// docSkip marks what the doc-example test cannot run, with the reason:
// "<!-- doc-test: skip REASON -->" on the line before a fence skips the
// block, "# doc-test: skip REASON" at the end of a line skips the line.
var docSkip = regexp.MustCompile(`doc-test: skip (.+?)\s*(-->)?$`)

// docExamples reads the runnable examples of one Markdown file and the
// skipped ones with their reasons.
func docExamples(t *testing.T, path string) (run []docExample, skipped []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	inBlock, skipBlock, block := false, "", ""
	var cur *docExample
	for i, l := range lines {
		trim := strings.TrimSpace(l)
		switch {
		case !inBlock && (trim == "```sh" || trim == "```bash"):
			inBlock, skipBlock, block = true, "", fmt.Sprintf("%s:%d", path, i+1)
			if i > 0 {
				if m := docSkip.FindStringSubmatch(lines[i-1]); m != nil && strings.HasPrefix(strings.TrimSpace(lines[i-1]), "<!--") {
					skipBlock = m[1]
				}
			}
			continue
		case inBlock && trim == "```":
			inBlock = false
			continue
		case !inBlock || trim == "" || (strings.HasPrefix(trim, "#") && cur == nil):
			continue
		}
		if cur == nil {
			cur = &docExample{file: path, line: i + 1, block: block}
		}
		if t, ok := strings.CutSuffix(trim, "\\"); ok {
			cur.cmd += t + " " // a continuation: one line for the shell
			continue
		}
		cur.cmd += trim + "\n"
		if strings.HasSuffix(trim, "|") || strings.HasSuffix(trim, "&&") || openQuote(cur.cmd) {
			continue
		}
		ex := *cur
		cur = nil
		ex.cmd = strings.TrimSpace(ex.cmd)
		if skipBlock != "" {
			if n := len(skipped); n == 0 || !strings.HasSuffix(skipped[n-1], "("+skipBlock+")") {
				skipped = append(skipped, fmt.Sprintf("%s (%s)", ex.block, skipBlock)) // one entry per block
			}
			continue
		}
		if m := docSkip.FindStringSubmatch(ex.cmd); m != nil {
			skipped = append(skipped, fmt.Sprintf("%s:%d (%s)", path, ex.line, m[1]))
			continue
		}
		run = append(run, ex)
	}
	return run, skipped
}

// openQuote reports whether s ends inside a quoted string (the command
// goes on on the next line).
func openQuote(s string) bool {
	var q byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q == 0 && c == '#' && (i == 0 || s[i-1] == ' '):
			for i < len(s) && s[i] != '\n' {
				i++ // a comment: its quotes do not count
			}
		case q == 0 && (c == '\'' || c == '"'):
			q = c
		case q == '"' && c == '\\':
			i++
		case c == q:
			q = 0
		}
	}
	return q != 0
}

// maxDocSkips bounds the doc-test: skip markers (a marked block counts
// once): the list must stay small (issue 34).
const maxDocSkips = 24

// TestDocExamples runs every command and curl line of README.md and
// docs/*.md against a running demo, as a newcomer pasting them into a
// shell would (issue 34): in a directory holding the shipped sample files
// (testdata/examples) and data/ (the demo's data directory, as make run
// makes it), with bin/cuasd and cuasd this binary, localhost:8080 the
// demo's HTTP address and curl failing on an HTTP error. A `cuasd serve`
// line passes when it reaches "cuasd serving" on free ports. Examples
// that cannot run here (hardware, another host) carry a doc-test: skip
// marker with the reason; there are at most maxDocSkips.
func TestDocExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the demo and runs every documented example")
	}
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is required under CI: %v", tool, err)
			}
			t.Skipf("%s not installed: %v", tool, err)
		}
	}
	files, _ := filepath.Glob("../../docs/*.md")
	files = append([]string{"../../README.md"}, files...)
	var all []docExample
	var skipped []string
	for _, f := range files {
		r, s := docExamples(t, f)
		all, skipped = append(all, r...), append(skipped, s...)
	}
	if len(skipped) > maxDocSkips {
		t.Errorf("%d examples marked doc-test: skip, more than %d:\n%s", len(skipped), maxDocSkips, strings.Join(skipped, "\n"))
	}
	t.Logf("%d examples to run, %d marked not runnable", len(all), len(skipped))
	work := docWorkdir(t)
	demo := startChild(t, filepath.Join(work, "data"), "--demo", "--nats-listen", "127.0.0.1:0")
	// A child outlives the test unless stopped: this demo kept running
	// (and using CPU) after make test, until its next log line met the
	// closed pipe.
	defer stopChild(t, demo)
	httpAddr := strings.TrimPrefix(strings.TrimSuffix(demo.base, "/api/cuas"), "http://")
	awaitDemoTraffic(t, demo.base)
	env := append(os.Environ(), "PATH="+filepath.Join(work, "bin")+":"+os.Getenv("PATH"), "CUAS_DOCTEST_HTTP="+httpAddr,
		"TOKEN=doc-example-token") // the demo has no --auth-tokens: any bearer passes
	for _, ex := range all {
		name := fmt.Sprintf("%s:%d", strings.TrimPrefix(ex.file, "../../"), ex.line)
		cmd := strings.NewReplacer("localhost:8080", httpAddr, "127.0.0.1:8080", httpAddr).Replace(ex.cmd)
		t.Run(name, func(t *testing.T) {
			if isServeExample(cmd) {
				runServeExample(t, work, env, cmd)
				return
			}
			// The lines of a block share their shell variables (NEW=…
			// then "$NEW"), kept in a file per block.
			state := filepath.Join(work, ".state-"+regexp.MustCompile(`\W`).ReplaceAllString(ex.block, "_"))
			script := "set -a; [ -f " + state + " ] && . " + state + "; set -o pipefail\n" + cmd + "\nrc=$?; export -p > " + state + "; exit $rc"
			c := exec.Command("bash", "-c", script)
			c.Dir, c.Env = work, env
			out, err := runBounded(c, 60*time.Second)
			if err != nil {
				t.Errorf("%s\n$ %s\n%v\n%s", name, ex.cmd, err, clipOut(out))
			}
		})
	}
}

// docWorkdir is the examples' working directory: the shipped sample
// files, bin/cuasd and cuasd (this test binary as the program), a curl
// that fails on HTTP errors, and data/ for the demo.
func docWorkdir(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	work := filepath.Join(root, "cuasd")
	if err := os.CopyFS(work, os.DirFS("../../testdata/examples")); err != nil {
		t.Fatal(err)
	}
	// The repository's files, as in a clone (deploy/, ingest/…), and
	// ../shared beside it.
	ents, _ := os.ReadDir("../..")
	for _, e := range ents {
		if n := e.Name(); n != "bin" && n != "data" && !strings.HasPrefix(n, ".") {
			abs, _ := filepath.Abs(filepath.Join("../..", n))
			_ = os.Symlink(abs, filepath.Join(work, n))
		}
	}
	shared := os.Getenv("CUAS_SHARED")
	if shared == "" {
		shared = "../../../shared"
	}
	if abs, err := filepath.Abs(shared); err == nil {
		_ = os.Symlink(abs, filepath.Join(root, "shared"))
	}
	bin := filepath.Join(work, "bin")
	_ = os.MkdirAll(bin, 0o755)
	self, _ := os.Executable()
	wrapper := "#!/bin/sh\nCUASD_TEST_AS_MAIN=1 exec " + self + " \"$@\"\n"
	curl, _ := exec.LookPath("curl")
	for name, body := range map[string]string{
		"cuasd": wrapper,
		"curl":  "#!/bin/sh\nexec " + curl + " --fail-with-body \"$@\"\n",
	} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return work
}

// awaitDemoTraffic waits until the demo has the tracks the examples name.
func awaitDemoTraffic(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		_, body := get(t, base+"/v1/tracks/"+demoAircraft+"/history")
		if strings.Count(string(body), `"time"`) >= 3 {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("the demo has no history of %s after 60 s", demoAircraft)
}

// demoAircraft is an aircraft of the demo's scenario (sim.DefaultDemo,
// seed 0), the track the examples use.
const demoAircraft = "adsb:66AB7E"

func isServeExample(cmd string) bool {
	return regexp.MustCompile(`(^|\s|/)cuasd serve( |$)`).MatchString(cmd) && !strings.Contains(cmd, "--help")
}

// runServeExample runs a `cuasd serve` line on free ports and a fresh
// data directory (CUAS_* environment, which the line's own flags
// override) and passes when it reports "cuasd serving".
func runServeExample(t *testing.T, work string, env []string, cmd string) {
	cmd = freeListenPorts(cmd)
	c := exec.Command("bash", "-c", cmd)
	c.Dir = work
	c.Env = append(env, "CUAS_HTTP_ADDR=127.0.0.1:0", "CUAS_NATS_LISTEN=off", "CUAS_DATA_DIR="+t.TempDir())
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := c.StdoutPipe()
	var errb strings.Builder
	c.Stderr = &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL); _ = c.Wait() }()
	served := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "cuasd serving ") {
				served <- true
				return
			}
		}
		served <- false
	}()
	select {
	case ok := <-served:
		if !ok {
			time.Sleep(100 * time.Millisecond) // let stderr drain
			t.Errorf("$ %s\nexited before serving:\n%s", cmd, clipOut([]byte(errb.String())))
		}
	case <-time.After(60 * time.Second):
		t.Errorf("$ %s\ndid not serve within 60 s:\n%s", cmd, clipOut([]byte(errb.String())))
	}
}

// listenFlag matches the address of a flag that binds a listener, up to
// its port: a documented port (30004, 14550, …) may be taken on the
// machine running the tests, or by the serve line run just before.
var listenFlag = regexp.MustCompile(`(--(?:nats-listen|beast-listen|avr-listen|mavlink-udp|mavlink-tcp|json-udp|sbs-listen|beast-out-listen|http-addr)[= ]['"]?(?:\[[^\]]*\]|[^\s'":/?]*)):(\d+)`)

// freeListenPorts gives every listener of a serve line port 0 (a free
// port), keeping its host and options.
func freeListenPorts(cmd string) string { return listenFlag.ReplaceAllString(cmd, "${1}:0") }

// runBounded runs c with its output collected, killing its process group
// after d.
func runBounded(c *exec.Cmd, d time.Duration) ([]byte, error) {
	var buf strings.Builder
	c.Stdout, c.Stderr = &buf, &buf
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		return []byte(buf.String()), err
	case <-ctx.Done():
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		<-done
		return []byte(buf.String()), fmt.Errorf("did not finish within %s", d)
	}
}

func clipOut(b []byte) string {
	if len(b) > 2000 {
		b = append(b[:2000:2000], "…"...)
	}
	return string(b)
}

func TestFreeListenPorts(t *testing.T) {
	for in, want := range map[string]string{
		"bin/cuasd serve --beast-listen '0.0.0.0:30004?clock=gps' --sbs-listen 127.0.0.1:30003":          "bin/cuasd serve --beast-listen '0.0.0.0:0?clock=gps' --sbs-listen 127.0.0.1:0",
		"cuasd serve --mavlink-udp=127.0.0.1:14550 --json-udp [::]:6000 --cot-udp 239.2.3.1:6969":        "cuasd serve --mavlink-udp=127.0.0.1:0 --json-udp [::]:0 --cot-udp 239.2.3.1:6969",
		"cuasd serve --beast-listen :30004 --beast-connect radar:30005 --mqtt-url mqtt://localhost:1883": "cuasd serve --beast-listen :0 --beast-connect radar:30005 --mqtt-url mqtt://localhost:1883",
	} {
		if got := freeListenPorts(in); got != want {
			t.Errorf("freeListenPorts(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}
