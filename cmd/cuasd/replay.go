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
)

const replayUsage = `Usage:
  cuasd replay FILE|- [--format beast|avr|tlog|pcap|hex] [--speed N | --max] [--nats-url URL]

Publishes a capture to a running cuasd over NATS, through the same raw
subjects as a live receiver, keeping its timing (scaled by --speed) or as
fast as possible (--max). FILE - reads standard input. Without --format the
format is recognised from the content (pcap/pcapng magic, Beast records, AVR
lines, telemetry-log timestamps, hex lines), then from the file name's
extension. A capture with no valid frame for its format is an error.`

// replayOptions are the flags of cuasd replay.
type replayOptions struct {
	file, format, sensor, protocol string
	nats                           natsClientFlags
	speed                          float64
	maxSpeed, keepTime             bool
}

func parseReplay(args []string, getenv func(string) string, stdout, stderr io.Writer) (replayOptions, error) {
	var o replayOptions
	fs := newFlagSet("cuasd replay", replayUsage, args, stdout, stderr)
	fs.StringVar(&o.format, "format", "", "capture `FORMAT`: beast, avr, tlog, pcap or hex (default: recognised)")
	o.nats.register(fs)
	fs.StringVar(&o.sensor, "sensor", "replay", "sensor `NAME` to publish as")
	fs.StringVar(&o.protocol, "protocol", "", "`PROTOCOL` of --format hex input: adsb, remoteid or mavlink")
	fs.Float64Var(&o.speed, "speed", 1, "replay speed `FACTOR` (2 = twice as fast)")
	fs.BoolVar(&o.maxSpeed, "max", false, "publish as fast as possible, ignoring the capture's timing")
	fs.BoolVar(&o.keepTime, "capture-time", false, "stamp frames with the capture's own receive times where the format records them (default: now)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return o, err
	}
	if len(pos) != 1 {
		return o, fmt.Errorf("replay: give exactly one capture file, or - for standard input (got %d)", len(pos))
	}
	o.file = pos[0]
	if o.speed <= 0 {
		return o, errors.New("replay: --speed must be positive")
	}
	if !bus.ValidSensor(o.sensor) {
		return o, fmt.Errorf("replay: --sensor %q: want %s", o.sensor, bus.SensorRule)
	}
	return o, nil
}

// runReplay implements `cuasd replay FILE --format F`: it publishes a
// capture to a running cuasd over NATS through the ingest.Replay source,
// preserving its timing (scaled by --speed) or as fast as possible (--max).
func runReplay(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, err := parseReplay(args, getenv, stdout, stderr)
	if err != nil {
		return err
	}
	src, err := loadReplay(&o)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	nc, err := o.nats.target(getenv).connect("cuasd replay")
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	defer nc.Close()
	js, err := bus.ConnectJetStream(nc, 0)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := src.Run(ctx, ingest.NewPublisher(js, nil), lifecycle.Discard); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err // interrupted before the end of the capture
	}
	// Duplicates are frames JetStream already held (a retried replay), not
	// the capture's repeated frames, which the decoders drop and count.
	fmt.Fprintf(stdout, "replayed %d frames (%d already stored) of %s from %s in %s\n", src.Accepted, src.Duplicates, o.format,
		inputName(o.file), time.Since(start).Round(time.Millisecond))
	return nil
}

// loadReplay reads the capture, settles its format and makes the replay
// source; a capture without one valid frame is an error.
func loadReplay(o *replayOptions) (*ingest.Replay, error) {
	data, err := readInput(o.file)
	if err != nil {
		return nil, err
	}
	if o.format == "" {
		if o.format = guessFormat(o.file, data); o.format == "" {
			return nil, fmt.Errorf("cannot tell the format of %s: give --format beast, avr, tlog, pcap or hex", inputName(o.file))
		}
	}
	return ingest.NewReplay(ingest.ReplayConfig{Format: o.format, Protocol: o.protocol, Sensor: o.sensor,
		Speed: o.speed, Max: o.maxSpeed, CaptureTime: o.keepTime, Name: inputName(o.file)}, data)
}
