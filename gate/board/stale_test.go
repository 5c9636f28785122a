package board

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestBoardStaleness: a board whose last sweep is older than StaleAfter
// says so, in its metrics and through Staleness; it used to carry only its
// generated_at while everything reported healthy (issue 23, item 5).
func TestBoardStaleness(t *testing.T) {
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	st := newTestStore(c)
	obs := ridObs("U1", 52, 4, c.t.UnixNano())
	st.Apply(&obs)
	reg := prometheus.NewRegistry()
	b := New(Config{Store: st, Now: c.now, Interval: 500 * time.Millisecond}, reg)
	b.Sweep(context.Background())
	if lag, stale := b.Staleness(); stale || lag != 0 {
		t.Fatalf("fresh board: lag %v stale %v", lag, stale)
	}
	c.t = c.t.Add(4 * time.Second)
	if b.Stale() {
		t.Errorf("4 s old board is stale; the threshold is %v", b.StaleAfter())
	}
	c.t = c.t.Add(3 * time.Second)
	lag, stale := b.Staleness()
	if !stale || lag != 7*time.Second {
		t.Errorf("7 s old board: lag %v stale %v", lag, stale)
	}
	want := `
# HELP cuasd_gate_board_stale 1 while the threat board is older than its stale threshold.
# TYPE cuasd_gate_board_stale gauge
cuasd_gate_board_stale 1
# HELP cuasd_gate_sweep_lag_seconds Age of the threat board: time since the latest published sweep began.
# TYPE cuasd_gate_sweep_lag_seconds gauge
cuasd_gate_sweep_lag_seconds 7
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "cuasd_gate_board_stale", "cuasd_gate_sweep_lag_seconds"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(reg, "cuasd_gate_sweep_last_seconds", "cuasd_gate_sweep_overruns_total"); err != nil || n != 2 {
		t.Errorf("sweep duration metrics: %d, %v", n, err)
	}
	b.Sweep(context.Background())
	if b.Stale() {
		t.Error("a new sweep did not make the board fresh")
	}
	// A longer interval raises the threshold: four intervals.
	if got := New(Config{Store: st, Now: c.now, Interval: 3 * time.Second}, nil).StaleAfter(); got != 12*time.Second {
		t.Errorf("StaleAfter with a 3 s interval: %v", got)
	}
}
