package fusion

import (
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/events"
)

// MLATFix is a position located by multilateration (package fusion/mlat):
// where the times of arrival at several sensors put an aircraft's
// transmission, not where the aircraft says it is.
type MLATFix struct {
	// ICAO is the aircraft address, six upper-case hex digits.
	ICAO string
	// T is the transmission's time, Unix ns, and TimeSource where it came
	// from (a GPS-timed receiver's clock, or the arrival).
	T          int64
	TimeSource sensorclock.Source
	Lat, Lon   float64
	MLATInfo
}

// MLATInfo is a multilaterated fix's quality: how many sensors' times it
// used, their RMS range residual and the 1-σ horizontal error estimate.
type MLATInfo struct {
	Sensors   int
	ResidualM float64
	ErrorM    float64
	// T is the fix's time, Unix ns.
	T int64
}

// Verification is the verdict on an aircraft's ADS-B position claim from
// the times its transmission reached several synchronised sensors.
type Verification struct {
	// Status is "verified", "contradicted" or "unverifiable".
	Status string
	// ResidualM is the RMS range residual of the times at the claimed
	// position; DistanceM the horizontal distance from the claim to where
	// the times put the transmitter.
	ResidualM, DistanceM float64
	// Sensors is how many receptions the verdict used.
	Sensors int
	// T is the checked transmission's time, Unix ns.
	T int64
}

// mlatState is a track's multilateration state.
type mlatState struct {
	info    MLATInfo
	hasInfo bool
	ver     Verification
	hasVer  bool
}

// mlatYieldNS: an ADS-B position younger than this is kept rather than
// replaced by a multilaterated one (readsb prefers ADS-B likewise); the
// fix's quality is still recorded.
const mlatYieldNS = 10e9

// PositionMLAT is the position method of a multilaterated position.
const PositionMLAT = "mlat"

func (t *track) mlatState() *mlatState {
	if t.ext == nil {
		t.ext = &trackExt{}
	}
	if t.ext.mlat == nil {
		t.ext.mlat = &mlatState{}
	}
	return t.ext.mlat
}

// ApplyMLAT puts a multilaterated position on the aircraft's track,
// making the track when the aircraft has none (a Mode S-only aircraft:
// several sensors' consistent times vouch for its address, which a single
// reply's parity cannot). A fresh ADS-B position is kept instead; the
// plausibility check applies as to any position. It reports whether the
// position was taken.
func (s *Store) ApplyMLAT(f MLATFix) bool {
	if len(f.ICAO) != 6 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now().UnixNano()
	t := s.aircraftLocked(f.ICAO, f.T, now)
	st := t.mlatState()
	st.info, st.hasInfo = f.MLATInfo, true
	st.info.T = f.T
	s.version++
	if t.hasPos && t.posMethod != PositionMLAT && t.histTotal > 0 && f.T-t.lastPoint().T < mlatYieldNS {
		return false
	}
	// The position is no protocol's claim: keep it out of the
	// cross-protocol disagreement check.
	proto := t.lastProto
	t.lastProto = ""
	ok := s.acceptPosition(t, sensorclock.Time{UnixNano: f.T, Source: f.TimeSource}, f.Lat, f.Lon, PositionMLAT)
	t.lastProto = proto
	if ok && t.nObs == 0 {
		t.timeSource = f.TimeSource // a track only multilateration feeds
	}
	return ok
}

// SetVerification records the verdict on the aircraft's latest checked
// ADS-B position claim; false when the aircraft has no live track.
func (s *Store) SetVerification(icao string, v Verification) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.alias[aliasKey{string(decode.ADSB), icao}]
	t := s.tracks[id]
	if !ok || t == nil || s.expiredLocked(t, s.cfg.Now().UnixNano()) {
		return false
	}
	st := t.mlatState()
	st.ver, st.hasVer = v, true
	s.version++
	return true
}

// aircraftLocked returns the live ADS-B track of address icao, making it
// when there is none.
func (s *Store) aircraftLocked(icao string, at, now int64) *track {
	ak := aliasKey{string(decode.ADSB), icao}
	t := s.tracks[s.alias[ak]]
	if t != nil && s.expiredLocked(t, now) {
		s.removeLocked(t)
		t = nil
	}
	if t == nil {
		t = &track{id: trackPrefix(decode.ADSB) + icao, icao: icao, firstSeen: at}
		s.tracks[t.id] = t
		s.alias[ak] = t.id
	}
	t.protocols |= maskOf(decode.ADSB)
	if at > t.lastSeen {
		t.lastSeen = at
	}
	t.lastUpdate = now
	return t
}

// snapshotMLAT copies the multilateration state into a Track.
func (t *track) snapshotMLAT(s *Track) {
	if t.ext == nil || t.ext.mlat == nil {
		return
	}
	m := t.ext.mlat
	if m.hasInfo {
		info := m.info
		s.MLAT = &info
	}
	if m.hasVer {
		v := m.ver
		s.Verification = &v
	}
}

// viewMLAT adds the issue-31 members to the track's view.
func (t *Track) viewMLAT(j *events.Track) {
	if t.HasPosition {
		j.PositionSource = "broadcast"
		if t.PositionMethod == PositionMLAT {
			j.PositionSource = PositionMLAT
		}
	}
	if m := t.MLAT; m != nil {
		j.MLAT = &events.MLAT{Sensors: m.Sensors, ResidualM: Round(m.ResidualM, 1), ErrorM: Round(m.ErrorM, 1)}
	}
	if v := t.Verification; v != nil {
		j.Verification = &events.Verification{Status: v.Status, ResidualM: Round(v.ResidualM, 1),
			DistanceM: Round(v.DistanceM, 1), Sensors: v.Sensors, Time: time.Unix(0, v.T).UTC()}
	}
}
