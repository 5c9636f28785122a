// Package diskspace watches the free space of the filesystems cuasd keeps
// its data on (the data directory, JetStream's store) against two marks:
// below the low mark a store is "low" (cuasd refuses the writes it could
// not keep and says so on /readyz); it is "low" until the free space is
// back above the high mark, so that a store hovering at the mark does not
// flap. When a store recovers, OnRecover is called, saying whether the
// filesystem was (nearly) full meanwhile: writes may have failed then, and
// a store that keeps a write error (JetStream's) must be reopened.
package diskspace

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"

	"github.com/cuasd/cuasd/lifecycle"
)

// Store is a directory whose filesystem is watched.
type Store struct {
	// Name names the store on /readyz and in the gauges' store label
	// ("data directory", "jetstream").
	Name string
	Path string
}

// Config is what to watch and the marks.
type Config struct {
	Stores []Store
	// Low is the free space (bytes) below which a store is low.
	Low uint64
	// High is the free space a low store must reach to be well again
	// (default 2 × Low).
	High uint64
	// Full is the free space below which the filesystem counts as full:
	// writes may have failed (default 1 MiB).
	Full uint64
	// Interval between checks (default 1 s).
	Interval time.Duration
	// OnRecover, when not nil, is called (from the watch loop) when a low
	// store is back above High; wasFull says whether its free space fell
	// below Full while it was low.
	OnRecover func(s Store, wasFull bool)
	// Free returns the bytes available to cuasd on path's filesystem
	// (tests; default statfs(2)).
	Free func(path string) (uint64, error)
}

// Error says why a write is refused: a store is below its low mark.
type Error struct {
	Store, Path string
	Free, Low   uint64
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s: %s free, below the low mark of %s: writes that could not be kept are refused",
		e.Store, e.Path, Bytes(e.Free), Bytes(e.Low))
}

// Watch is the watcher. Its methods are safe for concurrent use.
type Watch struct {
	cfg  Config
	free *prometheus.GaugeVec
	mu   sync.Mutex
	st   []state
}

type state struct {
	free    uint64
	err     error
	low     bool
	wasFull bool
}

// New returns a watcher exporting cuasd_disk_free_bytes{store} and
// cuasd_disk_low_mark_bytes{store} on reg (nil: unregistered). It checks
// once before it returns, so its answers are true from the start.
func New(cfg Config, reg prometheus.Registerer) *Watch {
	if cfg.High < cfg.Low {
		cfg.High = 2 * cfg.Low
	}
	if cfg.Full == 0 {
		cfg.Full = 1 << 20
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Free == nil {
		cfg.Free = statfsFree
	}
	w := &Watch{cfg: cfg, st: make([]state, len(cfg.Stores)),
		free: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "cuasd_disk_free_bytes",
			Help: "Bytes available to cuasd on the filesystem of a store (the data directory, the embedded JetStream's store).",
		}, []string{"store"})}
	lowMark := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cuasd_disk_low_mark_bytes",
		Help: "The free space below which cuasd refuses writes to a store (--disk-low-mark).",
	}, []string{"store"})
	for _, s := range cfg.Stores {
		lowMark.WithLabelValues(s.Name).Set(float64(cfg.Low))
	}
	if reg != nil {
		reg.MustRegister(w.free, lowMark)
	}
	w.Check()
	return w
}

func statfsFree(path string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// Check measures every store once, updates the gauges and states, and
// calls OnRecover for the stores that recovered.
func (w *Watch) Check() {
	var recovered []int
	var full []bool
	w.mu.Lock()
	for i, s := range w.cfg.Stores {
		st := &w.st[i]
		free, err := w.cfg.Free(s.Path)
		if st.err = err; err != nil {
			continue // unknown: keep the last reading and state
		}
		st.free = free
		w.free.WithLabelValues(s.Name).Set(float64(st.free))
		switch {
		case !st.low && st.free < w.cfg.Low:
			st.low = true
			st.wasFull = st.free < w.cfg.Full
		case st.low && st.free < w.cfg.Full:
			st.wasFull = true
		case st.low && st.free >= w.cfg.High:
			st.low = false
			recovered, full = append(recovered, i), append(full, st.wasFull)
			st.wasFull = false
		}
	}
	w.mu.Unlock()
	if w.cfg.OnRecover != nil {
		for k, i := range recovered {
			w.cfg.OnRecover(w.cfg.Stores[i], full[k])
		}
	}
}

// Run checks every Interval until ctx ends, reporting up through rep.
func (w *Watch) Run(ctx context.Context, rep lifecycle.Reporter) error {
	rep.Up()
	t := time.NewTicker(w.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			w.Check()
		}
	}
}

// Refuse returns an *Error for the first store below its low mark, or nil
// when every store has room.
func (w *Watch) Refuse() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, st := range w.st {
		if st.low {
			s := w.cfg.Stores[i]
			return &Error{Store: s.Name, Path: s.Path, Free: st.free, Low: w.cfg.Low}
		}
	}
	return nil
}

// Low describes every store below its low mark (for /readyz), and every
// store whose free space cannot be measured.
func (w *Watch) Low() []string {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for i, st := range w.st {
		s := w.cfg.Stores[i]
		if st.low {
			out = append(out, "disk: "+(&Error{Store: s.Name, Path: s.Path, Free: st.free, Low: w.cfg.Low}).Error())
		}
		if st.err != nil {
			out = append(out, fmt.Sprintf("disk: %s %s: free space unknown: %v", s.Name, s.Path, st.err))
		}
	}
	return out
}

// Bytes formats n in binary units (3.1 MiB).
func Bytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
