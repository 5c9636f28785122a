package main

import (
	"context"

	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/fusion/swarm"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/sim"
)

// demoGeofences protect the simulator's site in --demo mode when the
// configuration names no geofence of its own.
func demoGeofences() []gate.Geofence {
	return []gate.Geofence{{ID: "demo-site", Name: "Schiphol (demo)", Class: gate.ClassAirport,
		Center: []float64{sim.DemoSite[0], sim.DemoSite[1]}, RadiusM: sim.DefaultDemo().ZoneRadiusM}}
}

// liveTracks serves the live track positions to the swarm endpoint.
type liveTracks struct{ store *fusion.Store }

func (l liveTracks) LivePositions(context.Context) ([]swarm.Track, error) {
	ts := l.store.List(fusion.Filter{})
	out := make([]swarm.Track, 0, len(ts))
	for _, t := range ts {
		if !t.HasPosition {
			continue
		}
		out = append(out, t.SwarmTrack())
	}
	return out, nil
}
