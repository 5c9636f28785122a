package history

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/lifecycle"
	"github.com/cuasd/cuasd/output"
)

// Config configures a Recorder.
type Config struct {
	// Path is the SQLite database file (cuasd: <data-dir>/history.db).
	Path string
	// MaxAge deletes points older than this (--history-max-age); 0 keeps
	// them forever.
	MaxAge time.Duration
	// MaxBytes bounds the space the points occupy (--history-max-bytes);
	// 0 means no bound.
	MaxBytes int64
	// PruneEvery is how often the limits are applied (default 1 min).
	PruneEvery time.Duration
	// FlushEvery is how often the queued points are committed — written
	// to the store's pending log, from where a killed process reads them
	// back — in batches of at most 2048 points (default 250 ms).
	FlushEvery time.Duration
	// QueueLen is how many events may wait for the writer before new ones
	// are dropped and counted (default 65536).
	QueueLen int
	// FixQueueLen bounds the fixes fed in process (output.FixFeed) that
	// may wait for the writer before new ones are dropped and counted
	// (default 262144: a minute of a busy receiver's fixes).
	FixQueueLen int
	Logger      *slog.Logger
	// Registry receives cuasd_history_points_total; nil means none.
	Registry prometheus.Registerer
}

// Recorder is the history output (output.Output) and the reader of what it
// recorded. Its store is open while Run runs; queries at other times fail
// with ErrUnavailable.
type Recorder struct {
	cfg   Config
	store atomic.Pointer[Store]
	q     *output.Queue[[]Point]

	// mu guards tracks: what the recorder keeps of each track, found by
	// one map look-up per fed fix.
	mu     sync.Mutex
	tracks map[string]*recTrack

	// Fed fixes (issue 30): fusion's accepted fixes, when the Events offer
	// them, wait in fixes (at most cfg.FixQueueLen) for the writer. fed
	// says the fixes are fed, so track events only carry decisions and
	// losses.
	fixes fixQueue
	fed   atomic.Bool
	// attached: AttachFixes subscribed before Run, which then does not.
	attached   atomic.Bool
	fixDropped prometheus.Counter
	fedBatch   []fedPoint // a block's fixes as the store packs them (the writer's)

	points *prometheus.CounterVec
}

// assessment is a track's decision and Λ, from a threat event.
type assessment struct {
	decision string
	lambda   float64
}

// recTrack is what the recorder keeps of a track until it is lost: its
// last recorded decision, and the time of its newest fed fix (Unix ns).
type recTrack struct {
	as       assessment
	decided  bool
	last     int64
	hasFixes bool
	// h is the track's state in the store, for the store (its fed
	// points carry it: fedPoint.h).
	h trackHandle
}

// trackLocked is the state of track id, added when new (r.mu held).
func (r *Recorder) trackLocked(id string) *recTrack {
	t := r.tracks[id]
	if t == nil {
		t = &recTrack{}
		r.tracks[id] = t
	}
	return t
}

// decide records track id's decision.
func (r *Recorder) decide(id string, a assessment) {
	r.mu.Lock()
	t := r.trackLocked(id)
	t.as, t.decided = a, true
	r.mu.Unlock()
}

// New returns a recorder; nothing is opened until Run.
func New(cfg Config) *Recorder {
	if cfg.PruneEvery <= 0 {
		cfg.PruneEvery = time.Minute
	}
	if cfg.FlushEvery <= 0 {
		cfg.FlushEvery = 250 * time.Millisecond
	}
	if cfg.QueueLen <= 0 {
		cfg.QueueLen = 1 << 16
	}
	if cfg.FixQueueLen <= 0 {
		cfg.FixQueueLen = 1 << 18
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	r := &Recorder{cfg: cfg, q: output.NewQueue[[]Point](cfg.QueueLen), tracks: map[string]*recTrack{},
		points: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_history_points_total",
			Help: "Track positions seen by the history recorder, by result (stored, duplicate, dropped: the queue was full, failed: the write failed).",
		}, []string{"result"})}
	for _, l := range []string{"stored", "duplicate", "dropped", "failed"} {
		r.points.WithLabelValues(l)
	}
	r.fixDropped = r.points.WithLabelValues("dropped")
	if cfg.Registry != nil {
		_ = cfg.Registry.Register(r.points)
	}
	return r
}

