// Package mlatstage is the multilateration stage of the pipeline (issue
// 31): it takes Mode S frames with their sensors' Beast timestamps from the
// decoder feed, gathers the receptions of each transmission, locates Mode
// S aircraft (fusion/mlat's solver and filter) and checks ADS-B position
// claims, and hands positions and verdicts to the track store.
//
// The feed hands frames through Offer, which never blocks: a full queue
// sheds the reception and counts it, so solving never slows ingest. One
// goroutine (Run) owns the grouping, the clock sync, the solver and the
// per-aircraft filters.
package mlatstage

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/fusion/mlat"
)

// Sensor is a receiver's configured position and clock.
type Sensor struct {
	Name string
	// Lat, Lon in degrees; AltM metres above the WGS-84 ellipsoid.
	Lat, Lon, AltM float64
	Clock          mlat.Clock
}

// Position is an antenna's position: degrees, and metres above the
// WGS-84 ellipsoid.
type Position struct {
	Lat, Lon, AltM float64
}

func (p Position) ecef() mlat.Vec { return mlat.ECEF(p.Lat, p.Lon, p.AltM) }

// String is p as "LAT,LON,ALT" (the Cuas-Sensor-Position form), for logs.
func (p Position) String() string {
	return strconv.FormatFloat(p.Lat, 'f', -1, 64) + "," + strconv.FormatFloat(p.Lon, 'f', -1, 64) + "," +
		strconv.FormatFloat(p.AltM, 'f', -1, 64)
}

// Where a sensor's position comes from (SensorState.PositionSource).
const (
	// SourceConfigured: cuasd's configuration (the sensors block,
	// --beast-connect's lat/lon/alt). It wins over a reported one.
	SourceConfigured = "configured"
	// SourceReported: the receiver's own Cuas-Sensor-Position, a claim
	// like any other broadcast field.
	SourceReported = "reported"
)

// Rx is one reception: a Mode S frame and its sensor's raw Beast
// timestamp.
type Rx struct {
	Sensor string
	// Clock is what Ticks are: a 12 MHz counter or GPS time of day.
	Clock sensorclock.Kind
	Ticks uint64
	// Arrival is when the frame reached cuasd, Unix ns.
	Arrival int64
	Len     uint8
	Msg     [mlat.MaxMsgLen]byte
	// Pos is the position the receiver stated with the frame
	// (Cuas-Sensor-Position) when HasPos: a receiver no configuration
	// names takes part with it.
	Pos    Position
	HasPos bool
}

// Store is what the stage needs of the track store (*fusion.Store).
type Store interface {
	ApplyMLAT(f fusion.MLATFix) bool
	SetVerification(icao string, v fusion.Verification) bool
	Get(id string) (fusion.Track, bool)
}

// Config tunes the stage.
type Config struct {
	Sensors []Sensor
	// QueueLen bounds the receptions waiting (default 16,384).
	QueueLen int
	// Hold is how long a transmission's group waits for more receptions,
	// on the arrival clock (default 1 s: receivers' network delays).
	Hold time.Duration
	// MaxOpen bounds the groups waiting (default 65,536).
	MaxOpen int
	// Sync tunes the pairwise clock sync.
	Sync mlat.SyncConfig
	// MaxSensors bounds the receivers taking part, configured and
	// reported (default 1,024, as the sensor registry): sensor names come
	// from the network.
	MaxSensors int
	// MoveToleranceM is how far a reported position may wander before the
	// receiver counts as moved (default 20 m: a GNSS fix's wander stays
	// under it, an antenna carried across a roof does not).
	MoveToleranceM float64
	// OnPosition, when set, is told each reported position the stage
	// takes (a new receiver, or one that moved): the sensor registry
	// shows it. It is called from Run and must not block.
	OnPosition func(sensor string, p Position)
	// OnHeard, when set, is told a few times a second of each receiver
	// heard since: its last reception's arrival and its receptions in
	// all (the sensor registry's last_heard, so /readyz knows it is up).
	// It is called from Run and must not block.
	OnHeard func(sensor string, at time.Time, receptions uint64)
	Log     *slog.Logger
	// Now is the wall clock (tests replace it).
	Now func() time.Time
}

