package fusion

import (
	"strings"

	"github.com/cuasd/cuasd/decode"
)

// Fix is one position fix the store accepted (issue 30): what an output
// that wants every fix (the history recorder) takes, rather than sampling
// the track's 32-position ring once a sweep.
type Fix struct {
	TrackID string
	// Protocol is the protocol of the track id (its prefix's).
	Protocol decode.Protocol
	// Sensor heard the frame the fix came from.
	Sensor string
	// T is the fix's time (Unix ns): its sensor's time mapped to UTC.
	T        int64
	Lat, Lon float64
	// AltM and AltKind are the track's altitude at the fix, when HasAlt.
	HasAlt  bool
	AltM    float64
	AltKind string
	// SpeedMps, HeadingDeg and VRateMps are the track's velocity at the
	// fix, when HasVel.
	HasVel                         bool
	SpeedMps, HeadingDeg, VRateMps float64
}

// FeedFixes calls fn with every position fix the store accepts from now on,
// in the order accepted, until stop is called. fn runs under the store's
// lock on the applying goroutine: it must return at once (put the fix in
// a bounded queue), must not call the store, and must not keep f.
func (s *Store) FeedFixes(fn func(f *Fix)) (stop func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.feedSeq++
	id := s.feedSeq
	s.fixFeeds = append(s.fixFeeds, fixFeed{id, fn})
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, f := range s.fixFeeds {
			if f.id == id {
				s.fixFeeds = append(s.fixFeeds[:i:i], s.fixFeeds[i+1:]...)
				return
			}
		}
	}
}

type fixFeed struct {
	id uint64
	fn func(*Fix)
}

// feedFix hands an accepted fix to the feeds (s.mu held).
func (s *Store) feedFix(t *track, p Point) {
	p0, _, _ := strings.Cut(t.id, ":")
	f := &s.fix
	*f = Fix{TrackID: t.id, Protocol: decode.Protocol(protoOfPrefix(p0)), Sensor: t.lastSensor, T: p.T, Lat: p.Lat, Lon: p.Lon,
		HasAlt: t.hasAlt, AltM: t.alt, AltKind: t.altKind,
		HasVel: t.hasVel, SpeedMps: t.speed, HeadingDeg: t.heading, VRateMps: t.vr}
	for _, fd := range s.fixFeeds {
		fd.fn(f)
	}
}
