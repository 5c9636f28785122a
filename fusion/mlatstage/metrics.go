package mlatstage

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/fusion/mlat"
)

type metrics struct {
	queued, shed, groups, fixes, moves prometheus.Counter
	// noPos is refused{reason="no_sensor_position"}, resolved once: Offer
	// and Unplaced count it for every frame of a receiver without a
	// position.
	noPos             prometheus.Counter
	refused, verdicts *prometheus.CounterVec
	sensors           *prometheus.GaugeVec
	queue, pairs      prometheus.Collector
}

func newMetrics(s *Stage) metrics {
	m := metrics{
		queued: prometheus.NewCounter(prometheus.CounterOpts{Name: "cuasd_mlat_receptions_total",
			Help: "Timestamped Mode S receptions queued for multilateration."}),
		shed: prometheus.NewCounter(prometheus.CounterOpts{Name: "cuasd_mlat_receptions_shed_total",
			Help: "Receptions dropped because the multilateration queue was full (ingest never waits for it)."}),
		groups: prometheus.NewCounter(prometheus.CounterOpts{Name: "cuasd_mlat_groups_total",
			Help: "Transmissions gathered from one or more sensors."}),
		fixes: prometheus.NewCounter(prometheus.CounterOpts{Name: "cuasd_mlat_fixes_total",
			Help: "Multilaterated positions put on tracks."}),
		moves: prometheus.NewCounter(prometheus.CounterOpts{Name: "cuasd_mlat_sensor_moves_total",
			Help: "Receivers whose reported position (Cuas-Sensor-Position) moved or whose clock changed: their clock sync and delay calibration restarted."}),
		sensors: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cuasd_mlat_sensors",
			Help: "Receivers taking part in multilateration, by where their position comes from (configured, reported)."}, []string{"source"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cuasd_mlat_refused_total",
			Help: "Transmissions that gave no position or no verdict, by reason."}, []string{"reason"}),
		verdicts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cuasd_mlat_verifications_total",
			Help: "ADS-B position claims checked against the times of arrival, by verdict."}, []string{"status"}),
		queue: prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cuasd_mlat_queue_length",
			Help: "Receptions waiting for the multilateration stage."}, func() float64 { return float64(s.Queued()) }),
	}
	m.pairs = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cuasd_mlat_sync_pairs_good",
		Help: "Sensor pairs whose clock sync is good now (free-running clocks)."}, func() float64 {
		n := 0
		for _, st := range s.Sensors() {
			n += st.GoodPairs
		}
		return float64(n / 2)
	})
	for _, r := range mlat.Reasons() {
		m.refused.WithLabelValues(r.String())
	}
	m.refused.WithLabelValues("undecodable")
	m.refused.WithLabelValues("no_claim_reference")
	m.refused.WithLabelValues("sensor_limit")
	m.noPos = m.refused.WithLabelValues(mlat.ReasonNoSensorPosition.String())
	m.sensors.WithLabelValues(SourceConfigured).Set(float64(len(s.names)))
	m.sensors.WithLabelValues(SourceReported)
	for _, st := range []mlat.Status{mlat.Verified, mlat.Contradicted, mlat.Unverifiable} {
		m.verdicts.WithLabelValues(st.String())
	}
	return m
}

func (m *metrics) register(reg prometheus.Registerer) {
	reg.MustRegister(m.queued, m.shed, m.groups, m.fixes, m.moves, m.refused, m.verdicts, m.sensors, m.queue, m.pairs)
}

// SensorState is one sensor's multilateration state, for /v1/sensors.
type SensorState struct {
	Name  string
	Clock string
	// Receptions counts its timestamped receptions.
	Receptions uint64
	// Pairs is how many other sensors its clock has a sync with;
	// GoodPairs how many of those are usable now (GPS-timed sensors need
	// none with each other).
	Pairs, GoodPairs int
	// LastHeard is when its last timestamped reception arrived.
	LastHeard time.Time
	// DelayNS is a GPS-timed sensor's timestamp delay relative to the
	// network's other GPS-timed sensors, learnt from ADS-B positions and
	// subtracted from its times (mlat.Network.DelayNS); HasDelay is
	// false until it is established.
	DelayNS  float64
	HasDelay bool
	// Position is the antenna's position in use; PositionSource says
	// where it came from (SourceConfigured or SourceReported); Moves
	// counts the times a reported position moved and the sensor's sync
	// and calibration restarted.
	Position       Position
	PositionSource string
	Moves          uint64
}

// Sensors returns every configured sensor's state.
func (s *Stage) Sensors() []SensorState {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]SensorState, len(s.names))
	for i, n := range s.names {
		out[i] = SensorState{Name: n, Clock: s.nw.Sensors[i].Clock.String(), Receptions: s.heard[i],
			Position: s.pos[i], PositionSource: s.source[i], Moves: s.moves[i]}
		out[i].DelayNS, out[i].HasDelay = s.nw.DelayNS(mlat.SensorID(i))
		if s.arrived[i] != 0 {
			out[i].LastHeard = time.Unix(0, s.arrived[i]).UTC()
		}
	}
	for _, p := range s.nw.Sync.Pairs(nil, func(id mlat.SensorID) int64 { return s.newest[id] }) {
		for _, id := range []mlat.SensorID{p.A, p.B} {
			if int(id) < len(out) {
				out[id].Pairs++
				if p.Good {
					out[id].GoodPairs++
				}
			}
		}
	}
	return out
}