// Name identifies the output.
func (r *Recorder) Name() string { return "history " + r.cfg.Path }

// Run opens the store, subscribes to track and threat events and records
// until ctx ends.
func (r *Recorder) Run(ctx context.Context, ev output.Events, rep lifecycle.Reporter) error {
	st, err := Open(r.cfg.Path)
	if err != nil {
		return err
	}
	if m := st.Migration(); len(m.Replaced) > 0 {
		r.cfg.Logger.Info("history: rebuilt the track index by time bucket", "path", r.cfg.Path,
			"replaced", strings.Join(m.Replaced, ","), "took", m.Took.Round(time.Millisecond))
	}
	r.store.Store(st)
	defer func() {
		r.store.Store(nil)
		_ = st.Close()
	}()
	r.prune(ctx, st)
	unTrack, err := r.subscribeTracks(ev)
	if err != nil {
		return wrap("subscribe", err)
	}
	defer unTrack()
	unThreat, err := ev.Subscribe(bus.ThreatPrefix+".>", r.onThreat)
	if err != nil {
		return wrap("subscribe", err)
	}
	defer unThreat()
	rep.Up()
	return r.write(ctx, st, rep)
}

// subscribeTracks hears the track events: typed from the gate when the
// recorder runs inside cuasd serve (output.TrackFeed: no JSON to decode,
// no NATS delivery, every track of the instance's own picture), else
// from cuas.track.> on NATS.
func (r *Recorder) subscribeTracks(ev output.Events) (stop func(), err error) {
	stopFixes := func() {}
	if f, ok := ev.(output.FixFeed); ok && !r.attached.Load() {
		if s, err := f.FeedFixes(r.onFix); err == nil {
			stopFixes = s
			r.fed.Store(true)
		}
	}
	if f, ok := ev.(output.TrackFeed); ok {
		s, err := f.FeedTracks(r.onTrackEvent)
		if err != nil {
			stopFixes()
			return nil, err
		}
		return func() { s(); stopFixes() }, nil
	}
	s, err := ev.Subscribe(bus.TrackPrefix+".>", r.onTrack)
	if err != nil {
		stopFixes()
		return nil, err
	}
	return func() { s(); stopFixes() }, nil
}

// AttachFixes hears f's accepted fixes from now on, before Run (issue 30):
// cuasd serve attaches the recorder when it creates the track store, so
// the fixes fused before the outputs run — the fusion feed's replay at
// start-up, a capture replayed the moment cuasd serves — are recorded
// too. They wait in the bounded fix queue until Run's writer takes them;
// Run then does not subscribe again. stop ends the hearing.
func (r *Recorder) AttachFixes(f output.FixFeed) (stop func(), err error) {
	s, err := f.FeedFixes(r.onFix)
	if err != nil {
		return nil, err
	}
	r.attached.Store(true)
	r.fed.Store(true)
	return func() { s(); r.attached.Store(false) }, nil
}

// onFix queues one fed fix for the writer (issue 30). It runs under
// fusion's lock: a copy into a bounded queue, nothing else; a full queue
// drops the fix and counts it (cuasd_history_points_total{result="dropped"}).
func (r *Recorder) onFix(f *output.Fix) {
	if !r.fixes.put(f, r.cfg.FixQueueLen) {
		r.fixDropped.Inc()
	}
}

// commitFixes commits the queued fixes a block (2,048) at a time: a
// burst's fixes are never one batch as large.
func (r *Recorder) commitFixes(ctx context.Context, st *Store) error {
	blocks := r.fixes.take()
	defer r.fixes.giveBack(blocks)
	defer clear(r.fedBatch) // the fixes' strings are fusion's to let go
	for _, b := range blocks {
		r.fedBatch = r.fedPoints(r.fedBatch[:0], b)
		n, err := st.insertFed(ctx, r.fedBatch)
		if err := r.count(len(b), n, err); err != nil {
			return err
		}
	}
	return nil
}