func (c *Config) defaults() {
	if c.QueueLen <= 0 {
		c.QueueLen = 16384
	}
	if c.Hold <= 0 {
		c.Hold = time.Second
	}
	if c.MaxOpen <= 0 {
		c.MaxOpen = 65536
	}
	if c.MaxSensors <= 0 {
		c.MaxSensors = 1024
	}
	if c.MoveToleranceM <= 0 {
		c.MoveToleranceM = 20
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Stage is the multilateration stage. Offer is safe for concurrent use;
// Run runs once.
type Stage struct {
	cfg   Config
	store Store
	q     chan Rx
	m     metrics

	// known is the set of sensors taking part, read by Offer without
	// the lock; Run replaces it (copied) when a receiver reports itself.
	known atomic.Pointer[map[string]struct{}]

	mu      sync.Mutex // guards what Run changes and Sensors reads
	nw      *mlat.Network
	ids     map[string]mlat.SensorID
	names   []string
	heard   []uint64 // receptions per sensor
	newest  []int64  // newest time each sensor gave, ns of its clock
	arrived []int64  // arrival of each sensor's last reception, Unix ns
	told    []int64  // the arrival last told to OnHeard
	// Per sensor: its position, where it came from, how often a reported
	// one moved, and whether a configured sensor's differing report was
	// logged.
	pos       []Position
	source    []string
	moves     []uint64
	conflicts []bool
	logged    []int64 // arrival of the last move logged
	grp       *mlat.Grouper
	sv        *mlat.Solver
	filters   map[uint32]*aircraft
	prob      mlat.Problem
	rx        []mlat.Reception
}

// aircraft is the per-aircraft filter state.
type aircraft struct {
	f    mlat.Filter
	last int64 // arrival of the last fix, Unix ns
}

// New returns a stage over the configured sensors, its metrics registered
// on reg when it is not nil.
func New(cfg Config, store Store, reg prometheus.Registerer) *Stage {
	cfg.defaults()
	s := &Stage{cfg: cfg, store: store, q: make(chan Rx, cfg.QueueLen), ids: map[string]mlat.SensorID{},
		grp: mlat.NewGrouper(cfg.Hold.Nanoseconds(), cfg.MaxOpen), sv: mlat.NewSolver(mlat.SolverConfig{}),
		filters: map[uint32]*aircraft{}, rx: make([]mlat.Reception, 0, mlat.MaxReceptions)}
	s.prob.M = make([]mlat.Measurement, 0, mlat.MaxReceptions)
	s.nw = mlat.NewNetwork(nil, cfg.Sync)
	known := map[string]struct{}{}
	for _, c := range cfg.Sensors {
		if _, dup := s.ids[c.Name]; dup || len(s.names) >= cfg.MaxSensors {
			continue
		}
		s.addSensor(c.Name, Position{c.Lat, c.Lon, c.AltM}, c.Clock, SourceConfigured)
		known[c.Name] = struct{}{}
	}
	s.known.Store(&known)
	s.m = newMetrics(s)
	if reg != nil {
		s.m.register(reg)
	}
	return s
}

// Placed reports whether sensor can take part in multilateration: it
// is configured, or its reception states its position (hasPos). A caller
// with many receptions of one sensor asks once, and counts those it
// leaves out with Unplaced.
func (s *Stage) Placed(sensor string, hasPos bool) bool {
	if hasPos {
		return true
	}
	_, ok := (*s.known.Load())[sensor]
	return ok
}

// Unplaced counts n receptions of a format multilateration uses left out
// because their sensor has no position (refused{no_sensor_position}), as
// Offer counts one.
func (s *Stage) Unplaced(n int) {
	if n > 0 {
		s.m.noPos.Add(float64(n))
	}
}

// Offer queues one reception without blocking: false when the queue is
// full (the reception is shed and counted), the frame is not a Mode S
// format multilateration uses, or its sensor has no position (counted).
func (s *Stage) Offer(r *Rx) bool {
	if r.Len == 0 || !UsefulDF(r.Msg[0]>>3) {
		return false
	}
	if !s.Placed(r.Sensor, r.HasPos) {
		s.m.noPos.Inc()
		return false
	}
	select {
	case s.q <- *r:
		s.m.queued.Inc()
		return true
	default:
		s.m.shed.Inc()
		return false
	}
}

// UsefulDF reports whether downlink format df is one multilateration
// uses: the formats whose identical bytes at several sensors are one
// transmission (all-call, surveillance and extended squitter replies).
func UsefulDF(df byte) bool {
	switch df {
	case 0, 4, 5, 11, 16, 17, 18, 20, 21:
		return true
	}
	return false
}

// Run groups and solves until ctx ends.
func (s *Stage) Run(ctx context.Context) error {
	tick := time.NewTicker(s.cfg.Hold / 4)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case r := <-s.q:
			s.mu.Lock()
			s.add(&r)
			s.mu.Unlock()
		case now := <-tick.C:
			s.mu.Lock()
			s.grp.Expire(now.UnixNano(), s.process)
			s.forget(now.UnixNano())
			s.tellHeard()
			s.mu.Unlock()
		}
	}
}

// add puts one reception into its group.
func (s *Stage) add(r *Rx) {
	id, ok := s.sensorOf(r)
	if !ok {
		return
	}
	s.heard[id]++
	s.arrived[id] = r.Arrival
	t := sensorNs(r.Clock, r.Ticks)
	if t > s.newest[id] {
		s.newest[id] = t
	}
	s.grp.Add(r.Msg[:r.Len], mlat.Reception{Sensor: id, T: t}, r.Arrival, s.process)
}

// sensorNs converts a Beast timestamp to nanoseconds of its clock: a
// 12 MHz count, or GPS seconds of the day (top 18 bits) and nanoseconds
// (low 30 bits).
func sensorNs(k sensorclock.Kind, ticks uint64) int64 {
	if k == sensorclock.GPS {
		return int64(ticks>>30)*1e9 + int64(ticks&(1<<30-1))
	}
	return int64(ticks) * 250 / 3
}

// forget drops the filters of aircraft without a fix for a minute.
func (s *Stage) forget(now int64) {
	for k, a := range s.filters {
		if now-a.last > 60e9 {
			delete(s.filters, k)
		}
	}
}

// tellHeard tells OnHeard of the receivers heard since it was last told.
func (s *Stage) tellHeard() {
	if s.cfg.OnHeard == nil {
		return
	}
	for i, at := range s.arrived {
		if at != s.told[i] {
			s.told[i] = at
			s.cfg.OnHeard(s.names[i], time.Unix(0, at), s.heard[i])
		}
	}
}

// Queued is how many receptions wait.
func (s *Stage) Queued() int { return len(s.q) }
