package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/gate/board"
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