// fedPoints appends fixes to batch as the store packs them, each with its
// track's recorded decision; a fix whose time is not after its track's
// previous one (a burst's fixes share their arrival) moves 1 ns on, as
// the store keys points by track and time.
func (r *Recorder) fedPoints(batch []fedPoint, fixes []output.Fix) []fedPoint {
	batch = slices.Grow(batch, len(fixes))[:len(batch)+len(fixes)]
	pts := batch[len(batch)-len(fixes):]
	r.mu.Lock()
	for i := range fixes {
		r.fedPoint(&pts[i], &fixes[i])
	}
	r.mu.Unlock()
	return batch
}

// fedPoint sets p to fed fix f (r.mu held).
func (r *Recorder) fedPoint(p *fedPoint, f *output.Fix) {
	t := r.trackLocked(f.TrackID)
	ns := f.UnixNano
	if t.hasFixes && ns <= t.last {
		ns = t.last + 1
	}
	t.last, t.hasFixes = ns, true
	// Fusion hands its fixes unrounded (CPR's floats, feet × 0.3048).
	// They are kept as the track events and the API give them — 1e-6°
	// (~0.1 m), 0.1 m, as fusion's views round — which the codec packs in
	// 8–13 bytes a point, where raw floats took ~60: four times the
	// bytes through the pending log, the held chunks and SQLite.
	*p = fedPoint{id: f.TrackID, t: ns, protocol: f.Protocol, sensor: f.Sensor, h: &t.h}
	p.setUnit(0, f.Lat)
	p.setUnit(1, f.Lon)
	if f.HasAlt {
		p.hasAlt, p.altKind = true, f.AltKind
		p.setUnit(2, f.AltM)
	}
	if f.HasVel {
		p.hasVel = true
		p.setUnit(3, f.SpeedMps)
		p.setUnit(4, f.HeadingDeg)
		p.setUnit(5, f.VRateMps)
	}
	if t.decided {
		p.decision, p.hasLambda, p.lambda = t.as.decision, true, t.as.lambda
	}
}

// onTrack records a track event from NATS. It runs on the subscription's
// goroutine.
func (r *Recorder) onTrack(m *nats.Msg) {
	ev, err := decodeTrackEvent(m.Data)
	if err != nil || ev.V != events.Version {
		return
	}
	r.onTrackEvent(m.Subject, ev)
}

// onTrackEvent turns a track event into points for the writer. It never
// blocks (a full queue drops) and keeps nothing of ev: it runs on the
// gate's goroutine when fed in process.
func (r *Recorder) onTrackEvent(subject string, ev *events.TrackEvent) {
	if ev.Type == events.TypeTrackLost {
		r.mu.Lock()
		delete(r.tracks, ev.Track.TrackID)
		r.mu.Unlock()
	}
	if r.fed.Load() {
		// The fixes come fed; a track event says only what the gate
		// decided, for the fixes that follow.
		if a := ev.Assessment; a != nil {
			r.decide(ev.Track.TrackID, assessment{decision: a.Decision, lambda: a.Lambda})
		}
		return
	}
	var as *assessment
	if ev.Assessment == nil {
		r.mu.Lock()
		if t := r.tracks[ev.Track.TrackID]; t != nil && t.decided {
			a := t.as
			as = &a
		}
		r.mu.Unlock()
	}
	pts := pointsOf(ev, subjectProtocol(subject), as, make([]Point, 0, max(1, len(ev.Track.History))))
	if len(pts) > 0 && !r.q.Put(pts) {
		r.points.WithLabelValues("dropped").Add(float64(len(pts)))
	}
}

