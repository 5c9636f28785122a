// Package output is the seam every output of cuasd plugs into: a TAK or
// Cursor-on-Target sink, alert delivery, track history, readsb-compatible
// feeds. An output is a package under output/ that implements Output: it
// consumes the JSON events of package events (and, for frame-level outputs
// such as a Beast relay, the raw subjects) from NATS through the small
// Events interface, and never reaches into fusion's or the gate's memory.
// The same output therefore runs inside `cuasd serve` (on an in-process
// connection) or in another process against the same NATS. Inside cuasd
// serve, Events also hands out, for outputs whose cost is per fix or per
// frame, the gate's track events typed (TrackFeed), fusion's accepted
// fixes (FixFeed) and the Mode S messages fusion's feed decodes
// (ModeSFeed); such an output falls back to NATS elsewhere.
//
// Sinks must never slow ingest: NATS delivers to a subscription without
// blocking the publisher, and an output puts what it sends through a
// bounded Queue that drops (and counts) rather than waits.
package output

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/worker"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/lifecycle"
)

// Output is one consumer of cuasd's events.
type Output interface {
	// Name identifies the output in logs, /readyz and cuasd_component_up
	// ("cot-udp 239.2.3.1:6969").
	Name() string
	// Run consumes until ctx ends (then it returns nil) or the output
	// cannot go on. It reports Up while it delivers and Retrying with the
	// error while a sink is unreachable.
	Run(ctx context.Context, ev Events, rep lifecycle.Reporter) error
}

// Events is how an output hears cuasd.
type Events interface {
	// Subscribe calls fn for every message on subject (NATS wildcards
	// allowed), in order, on a goroutine of the subscription's own, until
	// the returned function is called. fn must not keep m.Data.
	Subscribe(subject string, fn func(m *nats.Msg)) (unsubscribe func(), err error)
}

// Conn returns the Events of a NATS connection.
func Conn(nc *nats.Conn) Events { return natsEvents{nc} }

// TrackFeed is what the Events of an output running inside `cuasd serve`
// offer besides NATS: the track events this instance's gate builds, typed,
// before and without their JSON. An output whose cost is per fix (the
// history recorder: every position of every track) uses it when present
// and falls back to cuas.track.> otherwise, so that it still runs in
// another process. Decoding every track event again from JSON cost that
// output more than everything else it did together (docs/OUTPUTS.md,
// "Decision: the typed feed").
type TrackFeed interface {
	// FeedTracks calls fn for every track event the gate builds, on the
	// gate's goroutine, until the returned function is called: for every
	// live track, including those another instance of a cluster announces
	// on NATS (each instance holds every track), so that the feed alone is
	// the whole picture. fn must return quickly and must not keep ev or
	// anything it points to: copy what it needs.
	FeedTracks(fn func(subject string, ev *events.TrackEvent)) (stop func(), err error)
}

// Fix is one position fix fusion accepted, as FixFeed hands it (issue
// 30): every fix, with its own time, not the track events' once-a-second
// sample of a track's last 32 positions.
type Fix struct {
	TrackID, Protocol, Sensor string
	// UnixNano is the fix's time: its sensor's time mapped to UTC.
	UnixNano int64
	Lat, Lon float64
	// AltM and AltKind are known when HasAlt; the velocity when HasVel.
	HasAlt                         bool
	AltM                           float64
	AltKind                        string
	HasVel                         bool
	SpeedMps, HeadingDeg, VRateMps float64
}

// FixFeed is what the Events of an output inside `cuasd serve` offer an
// output that wants every position fix (the history recorder): fusion's
// accepted fixes, in process, as they are accepted. Outputs that show a
// track's state (CoT, MQTT, readsb's aircraft.json) take track events
// instead (docs/OUTPUTS.md, "Fixes and track events").
type FixFeed interface {
	// FeedFixes calls fn with every accepted fix until stop is called; fn
	// runs on fusion's goroutine under its lock: it must return at once
	// (a bounded queue) and not keep f. ErrNoFixes: none offered.
	FeedFixes(fn func(f *Fix)) (stop func(), err error)
}

// ErrNoFixes is FeedFixes' answer where no fixes are offered.
var ErrNoFixes = errors.New("output: no fix feed in this process")

