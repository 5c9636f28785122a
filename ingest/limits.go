package ingest

import (
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// SensorLimits bound what one sensor may send through the single-frame
// intake (issue 32): a token bucket per protocol and sensor, refilled at
// these rates and holding one second of each. A frame beyond them is
// refused ("-ERR rate_limited: …") and counted in
// cuasd_frames_dropped_total{adapter="intake",reason="rate_limited"}, so
// one sensor's flood neither grows cuasd's memory nor takes every other
// sensor's share of CUAS_RAW.
type SensorLimits struct {
	// FramesPerSecond is the sustained frame rate of one sensor.
	FramesPerSecond float64
	// BytesPerSecond is the sustained frame bytes of one sensor.
	BytesPerSecond float64
}

// DefaultSensorLimits are far above what a receiver sends — a busy
// 1090 MHz receiver sends about 5,000 frames (80 KB) a second — and above
// what the intake benchmark's one sensor reaches on the reference machine
// (890,000 frames, 14 MB a second): 1,000,000 frames and 32 MiB a second.
func DefaultSensorLimits() SensorLimits {
	return SensorLimits{FramesPerSecond: 1_000_000, BytesPerSecond: 32 << 20}
}

// sensorBuckets are the token buckets of the sensors heard recently.
type sensorBuckets struct {
	lim   SensorLimits
	mu    sync.Mutex
	m     map[string]*bucket
	swept time.Time
}

type bucket struct {
	frames, bytes float64
	last          time.Time
}

func newSensorBuckets(l SensorLimits) *sensorBuckets {
	return &sensorBuckets{lim: l, m: map[string]*bucket{}}
}

// take spends one frame of n bytes from key's bucket at now; it returns
// why it cannot ("" when it could). A limit of 0 is no limit.
func (s *sensorBuckets) take(key string, n int, now time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	b := s.m[key]
	if b == nil {
		b = &bucket{frames: s.lim.FramesPerSecond, bytes: s.lim.BytesPerSecond, last: now}
		s.m[key] = b
	}
	if dt := now.Sub(b.last).Seconds(); dt > 0 {
		b.frames = min(s.lim.FramesPerSecond, b.frames+dt*s.lim.FramesPerSecond)
		b.bytes = min(s.lim.BytesPerSecond, b.bytes+dt*s.lim.BytesPerSecond)
		b.last = now
	}
	switch {
	case s.lim.FramesPerSecond > 0 && b.frames < 1:
		return "is over " + strconv.FormatFloat(s.lim.FramesPerSecond, 'f', -1, 64) + " frames a second"
	case s.lim.BytesPerSecond > 0 && b.bytes < float64(n):
		return "is over " + strconv.FormatFloat(s.lim.BytesPerSecond, 'f', -1, 64) + " bytes a second"
	}
	b.frames--
	b.bytes -= float64(n)
	return ""
}

// sweep forgets, at most once a second, the sensors whose buckets have
// refilled: they are as good as new, and the map stays as small as the
// set of sensors sending now, however many names a client invents.
func (s *sensorBuckets) sweep(now time.Time) {
	if now.Sub(s.swept) < time.Second {
		return
	}
	s.swept = now
	for k, b := range s.m {
		if now.Sub(b.last) >= time.Second {
			delete(s.m, k)
		}
	}
}

// slowDropped counts the messages the NATS client dropped for the
// intake's subscription (a slow consumer), across resubscriptions.
type slowDropped struct {
	mu   sync.Mutex
	sub  *nats.Subscription
	past int
}

func (s *slowDropped) set(sub *nats.Subscription) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sub != nil {
		if n, err := s.sub.Dropped(); err == nil {
			s.past += n
		}
	}
	s.sub = sub
}

func (s *slowDropped) value() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.past
	if s.sub != nil {
		if d, err := s.sub.Dropped(); err == nil {
			n += d
		}
	}
	return float64(n)
}
