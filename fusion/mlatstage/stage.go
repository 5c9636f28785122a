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
	"sync"
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
	Log  *slog.Logger
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

	mu      sync.Mutex // guards what Run changes and Sensors reads
	nw      *mlat.Network
	ids     map[string]mlat.SensorID
	names   []string
	heard   []uint64 // receptions per sensor
	newest  []int64  // newest time each sensor gave, ns of its clock
	arrived []int64  // arrival of each sensor's last reception, Unix ns
	grp     *mlat.Grouper
	sv      *mlat.Solver
	filters map[uint32]*aircraft
	prob    mlat.Problem
	rx      []mlat.Reception
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
	table := make([]mlat.Sensor, 0, len(cfg.Sensors))
	for _, c := range cfg.Sensors {
		s.ids[c.Name] = mlat.SensorID(len(table))
		s.names = append(s.names, c.Name)
		table = append(table, mlat.Sensor{Pos: mlat.ECEF(c.Lat, c.Lon, c.AltM), HasPos: true, Clock: c.Clock})
	}
	s.heard, s.newest, s.arrived = make([]uint64, len(table)), make([]int64, len(table)), make([]int64, len(table))
	s.nw = mlat.NewNetwork(table, cfg.Sync)
	s.m = newMetrics(s)
	if reg != nil {
		s.m.register(reg)
	}
	return s
}

// Offer queues one reception without blocking: false when the queue is
// full (the reception is shed and counted), the frame is not a Mode S
// format multilateration uses, or its sensor has no configured position.
func (s *Stage) Offer(r *Rx) bool {
	if r.Len == 0 || !usefulDF(r.Msg[0]>>3) {
		return false
	}
	if _, ok := s.ids[r.Sensor]; !ok {
		s.m.refused.WithLabelValues(mlat.ReasonNoSensorPosition.String()).Inc()
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

// usefulDF: the downlink formats whose identical bytes at several sensors
// are one transmission (all-call, surveillance and extended squitter
// replies).
func usefulDF(df byte) bool {
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
			s.mu.Unlock()
		}
	}
}

// add puts one reception into its group.
func (s *Stage) add(r *Rx) {
	id := s.ids[r.Sensor]
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

// Queued is how many receptions wait.
func (s *Stage) Queued() int { return len(s.q) }
