package lifecycle

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// recorder notes the order of starts and stops.
type recorder struct {
	mu  sync.Mutex
	log []string
}

func (r *recorder) note(s string) {
	r.mu.Lock()
	r.log = append(r.log, s)
	r.mu.Unlock()
}

func (r *recorder) comp(name string, startErr, runErr error) Component {
	return Component{
		Name: name,
		Start: func(context.Context) error {
			r.note("start " + name)
			return startErr
		},
		Run: func(ctx context.Context) error {
			if runErr != nil {
				return runErr
			}
			<-ctx.Done()
			r.note("ran " + name)
			return nil
		},
		Stop: func(context.Context) error { r.note("stop " + name); return nil },
	}
}

func TestGroupOrder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		build   func(r *recorder) []Component
		cancel  bool
		wantErr string
		want    string
	}{
		{
			name: "shutdown stops in reverse",
			build: func(r *recorder) []Component {
				return []Component{r.comp("bus", nil, nil), r.comp("ledger", nil, nil), r.comp("http", nil, nil)}
			},
			cancel: true,
			want:   "start bus,start ledger,start http,ran http,stop http,ran ledger,stop ledger,ran bus,stop bus",
		},
		{
			name: "start failure stops what started, in reverse",
			build: func(r *recorder) []Component {
				return []Component{r.comp("bus", nil, nil), r.comp("ledger", nil, nil), r.comp("http", errors.New("address in use"), nil)}
			},
			wantErr: "http: address in use",
			want:    "start bus,start ledger,start http,ran ledger,stop ledger,ran bus,stop bus",
		},
		{
			name: "run failure stops everything in reverse",
			build: func(r *recorder) []Component {
				return []Component{r.comp("bus", nil, nil), r.comp("http", nil, errors.New("serve failed")), r.comp("last", nil, nil)}
			},
			wantErr: "http: serve failed",
			want:    "start bus,start http,start last,ran last,stop last,stop http,ran bus,stop bus",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{}
			var g Group
			g.Add(tc.build(r)...)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				go func() { time.Sleep(20 * time.Millisecond); cancel() }()
			}
			err := g.Run(ctx)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
				t.Fatalf("Run = %v, want %q", err, tc.wantErr)
			}
			if got := strings.Join(r.log, ","); got != tc.want {
				t.Fatalf("order:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestRetryReports(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := NewStatus(reg)
	rep := s.Reporter("beast-connect radar:30005", Input)
	if got := testutil.ToFloat64(s.up.WithLabelValues("beast-connect radar:30005")); got != 0 {
		t.Fatalf("gauge before start = %v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	run := Retry(rep, 20*time.Millisecond, func(ctx context.Context, rep Reporter) error {
		calls++
		if calls < 3 {
			return errors.New("connection refused")
		}
		rep.Up()
		cancel()
		return nil
	})
	if err := run(ctx); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot()
	if len(snap) != 1 || snap[0].State != Up || snap[0].Retries != 2 || snap[0].Restarts != 2 || snap[0].LastError != "connection refused" {
		t.Fatalf("snapshot = %+v", snap)
	}
	if got := testutil.ToFloat64(s.up.WithLabelValues("beast-connect radar:30005")); got != 1 {
		t.Fatalf("gauge = %v, want 1", got)
	}
	if got := testutil.ToFloat64(s.restarts.WithLabelValues("beast-connect radar:30005")); got != 2 {
		t.Fatalf("restarts = %v, want 2", got)
	}
	rep.Retrying(errors.New("reset by peer"))
	if nu := s.NotUp(Stage); len(nu) != 0 {
		t.Fatalf("NotUp(Stage) = %q", nu)
	}
	if nu := s.NotUp(Input); len(nu) != 1 || nu[0] != "beast-connect radar:30005: retrying: reset by peer" {
		t.Fatalf("NotUp = %q", nu)
	}
}

// TestRetryRestartsAndReportsRestarting: a loop that ends is restarted
// (state restarting, counted) and one that reconnects on its own is only
// retrying (not a restart).
func TestRetryRestartsAndReportsRestarting(t *testing.T) {
	s := NewStatus(prometheus.NewRegistry())
	rep := s.Reporter("alert sink pager", Output)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan ComponentStatus, 1)
	calls := 0
	run := Retry(rep, 10*time.Millisecond, func(ctx context.Context, rep Reporter) error {
		calls++
		switch calls {
		case 1:
			rep.Up()
			rep.Retrying(errors.New("broker unreachable")) // a reconnect, not a restart
			return errors.New("nats: no heartbeat received")
		case 2:
			seen <- s.Snapshot()[0]
			rep.Up()
			return nil // ended early without an error: restarted too
		}
		cancel()
		return nil
	})
	if err := run(ctx); err != nil {
		t.Fatal(err)
	}
	c := <-seen
	if c.State != Restarting || c.Restarts != 1 || c.Retries != 2 || c.LastError != "nats: no heartbeat received" {
		t.Fatalf("during the restart: %+v", c)
	}
	if c := s.Snapshot()[0]; c.Restarts != 2 || calls != 3 {
		t.Fatalf("after: %+v after %d runs", c, calls)
	}
	if nu := s.NotUp(); len(nu) != 1 || !strings.Contains(nu[0], "restarting: stopped unexpectedly") {
		t.Fatalf("NotUp = %q", nu)
	}
}

func TestBackoffBounds(t *testing.T) {
	b := Backoff{Min: 100 * time.Millisecond, Max: time.Second}
	for i := 0; i < 20; i++ {
		d := b.Next()
		if d < 50*time.Millisecond || d > time.Second {
			t.Fatalf("wait %d = %v, outside [50ms, 1s]", i, d)
		}
	}
	b.Reset()
	if d := b.Next(); d > 100*time.Millisecond {
		t.Fatalf("after Reset: %v", d)
	}
}

// TestErrorNamesTheComponentOnce: a component's own error that already
// starts with its name is not prefixed again (issue 34: "bus: bus:").
func TestErrorNamesTheComponentOnce(t *testing.T) {
	for _, tc := range []struct{ comp, inner, want string }{
		{"bus", "bus: connect: refused", "bus: connect: refused"},
		{"bus", "connect: refused", "bus: connect: refused"},
		{"bus", "busy: no", "bus: busy: no"},
	} {
		if got := (&Error{Component: tc.comp, Err: errors.New(tc.inner)}).Error(); got != tc.want {
			t.Errorf("%s + %q = %q, want %q", tc.comp, tc.inner, got, tc.want)
		}
	}
}