// onThreat remembers a track's recorded decision, for the points of track
// events that carry no assessment.
func (r *Recorder) onThreat(m *nats.Msg) {
	var ev events.ThreatEvent
	if err := json.Unmarshal(m.Data, &ev); err != nil || ev.V != events.Version || ev.Threat.TrackID == "" {
		return
	}
	r.decide(ev.Threat.TrackID, assessment{decision: ev.Threat.Decision, lambda: ev.Threat.Lambda})
}

// subjectProtocol is the protocol token of cuas.track.{protocol}.{key}.
func subjectProtocol(subject string) string {
	p, _, _ := bus.SplitSubject(bus.TrackPrefix, subject)
	return p
}

// pointsOf appends to dst the position fixes a track event carries: the
// points of its history (the positions received since the track's
// previous event), or, when it has none, its current position at its last
// reception. The newest point gets the track's speed, heading and
// vertical rate; every point gets the event's assessment, else fallback.
// The points keep nothing ev points to: their measurements are copied
// (into one allocation per event), as a fed event is the gate's.
func pointsOf(ev *events.TrackEvent, protocol string, fallback *assessment, dst []Point) []Point {
	t := &ev.Track
	vals := slab(make([]float64, 0, len(t.History)+5))
	base := Point{TrackID: t.TrackID, Protocol: protocol, Sensor: strings.Join(t.Sensors, ","), AltKind: t.AltKind}
	if a := ev.Assessment; a != nil {
		base.Decision, base.Lambda = a.Decision, vals.copy(&a.Lambda)
	} else if fallback != nil {
		base.Decision, base.Lambda = fallback.decision, vals.copy(&fallback.lambda)
	}
	if len(t.History) == 0 {
		if t.Lat == nil || t.Lon == nil || ev.Type != events.TypeTrackUpdate {
			return dst
		}
		p := base
		p.Time, p.Lat, p.Lon, p.AltM = t.LastSeen.UTC(), *t.Lat, *t.Lon, vals.copy(t.AltM)
		p.SpeedMps, p.HeadingDeg, p.VRateMps = vals.copy(t.SpeedMps), vals.copy(t.HeadingDeg), vals.copy(t.VRateMps)
		return append(dst, p)
	}
	for i := range t.History {
		h := &t.History[i]
		p := base
		p.Time, p.Lat, p.Lon, p.AltM = h.T.UTC(), h.Lat, h.Lon, vals.copy(h.AltM)
		// Two fixes read from one chunk of a receiver's stream can share a
		// receive time; the store keys points by track and time, so the
		// later one moves 1 ns on rather than being taken for a repeat.
		if n := len(dst); i > 0 && !p.Time.After(dst[n-1].Time) {
			p.Time = dst[n-1].Time.Add(time.Nanosecond)
		}
		if p.AltM == nil {
			p.AltKind = ""
		}
		if i == len(t.History)-1 {
			p.SpeedMps, p.HeadingDeg, p.VRateMps = vals.copy(t.SpeedMps), vals.copy(t.HeadingDeg), vals.copy(t.VRateMps)
		}
		dst = append(dst, p)
	}
	return dst
}

// slab holds copies of an event's measurements, sized for all of them
// up front so that the pointers into it stay put.
type slab []float64

// copy returns a pointer to a copy of *v in s, nil for nil.
func (s *slab) copy(v *float64) *float64 {
	if v == nil {
		return nil
	}
	*s = append(*s, *v)
	return &(*s)[len(*s)-1]
}

// write commits what the queue holds every FlushEvery, in batches of at
// most 2048 points, and applies the retention limits, until ctx ends
// (then it commits what it holds). It does not wait on the queue: woken
// for every event (thousands a second), the writer's wake-ups cost more
// CPU than storing the event's points; the queue holds what arrives in
// between (QueueLen events).
func (r *Recorder) write(ctx context.Context, st *Store, rep lifecycle.Reporter) error {
	flush := time.NewTicker(r.cfg.FlushEvery)
	defer flush.Stop()
	prune := time.NewTicker(r.cfg.PruneEvery)
	defer prune.Stop()
	var batch []Point
	for {
		var err error
		select {
		case <-ctx.Done():
			return r.drain(st, batch)
		case <-flush.C:
			batch, err = r.flush(ctx, st, batch)
		case <-prune.C:
			r.prune(ctx, st)
		}
		if err != nil && ctx.Err() == nil {
			rep.Retrying(err)
			return err
		}
	}
}

