package cot

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// nodeCoT is what testdata/nodecot/parse.mjs read from one document with
// @tak-ps/node-cot 14.23.2 (JSON keys match the fields case-insensitively).
type nodeCoT struct {
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

var npmOnce sync.Once
var npmErr error

// parseWithNodeCoT parses docs with @tak-ps/node-cot. It installs the
// committed lock file's packages (npm ci) when node_modules is missing;
// without npm it skips, except under CI=true, where it fails.
func parseWithNodeCoT(t *testing.T, docs [][]byte) []nodeCoT {
	t.Helper()
	dir := filepath.Join("testdata", "nodecot")
	npm, errNPM := exec.LookPath("npm")
	node, errNode := exec.LookPath("node")
	if errNPM != nil || errNode != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node and npm are required under CI=true (apt-get install nodejs npm)")
		}
		t.Skip("node/npm not installed: the independent CoT parser check is skipped")
	}
	npmOnce.Do(func() {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@tak-ps", "node-cot")); err == nil {
			return
		}
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			npmErr = &Error{Flag: "npm ci", Err: exec.ErrNotFound}
			t.Logf("npm ci: %v\n%s", err, out)
		}
	})
	if npmErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(npmErr)
		}
		t.Skip("npm ci failed (offline?): the independent CoT parser check is skipped")
	}
	strs := make([]string, len(docs))
	for i, d := range docs {
		strs[i] = string(d)
	}
	in, _ := json.Marshal(strs)
	cmd := exec.Command(node, "parse.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node parse.mjs: %v\n%s", err, stderr.String())
	}
	var res []nodeCoT
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("parse.mjs output: %v\n%s", err, out)
	}
	if len(res) != len(docs) {
		t.Fatalf("node-cot returned %d results for %d documents", len(res), len(docs))
	}
	return res
}
