package remoteid

import (
	"encoding/hex"
	"math"
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/sensorclock"
)

// Remote ID splits one aircraft's state across several messages (Basic ID,
// Location, System, Operator ID...), sent in separate frames unless a pack
// carries them together. Only the carrier's transmitter address ties them
// to each other, so a receiver associates messages per transmitter address:
// FrameObservation turns one frame into an Observation on its own, and
// Associator merges successive frames of one transmitter first.

// FrameObservation turns one decoded frame into a protocol-neutral
// Observation, using only what that frame holds. Key is the UAS ID of the
// frame's first Basic ID; without one it is "mac:" + the transmitter address
// (or "" when the carrier has none): such frames should go through an
// Associator. recvUnixNano and sensor are receiver-side facts.
func FrameObservation(f *Frame, recvUnixNano int64, sensor string) decode.Observation {
	var st uasState
	st.merge(f)
	return st.observation(f, recvUnixNano, sensor)
}

// Associator merges the messages of successive frames per transmitter
// address, so that a Location heard in one frame is reported under the UAS
// ID heard in another. It is not safe for concurrent use; give each decoder
// worker its own. Entries unheard for longer than TTL are forgotten.
type Associator struct {
	ttl    int64
	states map[[6]byte]*uasState
	last   int64 // newest receive time seen, for eviction
}

// NewAssociator returns an Associator that forgets a transmitter after ttl
// without frames (30 s is a sensible choice: F3411 repeats every message at
// least every 3 s).
func NewAssociator(ttl time.Duration) *Associator {
	return &Associator{ttl: int64(ttl), states: map[[6]byte]*uasState{}}
}

// Observe merges frame f, received at recvUnixNano by sensor, into the state
// of its transmitter and returns the merged Observation. Frames without a
// transmitter address are reported on their own, as FrameObservation does.
func (a *Associator) Observe(f *Frame, recvUnixNano int64, sensor string) decode.Observation {
	if !f.HasTransmitter {
		return FrameObservation(f, recvUnixNano, sensor)
	}
	if recvUnixNano > a.last+a.ttl/4 || recvUnixNano < a.last {
		a.evict(recvUnixNano)
	}
	st := a.states[f.Transmitter]
	if st == nil || recvUnixNano-st.seen > a.ttl {
		st = &uasState{}
		a.states[f.Transmitter] = st
	}
	st.seen = recvUnixNano
	st.merge(f)
	return st.observation(f, recvUnixNano, sensor)
}

// Len returns the number of transmitters currently remembered.
func (a *Associator) Len() int { return len(a.states) }

func (a *Associator) evict(now int64) {
	a.last = now
	for k, st := range a.states {
		if now-st.seen > a.ttl {
			delete(a.states, k)
		}
	}
}

// uasState is what is known of one transmitter's UA.
type uasState struct {
	seen                     int64
	hasBasic, hasLoc, hasSys bool
	hasOp                    bool
	basic                    BasicID
	loc                      Location
	locVersion               uint8
	sys                      System
	op                       OperatorID
	frameWarnings            []WarningView
	// selfID is the last text Self-ID (description type 0): a product
	// claim for fusion (issue 25). Kept as a string so a repeated text
	// costs no allocation.
	selfID string
}

func (s *uasState) merge(f *Frame) {
	p := &f.Pack
	s.frameWarnings = NewPackView(p).Warnings
	basicSeen := false
	for i := 0; i < p.Count; i++ {
		m := &p.Messages[i]
		switch m.Type {
		case TypeBasicID:
			// With two Basic IDs (serial and registration) in one pack, the
			// first names the UA.
			if !basicSeen {
				s.basic, s.hasBasic, basicSeen = m.BasicID, true, true
			}
		case TypeLocation:
			s.loc, s.locVersion, s.hasLoc = m.Location, m.Version, true
		case TypeSystem:
			s.sys, s.hasSys = m.System, true
		case TypeOperatorID:
			s.op, s.hasOp = m.OperatorID, true
		case TypeSelfID:
			s.mergeSelfID(&m.SelfID)
		}
	}
}

// mergeSelfID keeps a text Self-ID; the comparison with the kept string
// does not allocate, so only a changed text does.
func (s *uasState) mergeSelfID(d *SelfID) {
	if d.DescType != 0 || !printable(d.Desc[:]) {
		return
	}
	if t := cstring(d.Desc[:]); string(t) != s.selfID {
		s.selfID = string(t)
	}
}