// flush commits what the queue holds, in batches of at most 2048 points
// (and the whole of an event's points together); it returns the emptied
// batch for reuse.
func (r *Recorder) flush(ctx context.Context, st *Store, batch []Point) ([]Point, error) {
	if err := r.commitFixes(ctx, st); err != nil {
		return batch[:0], err
	}
	for n := r.q.Len(); n > 0; n-- {
		batch = append(batch, <-r.q.C()...)
		if len(batch) >= 2048 {
			if err := r.commit(ctx, st, batch); err != nil {
				return batch[:0], err
			}
			batch = batch[:0]
		}
	}
	return batch[:0], r.commit(ctx, st, batch)
}

// drain commits the batch and whatever is queued when the recorder stops.
func (r *Recorder) drain(st *Store, batch []Point) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.commitFixes(ctx, st); err != nil {
		return err
	}
	for r.q.Len() > 0 {
		batch = append(batch, <-r.q.C()...)
	}
	return r.commit(ctx, st, batch)
}

func (r *Recorder) commit(ctx context.Context, st *Store, batch []Point) error {
	if len(batch) == 0 {
		return nil
	}
	n, err := st.Insert(ctx, batch)
	return r.count(len(batch), n, err)
}

// count counts a commit of points of which n were new, or that failed
// with err (which it returns).
func (r *Recorder) count(points, n int, err error) error {
	if err != nil {
		r.points.WithLabelValues("failed").Add(float64(points))
		return err
	}
	r.points.WithLabelValues("stored").Add(float64(n))
	r.points.WithLabelValues("duplicate").Add(float64(points - n))
	return nil
}

func (r *Recorder) prune(ctx context.Context, st *Store) {
	n, err := st.Prune(ctx, time.Now(), r.cfg.MaxAge, r.cfg.MaxBytes)
	if err == nil {
		err = st.checkpoint(ctx)
	}
	if err != nil {
		r.cfg.Logger.Warn("history retention", "err", err)
	} else if n > 0 {
		r.cfg.Logger.Info("history retention deleted points", "points", n)
	}
}

// Dropped is the number of events' points dropped because the writer fell
// behind.
func (r *Recorder) Dropped() uint64 { return r.q.Dropped() }

func (r *Recorder) open() (*Store, error) {
	if st := r.store.Load(); st != nil {
		return st, nil
	}
	return nil, ErrUnavailable
}

// Known reports whether track id has any stored point.
func (r *Recorder) Known(ctx context.Context, id string) (bool, error) {
	st, err := r.open()
	if err != nil {
		return false, err
	}
	return st.Known(ctx, id)
}

// Count is the number of points of track id in [from, to].
func (r *Recorder) Count(ctx context.Context, id string, from, to time.Time) (int, error) {
	st, err := r.open()
	if err != nil {
		return 0, err
	}
	return st.Count(ctx, id, from, to)
}

// Track calls fn for the points of one track (see Store.Track).
func (r *Recorder) Track(ctx context.Context, q TrackQuery, fn func(*Point) error) (int, error) {
	st, err := r.open()
	if err != nil {
		return 0, err
	}
	return st.Track(ctx, q, fn)
}

// Next is the cursor of the page after q's (see Store.Next).
func (r *Recorder) Next(ctx context.Context, q AreaQuery) (*Cursor, error) {
	st, err := r.open()
	if err != nil {
		return nil, err
	}
	return st.Next(ctx, q)
}

// Area calls fn for the points of one page of an area query (see
// Store.Area).
func (r *Recorder) Area(ctx context.Context, q AreaQuery, fn func(*Point) error) error {
	st, err := r.open()
	if err != nil {
		return err
	}
	return st.Area(ctx, q, fn)
}
