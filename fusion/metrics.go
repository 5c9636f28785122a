package fusion

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector exports the store's gauges (live tracks, dropped positions)
// at scrape time; register it once per store.
func (s *Store) Collector() prometheus.Collector { return newStoreCollector(s) }

// RunExpiry removes expired tracks every period until ctx ends.
func (s *Store) RunExpiry(ctx context.Context, period time.Duration, onExpire func([]string)) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if gone := s.Expire(); len(gone) > 0 && onExpire != nil {
				onExpire(gone)
			}
		}
	}
}

// storeCollector exports the store's gauges at scrape time.
type storeCollector struct {
	s       *Store
	active  *prometheus.Desc
	dropped *prometheus.Desc
	skipped *prometheus.Desc
	related *prometheus.Desc
}

func newStoreCollector(s *Store) prometheus.Collector {
	return &storeCollector{
		s:       s,
		active:  prometheus.NewDesc("cuasd_tracks_active", "Live tracks, by protocol (a fused track counts once per protocol).", []string{"protocol"}, nil),
		dropped: prometheus.NewDesc("cuasd_observations_dropped_total", "Observations not applied to a track, by reason.", []string{"reason"}, nil),
		skipped: prometheus.NewDesc("cuasd_positions_skipped_total", "Positions that were no new fix of their track, by reason: heard_again (another receiver's copy of a transmission already applied), older (older than the track's position: heard late).", []string{"reason"}, nil),
		related: prometheus.NewDesc("cuasd_receiver_clock_pairs", "Pairs of receiver clocks related by position reports both heard (fusion/links.go), confirmed in the 5 minutes of frame time before the newest: with N receivers hearing common traffic, at least N-1.", nil, nil),
	}
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.active
	ch <- c.dropped
	ch <- c.skipped
	ch <- c.related
}
func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	for p, n := range c.s.CountByProtocol() {
		ch <- prometheus.MustNewConstMetric(c.active, prometheus.GaugeValue, float64(n), p)
	}
	for r, n := range c.s.Dropped() {
		ch <- prometheus.MustNewConstMetric(c.dropped, prometheus.CounterValue, float64(n), r)
	}
	for r, n := range c.s.Skipped() {
		ch <- prometheus.MustNewConstMetric(c.skipped, prometheus.CounterValue, float64(n), r)
	}
	ch <- prometheus.MustNewConstMetric(c.related, prometheus.GaugeValue, float64(c.s.RelatedClockPairs()))
}