func (s *uasState) observation(f *Frame, recvUnixNano int64, sensor string) decode.Observation {
	o := decode.Observation{Protocol: decode.RemoteID, Sensor: sensor, TimeUnixNano: recvUnixNano}
	s.identity(f, &o)
	o.Description = s.selfID // issue 25: a product claim, when it names one
	if s.hasLoc {
		s.location(&o)
	}
	if s.hasSys && s.sys.OperatorPositionValid() {
		o.OperatorLat, o.OperatorLon, _ = s.sys.OperatorPosition()
		o.HasOperatorPosition = true
	}
	for _, w := range s.frameWarnings {
		o.Warnings = append(o.Warnings, w.Code+": "+w.Detail)
	}
	s.checkOperatorDistance(&o)
	return o
}

// identity sets the UAS id, the UA type, the transmitter, the track key
// (the UAS id, else the transmitter address) and the operator id.
func (s *uasState) identity(f *Frame, o *decode.Observation) {
	if s.hasBasic {
		if id, ok := s.basic.UASID(); ok && id != "" {
			o.UASID = id
		} else if s.basic.ID != [20]byte{} {
			o.UASID = hex.EncodeToString(s.basic.ID[:])
		}
		o.Category, o.CategoryKind = UATypeName(s.basic.UAType), decode.CategoryUAType
	}
	if f.HasTransmitter {
		o.Transmitter = FormatMAC(f.Transmitter)
	}
	switch {
	case o.UASID != "":
		o.Key = o.UASID
	case f.HasTransmitter:
		o.Key = "mac:" + o.Transmitter
	}
	if s.hasOp {
		if id, ok := s.op.Text(); ok {
			o.OperatorID = id
		}
	}
}

// location sets position, altitude (geodetic first), velocity and the
// emergency status of the last Location message.
func (s *uasState) location(o *decode.Observation) {
	l := &s.loc
	if l.PositionValid() {
		o.Lat, o.Lon, o.HasPosition = l.Position()
		o.PositionMethod = "remoteid"
	}
	if ts, ok := l.Timestamp(); ok && ts < 3600 {
		// The UA's GNSS time, tenths of a second after the full UTC hour
		// (issue 30): the decoder stage places it in the hour nearest
		// its arrival.
		o.SensorNs, o.TimeSource = int64(math.Round(ts*10))*1e8, sensorclock.FromGPS
	}
	if alt, ok := l.AltitudeGeo(); ok {
		o.AltM, o.AltKind, o.HasAltitude = alt, "geo", true
		o.VAccuracyM = l.StatedVertAccuracyM()
	} else if alt, ok := l.AltitudeBaro(); ok {
		o.AltM, o.AltKind, o.HasAltitude = alt, "baro", true
		o.VAccuracyM = l.StatedBaroAccuracyM()
	}
	if o.HasPosition {
		o.HAccuracyM = l.StatedHorizAccuracyM()
	}
	spd, okS := l.SpeedHorizontal()
	dir, okD := l.Direction()
	if okS && okD && dir <= 360 {
		o.SpeedMps, o.HeadingDeg, o.HasVelocity = spd, dir, true
		if vr, ok := l.SpeedVertical(); ok {
			o.VRateMps = vr
		}
	}
	switch {
	case l.Status == 3:
		o.Emergency = "emergency"
	case l.Status == 4 && s.locVersion >= Version2:
		o.Emergency = "remote_id_system_failure"
	}
}

// checkOperatorDistance is the pack check across frames: operator and
// aircraft positions heard in different frames of one transmitter must be
// plausible together.
func (s *uasState) checkOperatorDistance(o *decode.Observation) {
	if !o.HasPosition || !o.HasOperatorPosition {
		return
	}
	d := HaversineM(o.Lat, o.Lon, o.OperatorLat, o.OperatorLon)
	if d <= MaxOperatorDistanceM {
		return
	}
	code := WarnOperatorFarFromAircraft.String()
	for _, w := range s.frameWarnings {
		if w.Code == code {
			return
		}
	}
	o.Warnings = append(o.Warnings, code+": "+operatorFarDetail(d))
}
