package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuasd/cuasd/httpapi"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/output/beastout"
	"github.com/cuasd/cuasd/output/readsbjson"
	"github.com/cuasd/cuasd/output/sbs"
)

// readsbOutputs appends the readsb-compatible outputs the configuration
// asks for (issue 21): the JSON documents, SBS on a socket, Beast out.
func (s *service) readsbOutputs(outs []output.Output) ([]output.Output, error) {
	cfg := s.cfg
	if cfg.ReadsbJSON || cfg.JSONDir != "" {
		lat, lon, err := parseLocation(cfg.ReceiverLocation)
		if err != nil {
			return nil, err
		}
		w, err := readsbjson.New(readsbjson.Config{Dir: cfg.JSONDir, Drones: cfg.ReadsbDrones, Simulated: cfg.DemoOutputs, Frames: cfg.ReadsbFrames, Lat: lat, Lon: lon,
			Version: version(), Log: s.log})
		if err != nil {
			return nil, fmt.Errorf("--json-dir: %w", err)
		}
		s.readsb.Store(w)
		outs = append(outs, w)
	}
	if cfg.SBSListen != "" {
		o, err := sbs.Listen(cfg.SBSListen, cfg.ReadsbDrones, s.log)
		if err != nil {
			return nil, listenError("--sbs-listen", cfg.SBSListen, err)
		}
		o.Reduce = cfg.SBSReduce // issue 30
		o.IncludeSimulated(cfg.DemoOutputs)
		s.countDrops(o)
		outs = append(outs, o)
	}
	if cfg.BeastOutListen != "" {
		o, err := beastout.Listen(cfg.BeastOutListen, cfg.BeastOutAll, s.log)
		if err != nil {
			return nil, listenError("--beast-out-listen", cfg.BeastOutListen, err)
		}
		o.IncludeSimulated(cfg.DemoOutputs)
		s.countDrops(o)
		outs = append(outs, o)
	}
	if cfg.BeastOutConnect != "" {
		o := beastout.Connect(cfg.BeastOutConnect, cfg.BeastOutAll, s.log)
		o.IncludeSimulated(cfg.DemoOutputs)
		s.countDrops(o)
		outs = append(outs, o)
	}
	return outs, nil
}

// countDrops exposes what an output dropped from its bounded queue (a
// streaming output for slow or absent clients, the alert rules and the
// MQTT output when they fall behind) as cuasd_output_dropped_total{output}.
func (s *service) countDrops(o interface {
	Name() string
	Dropped() uint64
}) {
	c := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name:        "cuasd_output_dropped_total",
		Help:        "Items an output dropped from its bounded queue: Beast records and SBS lines for slow or absent clients, events the alert rules or the MQTT output could not keep up with.",
		ConstLabels: prometheus.Labels{"output": o.Name()},
	}, func() float64 { return float64(o.Dropped()) })
	if err := s.reg.Register(c); err != nil {
		s.log.Warn("output drop counter not registered", "output", o.Name(), "err", err)
	}
}

// probeReadsbListeners checks, with the other listeners and before the
// data directory is touched, that the output addresses are free and the
// receiver location reads; the outputs bind them when they start.
func probeReadsbListeners(cfg config) error {
	if _, _, err := parseLocation(cfg.ReceiverLocation); err != nil {
		return err
	}
	for _, l := range []struct{ flag, addr string }{{"--sbs-listen", cfg.SBSListen}, {"--beast-out-listen", cfg.BeastOutListen}} {
		if l.addr == "" {
			continue
		}
		if err := probeFree(l.flag, l.addr); err != nil {
			return err
		}
	}
	return nil
}

// parseLocation reads --receiver-location "LAT,LON" (empty: none).
func parseLocation(v string) (lat, lon *float64, err error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil, nil
	}
	a, b, ok := strings.Cut(v, ",")
	la, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	lo, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if !ok || err1 != nil || err2 != nil || la < -90 || la > 90 || lo < -180 || lo > 180 {
		return nil, nil, fmt.Errorf("--receiver-location %q: want LAT,LON in degrees, e.g. 59.93,30.31", v)
	}
	return &la, &lo, nil
}

// readsbDocs gives the HTTP API the readsb documents, once the output is
// built (nil when it is off).
func (s *service) readsbDocs() httpapi.ReadsbDocuments {
	if !s.cfg.ReadsbJSON {
		return nil
	}
	return readsbDocs{s}
}

type readsbDocs struct{ s *service }

func (d readsbDocs) Document(name string) ([]byte, bool) {
	w := d.s.readsb.Load()
	if w == nil {
		return nil, false
	}
	return w.Document(name)
}
