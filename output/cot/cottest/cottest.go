// Package cottest runs the CoT that cuasd produces through an independent
// implementation, the npm package @tak-ps/node-cot 14.23.2 (its parser and
// schema validation), for the tests of output/cot and of `cuasd serve`. It
// is test support: non-test code must not import it.
package cottest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// Parsed is what node-cot read from one document (JSON keys of
// testdata/nodecot/parse.mjs, matched case-insensitively).
type Parsed struct {
	// Error is set when node-cot rejected the document.
	Error                             string
	UID, Type, How, Time, Start       string
	Stale                             string
	Lat, Lon, Hae, CE, LE             float64
	Callsign, Remarks                 string
	Course, Speed                     *float64
	Links                             []map[string]any
	Stroke, Fill, Geometry            string
	Vertices                          int
	Hostile, Friend, Airborne, Ground bool
}

// Dir is the node project (package.json, package-lock.json, parse.mjs).
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "nodecot")
}

// Parse parses docs with node-cot. It runs `npm ci` (the committed lock
// file) when node_modules is missing, under a file lock so that parallel
// test packages do not install at once. Without node and npm it skips the
// test, except under CI=true, where it fails.
func Parse(tb testing.TB, docs [][]byte) []Parsed {
	tb.Helper()
	return run(tb, docs, func(d []byte) any { return string(d) })
}

// ParseProto parses TAK Protocol version 1 TakMessages (protobuf, without
// the mesh or stream header) with node-cot's from_proto.
func ParseProto(tb testing.TB, msgs [][]byte) []Parsed {
	tb.Helper()
	return run(tb, msgs, func(m []byte) any { return map[string][]byte{"proto": m} })
}

func run(tb testing.TB, docs [][]byte, item func([]byte) any) []Parsed {
	tb.Helper()
	node := install(tb)
	items := make([]any, len(docs))
	for i, d := range docs {
		items[i] = item(d)
	}
	in, _ := json.Marshal(items)
	cmd := exec.Command(node, "parse.mjs")
	cmd.Dir = Dir()
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("node parse.mjs: %v\n%s", err, stderr.String())
	}
	var res []Parsed
	if err := json.Unmarshal(out, &res); err != nil {
		tb.Fatalf("parse.mjs output: %v\n%s", err, out)
	}
	if len(res) != len(docs) {
		tb.Fatalf("node-cot returned %d results for %d documents", len(res), len(docs))
	}
	return res
}

// missing skips, or fails under CI=true.
func missing(tb testing.TB, why string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatal(why + " (required under CI=true; .ci/run installs it)")
	}
	tb.Skip(why + ": the independent CoT parser check is skipped")
}

// install returns node's path once node-cot is installed.
func install(tb testing.TB) string {
	tb.Helper()
	npm, errNPM := exec.LookPath("npm")
	node, errNode := exec.LookPath("node")
	if errNPM != nil || errNode != nil {
		missing(tb, "node and npm are not installed")
	}
	dir := Dir()
	lock, err := os.OpenFile(filepath.Join(dir, ".install.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@tak-ps", "node-cot", "package.json")); err == nil {
		return node
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Logf("npm ci: %v\n%s", err, out)
		missing(tb, "npm ci failed (offline?)")
	}
	return node
}
