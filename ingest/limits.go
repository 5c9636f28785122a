package ingest

import (
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/internal/ratelimit"
)

// SensorLimits bound what one sensor may send through the single-frame
// intake (issue 32): a token bucket per protocol and sensor, refilled at
// these rates and holding one second of each. A frame beyond them is
// refused ("-ERR rate_limited: …") and counted in
// cuasd_frames_dropped_total{adapter="intake",reason="rate_limited"}, so
// one sensor's flood neither grows cuasd's memory nor takes every other
// sensor's share of CUAS_RAW. The decoders apply the same limits to what
// sensors publish straight to cuas.raw (decode/worker).
type SensorLimits = ratelimit.Limits

// DefaultSensorLimits are far above what a receiver sends — a busy
// 1090 MHz receiver sends about 5,000 frames (80 KB) a second — and above
// what the intake benchmark's one sensor reaches on the reference machine
// (890,000 frames, 14 MB a second): 1,000,000 frames and 32 MiB a second.
func DefaultSensorLimits() SensorLimits {
	return SensorLimits{FramesPerSecond: 1_000_000, BytesPerSecond: 32 << 20}
}

// sensorBuckets are the token buckets of the sensors heard recently,
// shared by the intake's handlers.
type sensorBuckets struct {
	mu  sync.Mutex
	set *ratelimit.Set
}

func newSensorBuckets(l SensorLimits) *sensorBuckets {
	return &sensorBuckets{set: ratelimit.NewSet(l)}
}

// take spends one frame of n bytes from key's bucket at now; it returns
// why it cannot ("" when it could). A limit of 0 is no limit.
func (s *sensorBuckets) take(key string, n int, now time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := now.UnixNano()
	return s.set.Bucket(key, ns).Take(s.set.Limits(), n, ns)
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
