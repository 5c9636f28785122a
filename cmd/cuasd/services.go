package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/mavlink"
	"github.com/cuasd/cuasd/decode/remoteid"
	"github.com/cuasd/cuasd/fusion"
	"github.com/cuasd/cuasd/fusion/swarm"
	"github.com/cuasd/cuasd/fusion/zones"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/gate/board"
	"github.com/cuasd/cuasd/ingest/mavudp"
	"github.com/cuasd/cuasd/ledger"
	"github.com/cuasd/cuasd/reference"
	"github.com/cuasd/cuasd/sim"
)

// services are the stateful subsystems behind the HTTP API.
type services struct {
	drones *reference.DB
	ledger *ledger.Log
	zones  *zones.Store
	board  *board.Gate
}

// demoGeofence protects the simulator's site in --demo mode when the
// configuration names no geofence of its own.
func demoGeofence() gate.Geofence {
	return gate.Geofence{ID: "demo-site", Name: "Schiphol (demo)", Class: gate.ClassAirport,
		Center: []float64{sim.DemoSite[0], sim.DemoSite[1]}, RadiusM: sim.DefaultDemo().ZoneRadiusM}
}

// openServices opens the drone database, the ledger and the zone store,
// and starts the continuous gate on the pipeline's track store.
func openServices(ctx context.Context, b *bus.Bus, cfg config, st *stages, reg prometheus.Registerer, log *slog.Logger) (*services, error) {
	s := &services{}
	var err error
	if s.drones, err = reference.Default(); err != nil {
		return nil, fmt.Errorf("drone database: %w", err)
	}
	s.ledger, err = ledger.Open(ctx, b.JS, ledger.Options{
		Instance: cfg.Instance, DataDir: cfg.DataDir, SigningKeyFile: cfg.SigningKey,
		Unsigned: cfg.Unsigned, Logger: log, Replicas: cfg.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	seed := cfg.Geofences
	if cfg.Demo && len(seed) == 0 {
		seed = []gate.Geofence{demoGeofence()}
	}
	s.zones, err = zones.Open(ctx, b.JS, zones.Config{Replicas: cfg.Replicas, Geofences: seed, AllowList: cfg.AllowList, Logger: log})
	if err != nil {
		s.ledger.Close()
		return nil, fmt.Errorf("zones: %w", err)
	}
	owners, err := fusion.OpenOwners(ctx, b.JS, cfg.Instance, cfg.Replicas, 0, log)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("fusion owners: %w", err)
	}
	st.goRun(st.ctx, log, "fusion owners", owners.Run)
	s.board = board.New(board.Config{
		Owns:     owners.Owns,
		Store:    st.store,
		Zones:    s.zones.Snapshot,
		Classify: classifier(s.drones),
		Ledger:   s.ledger,
		Interval: time.Duration(cfg.EvalInterval),
		Version:  version(),
		Events:   b.Conn,
		Instance: cfg.Instance,
		Log:      log,
	}, reg)
	st.goRun(st.ctx, log, "gate board", s.board.Run)
	return s, nil
}

func (s *services) close() {
	if s.zones != nil {
		_ = s.zones.Close()
	}
	if s.ledger != nil {
		_ = s.ledger.Close()
	}
}

// classifier maps a track's identity claims to a drone-database side: a
// Remote ID serial number's ANSI/CTA-2063-A manufacturer code, the Remote
// ID UA type, the MAVLink MAV_TYPE, or an ADS-B emitter category.
func classifier(db *reference.DB) func(t *fusion.Track) gate.Side {
	// The track carries category names; the database is queried by number.
	uaTypes, mavTypes := map[string]int{}, map[string]int{}
	for v := 0; v < 16; v++ {
		if n := remoteid.UATypeName(uint8(v)); n != "" {
			uaTypes[n] = v
		}
	}
	for v := 0; v < 256; v++ {
		if n := mavlink.EnumName("MAV_TYPE", uint32(v)); n != "" {
			mavTypes[n] = v
		}
	}
	return func(t *fusion.Track) gate.Side {
		q := reference.NewQuery()
		claimed := false
		if len(t.UASID) >= 4 {
			q.SerialNumber, claimed = t.UASID, true
		}
		if t.ICAO != "" && len(t.Category) == 2 && strings.ContainsAny(t.Category[:1], "ABCD") {
			q.EmitterCategory, claimed = t.Category, true
		}
		if v, ok := uaTypes[t.Category]; ok && t.ICAO == "" && v != 0 {
			q.UAType, claimed = v, true
		}
		if v, ok := mavTypes[t.Category]; ok && t.SystemID != 0 && v != 0 {
			q.MAVType, claimed = v, true
		}
		if !claimed {
			return ""
		}
		m := db.Lookup(q)
		if m.Matched == 0 {
			return ""
		}
		return gate.Side(m.Side)
	}
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

// startMAVLinkNet starts the MAVLink UDP listener and TCP client the
// configuration asks for.
func (s *stages) startMAVLinkNet(cfg config, log *slog.Logger) error {
	if cfg.MAVLinkUDP != "" {
		u, err := mavudp.ListenUDP(mavudp.UDPConfig{Addr: cfg.MAVLinkUDP, PerPeerSensor: true, Publisher: s.publisher, Log: log})
		if err != nil {
			return fmt.Errorf("--mavlink-udp: %w", err)
		}
		s.listenAddrs = append(s.listenAddrs, "mavlink-udp="+u.Addr().String())
		s.goRun(s.ctx, log, "mavlink udp", u.Run)
	}
	if cfg.MAVLinkTCP != "" {
		t, err := mavudp.NewTCP(mavudp.TCPConfig{Addr: cfg.MAVLinkTCP, Publisher: s.publisher, Log: log})
		if err != nil {
			return fmt.Errorf("--mavlink-tcp: %w", err)
		}
		s.goRun(s.ctx, log, "mavlink tcp", t.Run)
	}
	return nil
}
