package cot

import "github.com/prometheus/client_golang/prometheus"

// Results of cuasd_cot_events_total.
const (
	ResultSent     = "sent"     // written to the socket
	ResultDropped  = "dropped"  // the sink's queue was full (slow or dead sink)
	ResultFailed   = "failed"   // the write failed (the event is lost, the sink reconnects)
	ResultOversize = "oversize" // larger than a safe datagram even with short remarks
)

// Metrics are the CoT output's Prometheus metrics, shared by its sinks.
type Metrics struct {
	events *prometheus.CounterVec
	up     *prometheus.GaugeVec
}

// NewMetrics registers cuasd_cot_events_total{sink,result} and
// cuasd_cot_sink_up{sink} on reg (nil: unregistered), reusing them when
// they are registered already.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_cot_events_total",
			Help: "Cursor-on-Target events per sink and result: sent, dropped (queue full), failed (write error), oversize (too large for a datagram).",
		}, []string{"sink", "result"}),
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "cuasd_cot_sink_up",
			Help: "Whether a Cursor-on-Target sink is connected (1) or not (0).",
		}, []string{"sink"}),
	}
	if reg == nil {
		return m
	}
	if err := reg.Register(m.events); err != nil {
		if are, ok := err.(prometheus.AlreadyRegisteredError); ok {
			m.events = are.ExistingCollector.(*prometheus.CounterVec)
		}
	}
	if err := reg.Register(m.up); err != nil {
		if are, ok := err.(prometheus.AlreadyRegisteredError); ok {
			m.up = are.ExistingCollector.(*prometheus.GaugeVec)
		}
	}
	return m
}

// sinkMetrics are one sink's children, resolved once (no label lookup per
// event); every result starts at zero so a dashboard sees the series.
type sinkMetrics struct {
	sent, dropped, failed, oversize prometheus.Counter
	up                              prometheus.Gauge
}

func (m *Metrics) sink(name string) sinkMetrics {
	if m == nil {
		m = NewMetrics(nil)
	}
	s := sinkMetrics{
		sent: m.events.WithLabelValues(name, ResultSent), dropped: m.events.WithLabelValues(name, ResultDropped),
		failed: m.events.WithLabelValues(name, ResultFailed), oversize: m.events.WithLabelValues(name, ResultOversize),
		up: m.up.WithLabelValues(name),
	}
	s.up.Set(0)
	return s
}
