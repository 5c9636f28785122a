package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/lifecycle"
	"github.com/cuasd/cuasd/sim"
)

// runSimulate implements `cuasd simulate`: synthetic traffic published to a
// running cuasd over NATS.
func runSimulate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("cuasd simulate", `Usage:
  cuasd simulate [flags]

Publishes synthetic aircraft (ADS-B), drones (Remote ID), MAVLink vehicles and
a swarm to a running cuasd over NATS, through the same raw subjects as real
receivers (--rate N for load tests).`, args, stdout, stderr)
	var nf natsClientFlags
	nf.register(fs)
	cfg := sim.DefaultDemo()
	fs.IntVar(&cfg.Aircraft, "aircraft", cfg.Aircraft, "`N` aircraft broadcasting ADS-B")
	fs.IntVar(&cfg.Drones, "drones", cfg.Drones, "`N` drones broadcasting Remote ID")
	fs.IntVar(&cfg.MAVLink, "mavlink", cfg.MAVLink, "`N` MAVLink vehicles")
	fs.IntVar(&cfg.SwarmSize, "swarm", cfg.SwarmSize, "`N` drones in one coordinated swarm (0: none)")
	fs.IntVar(&cfg.Intruders, "intruders", cfg.Intruders, "`N` drones flying into the protected zone")
	fs.Float64Var(&cfg.CenterLat, "lat", sim.DemoSite[0], "latitude of the protected site, in `DEGREES`")
	fs.Float64Var(&cfg.CenterLon, "lon", sim.DemoSite[1], "longitude of the protected site, in `DEGREES`")
	fs.Float64Var(&cfg.Rate, "rate", 0, "target `RATE` in frames per second (0: realistic broadcast rates)")
	fs.DurationVar(&cfg.Duration, "duration", 0, "stop after this long, a `DURATION` (0: until interrupted)")
	fs.IntVar(&cfg.IDBase, "id-base", 100000, "offset `N` of the drone serials, operator ids and MAVLink system ids (and, non-zero, aircraft addresses from 0x3C0000): the default never collides with a --demo's ids; 0 reuses them")
	sensor := fs.String("sensor", "sim", "sensor `NAME` (the last token of the raw subjects)")
	batch := fs.Bool("batch", false, "publish one lp-framed batch per protocol and tick instead of one message per frame")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("simulate: unexpected arguments %v", fs.Args())
	}
	if !bus.ValidSensor(*sensor) {
		return fmt.Errorf("simulate: --sensor %q: want %s", *sensor, bus.SensorRule)
	}
	if cfg.Aircraft < 0 || cfg.Drones < 0 || cfg.MAVLink < 0 || cfg.SwarmSize < 0 || cfg.Rate < 0 {
		return errors.New("simulate: counts and rate must not be negative")
	}
	nc, err := nf.target(getenv).connect("cuasd simulate")
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	defer nc.Close()
	js, err := bus.ConnectJetStream(nc, 65536)
	if err != nil {
		return err
	}
	start := time.Now()
	src := &ingest.Simulator{Config: cfg, Sensor: *sensor, Batch: *batch}
	err = src.Run(ctx, ingest.NewPublisher(js, nil), lifecycle.Discard)
	st := src.Stats
	el := time.Since(start).Seconds()
	total := st.Frames["adsb"] + st.Frames["remoteid"] + st.Frames["mavlink"]
	fmt.Fprintf(stdout, "simulated %d frames in %.1f s (%.0f frames/s): adsb %d, remoteid %d, mavlink %d; %d publish errors\n",
		total, el, float64(total)/el, st.Frames["adsb"], st.Frames["remoteid"], st.Frames["mavlink"], st.Errors)
	return err
}
