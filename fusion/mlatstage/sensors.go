package mlatstage

import (
	"math"

	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/fusion/mlat"
)

// Receivers take part in multilateration by configuration (Config.Sensors)
// or by stating their own position with their frames (Rx.Pos, the
// Cuas-Sensor-Position header of a receiver publishing straight to
// NATS). A configured position wins: a report is a claim. A reported
// position that moves beyond Config.MoveToleranceM restarts the
// receiver's clock sync and delay calibration, which were measured with
// the old geometry.

// addSensor appends a receiver to the network (the caller holds mu, or
// the stage is being made).
func (s *Stage) addSensor(name string, p Position, c mlat.Clock, source string) mlat.SensorID {
	id := s.nw.Add(mlat.Sensor{Pos: p.ecef(), HasPos: true, Clock: c})
	s.ids[name] = id
	s.names = append(s.names, name)
	s.heard, s.newest, s.arrived, s.told = append(s.heard, 0), append(s.newest, 0), append(s.arrived, 0), append(s.told, 0)
	s.pos, s.source = append(s.pos, p), append(s.source, source)
	s.moves, s.conflicts, s.logged = append(s.moves, 0), append(s.conflicts, false), append(s.logged, 0)
	return id
}

// sensorOf is r's sensor, added when a receiver no configuration names
// states its position for the first time; a reported position is
// checked against the one in use. false: the receiver cannot take part
// (no position, or MaxSensors reached), counted.
func (s *Stage) sensorOf(r *Rx) (mlat.SensorID, bool) {
	id, ok := s.ids[r.Sensor]
	switch {
	case ok && r.HasPos:
		s.reported(id, r)
	case ok:
	case !r.HasPos:
		s.m.refused.WithLabelValues(mlat.ReasonNoSensorPosition.String()).Inc()
		return 0, false
	case len(s.names) >= s.cfg.MaxSensors:
		s.m.refused.WithLabelValues("sensor_limit").Inc()
		return 0, false
	default:
		id = s.addSensor(r.Sensor, r.Pos, clockOf(r.Clock), SourceReported)
		known := make(map[string]struct{}, len(s.ids))
		for n := range s.ids {
			known[n] = struct{}{}
		}
		s.known.Store(&known)
		s.cfg.Log.Info("mlat: a receiver reported its position and takes part", "sensor", r.Sensor,
			"lat", r.Pos.Lat, "lon", r.Pos.Lon, "alt_m", r.Pos.AltM, "clock", clockOf(r.Clock).String())
		s.m.sensors.WithLabelValues(SourceReported).Inc()
		s.notify(r.Sensor, r.Pos)
	}
	return id, true
}

// reported compares a known receiver's stated position with the one in
// use: a configured receiver keeps its configuration (a differing report
// is logged once), a reported one that moved, or whose clock changed,
// is reset.
func (s *Stage) reported(id mlat.SensorID, r *Rx) {
	configured, c := s.source[id] == SourceConfigured, clockOf(r.Clock)
	switch {
	case r.Pos == s.pos[id] && (configured || c == s.nw.Sensors[id].Clock):
		return // the usual case: the same statement as before, no geometry
	case configured && s.conflicts[id]:
		return
	}
	d := mlat.Distance(s.nw.Sensors[id].Pos, r.Pos.ecef())
	if configured {
		if d > s.cfg.MoveToleranceM {
			s.conflicts[id] = true
			s.cfg.Log.Warn("mlat: a receiver reports a position other than its configured one; the configured one is used",
				"sensor", r.Sensor, "reported", r.Pos, "configured", s.pos[id], "distance_m", math.Round(d))
		}
		return
	}
	if d <= s.cfg.MoveToleranceM && c == s.nw.Sensors[id].Clock {
		return
	}
	// The groups open now were heard at the old position: solve them with
	// it before the new one is taken.
	s.grp.Expire(math.MaxInt64, s.process)
	s.nw.Reset(id, mlat.Sensor{Pos: r.Pos.ecef(), HasPos: true, Clock: c})
	if s.moves[id] == 0 || r.Arrival-s.logged[id] >= moveLogEvery {
		// Every move is counted; a receiver whose position flaps is logged
		// once a minute, not once a batch.
		s.logged[id] = r.Arrival
		s.cfg.Log.Warn("mlat: a receiver's reported position or clock changed; its clock sync and delay calibration restart",
			"sensor", r.Sensor, "from", s.pos[id], "to", r.Pos, "moved_m", math.Round(d), "clock", c.String(), "moves", s.moves[id]+1)
	}
	s.pos[id] = r.Pos
	s.moves[id]++
	s.m.moves.Inc()
	s.notify(r.Sensor, r.Pos)
}

// moveLogEvery is how often a receiver's moves are logged at most (on
// the arrival clock, ns).
const moveLogEvery = 60e9

func (s *Stage) notify(name string, p Position) {
	if s.cfg.OnPosition != nil {
		s.cfg.OnPosition(name, p)
	}
}

// clockOf is the multilateration clock of a Beast timestamp kind.
func clockOf(k sensorclock.Kind) mlat.Clock {
	if k == sensorclock.GPS {
		return mlat.ClockGPS
	}
	return mlat.Clock12MHz
}
