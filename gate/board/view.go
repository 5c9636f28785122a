package board

import (
	"sort"

	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/gate"
)

// Threat is the entry as the API and threat events show it. withAxes adds
// the 13 axes with their inputs and evidence.
func (e *Entry) Threat(withAxes bool) events.Threat {
	t := &e.Track
	j := events.Threat{
		TrackID: t.ID, Protocols: t.Protocols,
		Identity: events.Identity{ICAO: t.ICAO, UASID: t.UASID, OperatorID: t.OperatorID, Callsign: t.Callsign,
			Category: t.Category, AllowListed: e.Allow == gate.AllowListed, Side: string(e.Side)},
		Lat: fusion.Round(t.Lat, 6), Lon: fusion.Round(t.Lon, 6),
		Lambda: fusion.Round(e.Result.Lambda.Score, 4), Decision: e.Result.Decision.String(), HumanDecision: true,
		Caps: e.caps(), Breach: e.Result.Breach, SwarmID: e.SwarmID, Sensors: t.Sensors, Warnings: t.Warnings,
		FirstSeen: t.FirstSeen, LastSeen: t.LastSeen, ReceiptIndex: e.receipt(),
		Class: string(e.Class), RawDecision: e.RawDecision.String(),
	}
	if j.Sensors == nil {
		j.Sensors = []string{}
	}
	if t.Verification != nil {
		j.Verification = t.Verification.Status
	}
	if t.HasAltitude {
		j.AltM = fusion.Ptr(fusion.Round(t.AltM, 1))
	}
	if t.HasVelocity {
		j.SpeedMps, j.HeadingDeg = fusion.Ptr(fusion.Round(t.SpeedMps, 2)), fusion.Ptr(fusion.Round(t.HeadingDeg, 1))
	}
	if e.HasGeofence {
		j.Geofence, j.GeofenceName = e.Geofence.ID, e.Geofence.Name
		j.DistanceM = fusion.Ptr(fusion.Round(e.Result.DistanceM, 1))
		j.ToBoundaryM = fusion.Ptr(fusion.Round(e.Result.DistanceToBoundaryM, 1))
	}
	for _, p := range t.History {
		j.Trail = append(j.Trail, [2]float64{fusion.Round(p.Lat, 6), fusion.Round(p.Lon, 6)})
	}
	if withAxes && e.HasGeofence {
		j.Axes = make([]events.Axis, len(e.Result.Lambda.Axes))
		for i, a := range e.Result.Lambda.Axes {
			j.Axes[i] = events.Axis{ID: a.ID.String(), Name: a.ID.Name(), Value: a.Value, Weight: a.Weight,
				Known: a.Known, Inputs: a.InputMap(), Evidence: a.Evidence()}
		}
	}
	return j
}

// Assessment is the entry in brief, as track events carry it.
func (e *Entry) Assessment() *events.Assessment {
	a := &events.Assessment{
		Decision: e.Result.Decision.String(), Lambda: fusion.Round(e.Result.Lambda.Score, 4), HumanDecision: true,
		Breach: e.Result.Breach, Caps: e.caps(), SwarmID: e.SwarmID, AllowListed: e.Allow == gate.AllowListed,
		Side: string(e.Side), ReceiptIndex: e.receipt(), Class: string(e.Class),
	}
	if e.HasGeofence {
		a.Geofence, a.GeofenceName = e.Geofence.ID, e.Geofence.Name
		a.DistanceM = fusion.Ptr(fusion.Round(e.Result.DistanceM, 1))
		a.TopAxes = topAxes(&e.Result.Lambda, 3)
	}
	return a
}

// caps lists the caps that held, and "no-geofence" for an entry that was
// not scored because no geofence is configured.
func (e *Entry) caps() []string {
	out := []string{}
	for _, c := range e.Result.Lambda.Applied() {
		out = append(out, c.ID)
	}
	if !e.HasGeofence {
		out = append(out, "no-geofence")
	}
	return out
}

func (e *Entry) receipt() *int64 {
	if e.ReceiptIndex < 0 {
		return nil
	}
	return fusion.Ptr(e.ReceiptIndex)
}

// topAxes are the n known axes with the largest weighted contribution to Λ.
func topAxes(l *gate.Lambda, n int) []events.AxisSummary {
	type c struct {
		a gate.Axis
		w float64
	}
	var cs []c
	for _, a := range l.Axes {
		if a.Known {
			cs = append(cs, c{a, a.Value * a.Weight})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].w > cs[j].w })
	out := make([]events.AxisSummary, 0, n)
	for i := 0; i < len(cs) && i < n; i++ {
		a := cs[i].a
		out = append(out, events.AxisSummary{ID: a.ID.String(), Name: a.ID.Name(), Value: fusion.Round(a.Value, 4), Weight: a.Weight})
	}
	return out
}
