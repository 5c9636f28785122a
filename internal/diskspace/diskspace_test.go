package diskspace

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestMarks walks one store through free-space readings: low below Low,
// well again only at High (no flapping at the mark), full remembered until
// the recovery, and an unreadable filesystem reported without changing
// the state.
func TestMarks(t *testing.T) {
	free := uint64(500) // New checks once
	var ferr error
	type recovery struct {
		store   string
		wasFull bool
	}
	var got []recovery
	reg := prometheus.NewRegistry()
	w := New(Config{
		Stores: []Store{{Name: "data directory", Path: "/d"}},
		Low:    100, Full: 10,
		Free:      func(string) (uint64, error) { return free, ferr },
		OnRecover: func(s Store, wasFull bool) { got = append(got, recovery{s.Name, wasFull}) },
	}, reg)
	for i, step := range []struct {
		free      uint64
		err       error
		wantLow   bool
		recovered []recovery
	}{
		{free: 500},
		{free: 99, wantLow: true},
		{free: 150, wantLow: true}, // above Low, below High (200): still low
		{free: 200, recovered: []recovery{{"data directory", false}}},
		{free: 150},                // above Low: well
		{free: 5, wantLow: true},   // full at once
		{free: 120, wantLow: true}, // space returning
		{free: 0, err: errors.New("statfs: input/output error"), wantLow: true},
		{free: 1000, recovered: []recovery{{"data directory", true}}},
	} {
		free, ferr, got = step.free, step.err, nil
		w.Check()
		if err := w.Refuse(); (err != nil) != step.wantLow {
			t.Fatalf("step %d (free %d): Refuse = %v, want low %v", i, step.free, err, step.wantLow)
		}
		if len(got) != len(step.recovered) || (len(got) > 0 && got[0] != step.recovered[0]) {
			t.Fatalf("step %d: recovered %v, want %v", i, got, step.recovered)
		}
		low := w.Low()
		if step.err != nil {
			if len(low) != 2 || !strings.Contains(low[1], "free space unknown: statfs: input/output error") {
				t.Fatalf("step %d: Low = %q", i, low)
			}
			continue
		}
		if g := testutil.ToFloat64(w.free.WithLabelValues("data directory")); g != float64(step.free) {
			t.Fatalf("step %d: gauge %v, want %d", i, g, step.free)
		}
		if step.wantLow && (len(low) != 1 || !strings.Contains(low[0], "disk: data directory /d: ") || !strings.Contains(low[0], "below the low mark of 100 B")) {
			t.Fatalf("step %d: Low = %q", i, low)
		}
	}
	var nilW *Watch
	if nilW.Refuse() != nil || nilW.Low() != nil {
		t.Fatal("a nil watch refuses")
	}
}

// TestStatfs reads the free space of a real filesystem.
func TestStatfs(t *testing.T) {
	n, err := statfsFree(t.TempDir())
	if err != nil || n == 0 {
		t.Fatalf("statfs = %d, %v", n, err)
	}
	if _, err := statfsFree("/nonexistent/cuasd"); err == nil {
		t.Fatal("statfs of a missing path succeeded")
	}
}

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {3 << 20, "3.0 MiB"}, {5 << 30, "5.0 GiB"}, {1 << 50, "1.0 PiB"}} {
		if got := Bytes(tc.n); got != tc.want {
			t.Errorf("Bytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