// ModeSFeed is what the Events of an output inside `cuasd serve` offer an
// output that writes a line per Mode S message (per-message SBS): the
// messages fusion's feed decodes, typed, with the times fusion judges
// them by, so that the output neither hears every raw frame again on NATS
// nor decodes it a second time (issue 30). Elsewhere such an output reads
// the raw frames (cuas.raw.adsb.>) and decodes them itself.
type ModeSFeed interface {
	// FeedModeS calls fn with the Mode S messages of every raw message
	// fusion decodes, on its feed's goroutine, until stop is called. fn
	// must return at once and not keep b. end is the raw stream's newest
	// message before fn was attached: a message at or before it
	// (bus.StreamPos.After) was stored before the caller started, and
	// reaches fn only through the feed's replay. ErrNoModeS: none offered.
	FeedModeS(ctx context.Context, fn func(b *worker.ModeSBatch)) (stop func(), end bus.StreamPos, err error)
}

// ErrNoModeS is FeedModeS' answer where no decoded messages are offered.
var ErrNoModeS = errors.New("output: no decoded Mode S feed in this process")

// InProcess returns the Events of an output inside cuasd serve: NATS
// through nc, the typed track events of feed (a TrackFeed) and, when not
// nil, fusion's accepted fixes and the Mode S messages its feed decodes
// (the tap of worker.FeedConfig.ModeS).
func InProcess(nc *nats.Conn, feed TrackFeed, fixes FixFeed, modeS *worker.ModeSTap) Events {
	return inProcess{natsEvents{nc}, feed, fixes, modeS}
}

type inProcess struct {
	natsEvents
	TrackFeed
	fixes FixFeed
	modeS *worker.ModeSTap
}

// FeedModeS implements ModeSFeed. The stream's end is asked for before
// fn is attached, so a message stored in between is after it: new.
func (e inProcess) FeedModeS(ctx context.Context, fn func(b *worker.ModeSBatch)) (func(), bus.StreamPos, error) {
	if e.modeS == nil {
		return nil, bus.StreamPos{}, ErrNoModeS
	}
	end, err := bus.StreamEnd(ctx, e.nc, bus.StreamRaw)
	if err != nil {
		return nil, bus.StreamPos{}, err
	}
	return e.modeS.Tap(fn), end, nil
}

// FeedFixes implements FixFeed.
func (e inProcess) FeedFixes(fn func(f *Fix)) (func(), error) {
	if e.fixes == nil {
		return nil, ErrNoFixes
	}
	return e.fixes.FeedFixes(fn)
}

type natsEvents struct{ nc *nats.Conn }

func (e natsEvents) Subscribe(subject string, fn func(m *nats.Msg)) (func(), error) {
	sub, err := e.nc.Subscribe(subject, fn)
	if err != nil {
		return nil, err
	}
	// Let a busy output fall behind by a lot before NATS drops for it
	// (counted by NATS as a slow consumer), without ever blocking the
	// connection's reader, which the publishers do not wait on.
	_ = sub.SetPendingLimits(1<<20, 256<<20)
	return func() { _ = sub.Unsubscribe() }, nil
}

// Queue is a bounded first-in-first-out queue between an event handler and
// a sink's writer. Put never blocks: when the queue is full the new item
// is dropped and counted, so a slow or dead sink loses its own data and
// slows nothing else.
type Queue[T any] struct {
	ch      chan T
	dropped atomic.Uint64
}

// NewQueue returns a queue holding at most n items.
func NewQueue[T any](n int) *Queue[T] { return &Queue[T]{ch: make(chan T, max(n, 1))} }

// Put enqueues v, or drops it when the queue is full (reporting false).
func (q *Queue[T]) Put(v T) bool {
	select {
	case q.ch <- v:
		return true
	default:
		q.dropped.Add(1)
		return false
	}
}

// C is the channel the writer receives from.
func (q *Queue[T]) C() <-chan T { return q.ch }

// Len is the number of items waiting.
func (q *Queue[T]) Len() int { return len(q.ch) }

// Dropped is the number of items dropped so far.
func (q *Queue[T]) Dropped() uint64 { return q.dropped.Load() }
