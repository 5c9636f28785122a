package alert

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the alert metrics, shared by the rule engine and every sink.
type Metrics struct {
	alerts     *prometheus.CounterVec
	deliveries *prometheus.CounterVec

	mu      sync.Mutex
	pending map[string]uint64
}

// NewMetrics registers cuasd_alerts_total{rule,state},
// cuasd_alert_deliveries_total{sink,result} and cuasd_alert_pending with
// reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		alerts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_alerts_total", Help: "Alert states raised by the rules (open, update, resolved).",
		}, []string{"rule", "state"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_alert_deliveries_total", Help: "Alert delivery attempts by sink and result (delivered, retry, failed).",
		}, []string{"sink", "result"}),
		pending: map[string]uint64{},
	}
	if reg != nil {
		reg.MustRegister(m.alerts, m.deliveries, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "cuasd_alert_pending", Help: "Alert messages not yet delivered or given up, over every sink.",
		}, m.pendingTotal))
	}
	return m
}

// Declare creates the counters of every rule (each state) and every sink
// (each delivery result) of c at 0, so that /metrics shows them before the
// first alert and an increase() sees the first failed delivery (issue 24).
func (m *Metrics) Declare(c *Config) {
	for _, r := range c.Rules {
		for _, st := range []string{StateOpen, StateUpdate, StateResolved} {
			m.alerts.WithLabelValues(r.Name, st)
		}
	}
	for _, s := range c.Sinks {
		for _, res := range []string{Delivered, "retry", Failed} {
			m.deliveries.WithLabelValues(s.Name, res)
		}
	}
}

func (m *Metrics) setPending(sink string, n uint64) {
	m.mu.Lock()
	m.pending[sink] = n
	m.mu.Unlock()
}

func (m *Metrics) pendingTotal() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n uint64
	for _, v := range m.pending {
		n += v
	}
	return float64(n)
}
