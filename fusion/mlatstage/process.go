package mlatstage

import (
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/fusion/mlat"
)

// Barometric altitude as a pseudo-measurement: pressure and geometric
// height differ by up to a couple of hundred metres with the weather.
const (
	baroSigmaM = 150
	gnssSigmaM = 30
	ftToM      = 0.3048
	// dayNS is a GPS clock's wrap (seconds of the UTC day).
	dayNS = 86400e9
)

// process locates or verifies one group (called by the grouper, under
// s.mu).
func (s *Stage) process(g *mlat.Group) {
	s.m.groups.Inc()
	var m adsb.Message
	if adsb.Decode(g.Msg, &m) != nil {
		s.m.refused.WithLabelValues("undecodable").Inc()
		return
	}
	s.rx = append(s.rx[:0], g.Rx...)
	s.unwrapDays()
	s.prob.Alt, s.prob.AltSigma, s.prob.Start = 0, 0, mlat.Vec{}
	if m.HasAltitude {
		s.prob.Alt, s.prob.AltSigma = float64(m.Altitude)*ftToM, baroSigmaM
		if m.AltitudeGNSS {
			s.prob.AltSigma = gnssSigmaM
		}
	}
	icao := adsb.AddressString(m.Address)
	if (m.DF == 17 || m.DF == 18) && m.HasCPR && m.TypeCode >= 9 && m.TypeCode <= 22 {
		s.verify(&m, icao, g.First)
		return
	}
	s.locate(m.Address, icao, g.First)
}

// unwrapDays puts GPS times of day on one day: a transmission heard
// across midnight has receptions near 0 and near 86,400 s.
func (s *Stage) unwrapDays() {
	var ref int64
	have := false
	for i := range s.rx {
		if s.nw.Sensors[s.rx[i].Sensor].Clock != mlat.ClockGPS {
			continue
		}
		if !have {
			ref, have = s.rx[i].T, true
			continue
		}
		switch d := s.rx[i].T - ref; {
		case d > dayNS/2:
			s.rx[i].T -= dayNS
		case d < -dayNS/2:
			s.rx[i].T += dayNS
		}
	}
}

// fixTime is the transmission's UTC time: from a GPS-timed reception and
// the arrival's date when there is one, else the first arrival; and
// where it came from.
func (s *Stage) fixTime(arrival int64) (int64, sensorclock.Source) {
	for i := range s.rx {
		if s.nw.Sensors[s.rx[i].Sensor].Clock == mlat.ClockGPS {
			day := arrival - arrival%int64(dayNS)
			t := day + s.rx[i].T
			switch {
			case t > arrival+dayNS/2:
				t -= dayNS
			case t < arrival-dayNS/2:
				t += dayNS
			}
			return t, sensorclock.FromGPS
		}
	}
	return arrival, sensorclock.Arrival
}

// locate solves a Mode S transmission and puts the filtered fix on the
// aircraft's track.
func (s *Stage) locate(addr uint32, icao string, arrival int64) {
	if err := s.nw.Build(s.rx, &s.prob); err != nil {
		s.refuse(err)
		return
	}
	ac := s.filters[addr]
	if ac == nil {
		ac = &aircraft{}
		s.filters[addr] = ac
	}
	t, src := s.fixTime(arrival)
	if p, ok := ac.f.Predict(t); ok {
		s.prob.Start = p
	}
	var f mlat.Fix
	if err := s.sv.Solve(&s.prob, &f); err != nil {
		s.refuse(err)
		return
	}
	if _, _, err := ac.f.Update(&f, t); err != nil {
		s.refuse(err)
		return
	}
	ac.last = arrival
	s.m.fixes.Inc()
	s.store.ApplyMLAT(fusion.MLATFix{ICAO: icao, T: t, TimeSource: src, Lat: f.Lat, Lon: f.Lon,
		MLATInfo: fusion.MLATInfo{Sensors: f.Sensors, ResidualM: f.ResidualM, ErrorM: f.ErrorM}})
}

// verify checks an ADS-B position claim against the times, and syncs the
// free-running clocks from it (advanced by the aircraft's measured
// latency, mlat.Network.LearnMoving) unless it was contradicted.
func (s *Stage) verify(m *adsb.Message, icao string, arrival int64) {
	claim, vel, ok := s.claim(m, icao)
	if !ok {
		s.refuse(mlat.ReasonNone)
		return
	}
	var v mlat.Verification
	if err := s.nw.Build(s.rx, &s.prob); err != nil {
		v.Reason = err.(mlat.Reason)
	} else {
		s.sv.Verify(&s.prob, claim, mlat.VerifyConfig{}, &v)
	}
	if v.Status != mlat.Contradicted {
		s.nw.LearnMoving(m.Address, s.rx, claim, vel)
	}
	s.m.verdicts.WithLabelValues(v.Status.String()).Inc()
	if v.Reason != mlat.ReasonNone {
		s.refuse(v.Reason)
	}
	t, _ := s.fixTime(arrival)
	s.store.SetVerification(icao, fusion.Verification{Status: v.Status.String(), ResidualM: v.ResidualM,
		DistanceM: v.DistanceM, Sensors: v.Sensors, T: t})
}

// claim decodes the message's claimed position against the aircraft's
// track (local CPR decoding needs a reference within 180 NM; the track's
// broadcast position is one), with the track's velocity (its ADS-B
// airborne velocity; the zero Vec when it has none), by which the sync
// advances the claim over the aircraft's position latency.
func (s *Stage) claim(m *adsb.Message, icao string) (pos, vel mlat.Vec, ok bool) {
	t, ok := s.store.Get("adsb:" + icao)
	if !ok || !t.HasPosition || t.PositionMethod == fusion.PositionMLAT {
		return mlat.Vec{}, mlat.Vec{}, false
	}
	lat, lon, err := adsb.CPRLocalAirborne(m.CPR, t.Lat, t.Lon)
	if err != nil {
		return mlat.Vec{}, mlat.Vec{}, false
	}
	if t.HasVelocity {
		vel = mlat.GroundVelocity(lat, lon, t.SpeedMps, t.HeadingDeg)
	}
	return mlat.ECEF(lat, lon, float64(m.Altitude)*ftToM), vel, true
}

// refuse counts a refusal by reason (ReasonNone: no claim to check).
func (s *Stage) refuse(err error) {
	r, ok := err.(mlat.Reason)
	if !ok || r == mlat.ReasonNone {
		s.m.refused.WithLabelValues("no_claim_reference").Inc()
		return
	}
	s.m.refused.WithLabelValues(r.String()).Inc()
}
