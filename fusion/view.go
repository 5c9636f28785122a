package fusion

import (
	"math"
	"time"

	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/events"
)

// View is the track as the API and the track events show it
// (events.Track): measurements rounded to what the sources resolve,
// absent values left out rather than zero. withHistory adds the track's
// recent positions.
func (t *Track) View(withHistory bool) events.Track {
	j := events.Track{
		TrackID: t.ID, ID: t.ID, Protocols: t.Protocols, ICAO: t.ICAO, UASID: t.UASID, OperatorID: t.OperatorID,
		Callsign: t.Callsign, Category: t.Category, CategoryKind: t.CategoryKind, Squawk: t.Squawk, Emergency: t.Emergency,
		Sensors: t.Sensors, FirstSeen: t.FirstSeen, LastSeen: t.LastSeen, Observations: t.Observations,
		Warnings: t.Warnings, Simulated: t.Simulated, TimeSource: t.TimeSource,
	}
	if j.Sensors == nil {
		j.Sensors = []string{}
	}
	if j.Protocols == nil {
		j.Protocols = []string{}
	}
	if t.HasPosition {
		j.Lat, j.Lon, j.PosMethod = Ptr(Round(t.Lat, 6)), Ptr(Round(t.Lon, 6)), t.PositionMethod
		if n := len(t.History); n > 0 {
			j.PositionTime = Ptr(time.Unix(0, t.History[n-1].T).UTC())
		}
	}
	if t.HasAltitude {
		j.AltM, j.AltKind = Ptr(Round(t.AltM, 1)), t.AltKind
	}
	if t.HasVelocity {
		j.SpeedMps, j.HeadingDeg, j.VRateMps = Ptr(Round(t.SpeedMps, 2)), Ptr(Round(t.HeadingDeg, 1)), Ptr(Round(t.VRateMps, 2))
	}
	if t.HasOperator {
		j.OperatorLat, j.OperatorLon = Ptr(Round(t.OperatorLat, 6)), Ptr(Round(t.OperatorLon, 6))
	}
	if t.HAccuracyM > 0 {
		j.HAccuracyM = Ptr(Round(t.HAccuracyM, 1))
	}
	if t.VAccuracyM > 0 {
		j.VAccuracyM = Ptr(Round(t.VAccuracyM, 1))
	}
	if t.Air != nil {
		j.AirData = t.Air.view()
	}
	t.viewSensorClaims(&j) // issue 25
	if t.ADSB != nil {
		j.ADSB = t.ADSB.view()
	}
	t.viewMLAT(&j) // issue 31
	if withHistory {
		j.History = t.pointsAfter(math.MinInt64)
	}
	return j
}

// ViewAfter is View with, as its history, only the positions received
// after the Unix-ns time after: what a track event carries since the
// previous one, without converting the positions it already carried.
func (t *Track) ViewAfter(after int64) events.Track {
	j := t.View(false)
	j.History = t.pointsAfter(after)
	return j
}

// pointsAfter converts the history positions received after the Unix-ns
// time after (nil when none).
func (t *Track) pointsAfter(after int64) []events.Point {
	var out []events.Point
	for _, p := range t.History {
		if p.T <= after {
			continue
		}
		if out == nil {
			out = make([]events.Point, 0, len(t.History))
		}
		pj := events.Point{T: time.Unix(0, p.T).UTC(), Lat: Round(p.Lat, 6), Lon: Round(p.Lon, 6)}
		if p.HasAlt {
			pj.AltM = Ptr(Round(float64(p.Alt), 1))
		}
		out = append(out, pj)
	}
	return out
}

// Round rounds v to places decimal places: 6 places of a degree are about
// 0.1 m, finer than any source here resolves.
func Round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// Ptr returns a pointer to v, for the optional fields of views.
func Ptr[T any](v T) *T { return &v }

// view rounds the Comm-B values to what their registers resolve.
func (a *AirData) view() *events.AirData {
	opt := func(ok bool, v float64, places int) *float64 {
		if !ok {
			return nil
		}
		return Ptr(Round(v, places))
	}
	return &events.AirData{
		SelectedAltM: opt(a.HasSelectedAltitude, a.SelectedAltM, 1), BaroSettingHPa: opt(a.HasBaroSetting, a.BaroSettingHPa, 1),
		IASMps: opt(a.HasIAS, a.IASMps, 2), TASMps: opt(a.HasTAS, a.TASMps, 2), Mach: opt(a.HasMach, a.Mach, 3),
		MagneticHeadingDeg: opt(a.HasMagneticHeading, a.MagneticHeadingDeg, 1), RollDeg: opt(a.HasRoll, a.RollDeg, 1),
		WindSpeedMps: opt(a.HasWind, a.WindSpeedMps, 2), WindFromDeg: opt(a.HasWind, a.WindFromDeg, 1),
		TemperatureC: opt(a.HasTemperature, a.TemperatureC, 2), Updated: time.Unix(0, a.Updated).UTC(),
	}
}

// view shows the issue 21 state, absent values left out; the selected
// heading is rounded to 0.01° (its resolution is 180/256°).
func (a *ADSBInfo) view() *events.ADSBInfo {
	v := &events.ADSBInfo{AirGround: a.AirGround.String()}
	if a.AddressType != adsb.AddrUnknown {
		v.AddressType = a.AddressType.String()
	}
	if a.HasNIC {
		v.NIC, v.RcM = Ptr(int(a.NIC)), Ptr(int(a.RcM))
	}
	if a.HasVersion {
		v.Version = Ptr(int(a.Version))
	}
	if a.HasNACv {
		v.NACv = Ptr(int(a.NACv))
	}
	if a.HasSIL {
		v.SIL, v.SILType = Ptr(int(a.SIL)), a.SILType.String()
	}
	if a.HasNavHeading {
		v.NavHeadingDeg = Ptr(Round(a.NavHeadingDeg, 2))
	}
	return v
}
