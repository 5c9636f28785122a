package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimulateFindsTheRunningServe: cuasd simulate, given only the data
// directory of a running cuasd serve whose NATS listens on a port that is
// not the default, publishes to it (issue 34: "no servers available"
// unless --nats-url); the URL file is gone after serve stops, and without
// a running cuasd the error says how to start one or point at it.
func TestSimulateFindsTheRunningServe(t *testing.T) {
	dir := t.TempDir()
	_, stop := startServe(t, "--data-dir", dir, "--nats-listen", "127.0.0.1:0")
	var out bytes.Buffer
	err := run(context.Background(), []string{"simulate", "--data-dir", dir, "--duration", "1s", "--aircraft", "1", "--drones", "1",
		"--mavlink", "0", "--swarm", "0", "--intruders", "0"}, func(string) string { return "" }, &out, &out)
	if err != nil || !strings.Contains(out.String(), "; 0 publish errors") || strings.HasPrefix(out.String(), "simulated 0 ") {
		t.Fatalf("simulate: %v\n%s", err, out.String())
	}
	stop()
	if _, err := os.Stat(filepath.Join(dir, natsURLFile)); !os.IsNotExist(err) {
		t.Errorf("%s after serve stopped: %v", natsURLFile, err)
	}
	err = run(context.Background(), []string{"simulate", "--data-dir", dir, "--nats-url", "nats://127.0.0.1:1", "--duration", "1s"},
		func(string) string { return "" }, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "make run") || !strings.Contains(err.Error(), "--nats-url") {
		t.Fatalf("without a cuasd: %v", err)
	}
}
