package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGatePolicyFile (issue 33): --gate-policy sets the hysteresis and
// the thresholds; an unknown key, a wrong type or an invalid value is
// refused naming the file and line.
func TestGatePolicyFile(t *testing.T) {
	p, err := parseGatePolicy("p.yaml", []byte("alert_fall_margin: 0.08\nmin_hold_s: 45\nweights: [0.16, 0.10, 0.07, 0.05, 0.12, 0.07, 0.06, 0.08, 0.08, 0.06, 0.05, 0.05, 0.05]\n"))
	if err != nil || p.AlertFallMargin != 0.08 || p.MinHoldS != 45 || p.Weights[0] != 0.16 || p.AlertAt != 0 {
		t.Fatalf("policy %+v, err %v", p, err)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"alert_at: 0.4\nmin_hold: 30\n", "gate policy p.yaml:2: field min_hold not found"},
		{"min_hold_s: soon\n", "gate policy p.yaml:1: cannot unmarshal"},
		{"alert_fall_margin: 0.6\n", "alert_fall_margin: must not exceed alert_at"},
		{"min_hold_s: -1\n", "min_hold_s: must be a number in [0, 86400]"},
	} {
		if _, err := parseGatePolicy("p.yaml", []byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.yaml, err, tc.want)
		}
	}
	if p, err := parseGatePolicy("p.yaml", nil); err != nil || p.MinHoldS != 0 {
		t.Errorf("empty file: %+v %v (want the defaults)", p, err)
	}
}

// TestServeRefusesBadGatePolicy: a bad --gate-policy stops serve before
// anything starts, naming the file and line.
func TestServeRefusesBadGatePolicy(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(f, []byte("min_hold_s: 30\nmin_hold: 10\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"serve", "--demo", "--data-dir", dir, "--gate-policy", f}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "gate policy "+f+":2: field min_hold not found") {
		t.Fatalf("got %v", err)
	}
}
