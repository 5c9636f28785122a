package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Error is the error type of package lifecycle: which component failed,
// and in which phase.
type Error struct {
	Component string
	Phase     string // "start" or "run"
	Err       error
}

// Error names the component once: a package error that already starts
// with the component's name ("bus: connect: …" from the bus component)
// is not prefixed again (issue 34: "bus: bus: connect").
func (e *Error) Error() string {
	msg := e.Err.Error()
	if strings.HasPrefix(msg, e.Component+": ") {
		return msg
	}
	return e.Component + ": " + msg
}
func (e *Error) Unwrap() error { return e.Err }

// Component is one part of the program. Every field but Name is optional.
type Component struct {
	// Name identifies the component in logs and errors.
	Name string
	// Start prepares the component (opens stores, binds listeners). An
	// error aborts start-up: the components started before are stopped,
	// in reverse order, and Group.Run returns the error.
	Start func(ctx context.Context) error
	// Run does the component's work until ctx is cancelled. A Run that
	// returns early with an error stops the whole group (a component that
	// should survive failures wraps its work in Retry); one that returns
	// nil early simply ends.
	Run func(ctx context.Context) error
	// Stop releases what Start acquired. It is called after Run returned,
	// with a context bounded by the group's stop timeout.
	Stop func(ctx context.Context) error
}

// Group runs components in order and stops them in reverse order.
type Group struct {
	comps []Component
	// StopTimeout bounds each component's Stop (default 10 s).
	StopTimeout time.Duration
	Log         *slog.Logger
}

// Add appends components; they start after the ones already added.
func (g *Group) Add(c ...Component) { g.comps = append(g.comps, c...) }

type running struct {
	c      Component
	cancel context.CancelFunc
	done   chan error
}

// Run starts every component, waits until ctx ends or a component's Run
// fails, then stops them all in reverse order. It returns the first start
// or run error (nil on a requested shutdown).
func (g *Group) Run(ctx context.Context) error {
	log := g.Log
	if log == nil {
		log = slog.Default()
	}
	failed := make(chan error, len(g.comps))
	started := make([]*running, 0, len(g.comps))
	var err error
	for _, c := range g.comps {
		var r *running
		if r, err = g.start(ctx, c, failed); err != nil {
			break
		}
		started = append(started, r)
	}
	if err == nil {
		select {
		case <-ctx.Done():
		case err = <-failed:
		}
	}
	if err != nil {
		log.Error("stopping after a failure", "err", err)
	}
	for i := len(started) - 1; i >= 0; i-- {
		g.stop(started[i], log)
	}
	return err
}

func (g *Group) start(ctx context.Context, c Component, failed chan<- error) (*running, error) {
	if c.Start != nil {
		if err := c.Start(ctx); err != nil {
			return nil, &Error{Component: c.Name, Phase: "start", Err: err}
		}
	}
	// A component's context does not inherit the group's cancellation: the
	// group cancels each one itself, in reverse order, so that a stage never
	// stops before the stages that feed it.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r := &running{c: c, cancel: cancel, done: make(chan error, 1)}
	if c.Run == nil {
		r.done <- nil
		return r, nil
	}
	go func() {
		err := c.Run(cctx)
		r.done <- err
		if err != nil && cctx.Err() == nil {
			failed <- &Error{Component: c.Name, Phase: "run", Err: err}
		}
	}()
	return r, nil
}

func (g *Group) stop(r *running, log *slog.Logger) {
	r.cancel()
	<-r.done
	if r.c.Stop == nil {
		return
	}
	d := g.StopTimeout
	if d <= 0 {
		d = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := r.c.Stop(ctx); err != nil && !errors.Is(err, context.Canceled) {
		log.Warn("stop", "component", r.c.Name, "err", err)
	}
}

// Retry is the supervisor of every long-running loop: it returns a Run
// function that calls fn until ctx ends, restarting it after it ended
// (with an error, or early without one) with exponential back-off (from
// 250 ms to max, with jitter), and reporting the restart through rep:
// state restarting with the error, the restart counted in
// cuasd_component_restarts_total. fn itself reports Up once it works (for
// example once it has connected) and Retrying while it reconnects on its
// own; a plain stage can call rep.Up() first thing. A loop that resumes
// from a durable position (a JetStream durable consumer, a stream
// sequence) resumes there on each restart, so nothing acknowledged is
// skipped.
func Retry(rep Reporter, max time.Duration, fn func(ctx context.Context, rep Reporter) error) func(context.Context) error {
	return func(ctx context.Context) error {
		b := Backoff{Min: 250 * time.Millisecond, Max: max}
		for ctx.Err() == nil {
			start := time.Now()
			err := fn(ctx, rep)
			if ctx.Err() != nil {
				return nil
			}
			if err == nil {
				err = errors.New("stopped unexpectedly")
			}
			if time.Since(start) > b.Max {
				b.Reset() // it ran well for a while: start the back-off afresh
			}
			if r, ok := rep.(restarter); ok {
				r.Restarting(err)
			} else {
				rep.Retrying(err)
			}
			if !b.Sleep(ctx) {
				return nil
			}
		}
		return nil
	}
}

// Must is a Component whose Start cannot fail and whose Run is fn.
func Must(name string, fn func(ctx context.Context) error) Component {
	return Component{Name: name, Run: fn}
}

// String describes a component for logs.
func (c Component) String() string { return fmt.Sprintf("component %q", c.Name) }
