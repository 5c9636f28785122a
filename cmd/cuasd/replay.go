package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/mavlink"
	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/ingest/pcap"
)

// replayItem is one unit to publish: a frame or an lp batch, with its
// position on the capture's clock (ns since the capture's first item).
type replayItem struct {
	protocol string
	frames   []ingest.Frame
	offset   time.Duration
	// absolute is the capture's own receive time (Unix ns), when the
	// format records one.
	absolute int64
}

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
	file, format, url, sensor, protocol string
	speed                               float64
	maxSpeed, keepTime                  bool
}

func parseReplay(args []string, getenv func(string) string, stdout, stderr io.Writer) (replayOptions, error) {
	var o replayOptions
	fs := newFlagSet("cuasd replay", replayUsage, args, stdout, stderr)
	fs.StringVar(&o.format, "format", "", "capture `FORMAT`: beast, avr, tlog, pcap or hex (default: recognised)")
	fs.StringVar(&o.url, "nats-url", envOr(getenv, "CUAS_NATS_URL", "nats://127.0.0.1:4222"), "NATS `URL` of the running cuasd (CUAS_NATS_URL)")
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
	return o, nil
}

// runReplay implements `cuasd replay FILE --format F`: it publishes a
// capture to a running cuasd over NATS, preserving its timing (scaled by
// --speed) or as fast as possible (--max).
func runReplay(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, err := parseReplay(args, getenv, stdout, stderr)
	if err != nil {
		return err
	}
	items, err := loadReplay(&o)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	nc, err := nats.Connect(o.url, nats.Name("cuasd replay"))
	if err != nil {
		return fmt.Errorf("replay: connect %s: %w", o.url, err)
	}
	defer nc.Close()
	js, err := bus.ConnectJetStream(nc, 0)
	if err != nil {
		return err
	}
	// A frame's identity is its place in the capture: a retried replay (same
	// file, same --sensor, within JetStream's 2-minute de-duplication window)
	// adds nothing, while identical frames at different places are kept.
	seq := int64(0)
	for _, it := range items {
		for j := range it.frames {
			it.frames[j].ID = ingest.MsgID(it.protocol, o.sensor, seq, it.frames[j].Data)
			seq++
		}
	}
	if o.maxSpeed {
		items = mergeItems(items, 500)
	}
	start := time.Now()
	total, dups, err := publishReplay(ctx, ingest.NewPublisher(js, nil), &o, items, start)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "replayed %d frames (%d duplicates) of %s from %s in %s\n", total, dups, o.format,
		inputName(o.file), time.Since(start).Round(time.Millisecond))
	return nil
}

// loadReplay reads the capture, settles its format and splits it into
// items; a capture without one valid frame is an error.
func loadReplay(o *replayOptions) ([]replayItem, error) {
	data, err := readInput(o.file)
	if err != nil {
		return nil, err
	}
	if o.format == "" {
		if o.format = guessFormat(o.file, data); o.format == "" {
			return nil, fmt.Errorf("cannot tell the format of %s: give --format beast, avr, tlog, pcap or hex", inputName(o.file))
		}
	}
	items, err := replayItems(o.format, o.protocol, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", inputName(o.file), err)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("no valid %s frame in %s (%d bytes): is it another format?", o.format, inputName(o.file), len(data))
	}
	return items, nil
}

// publishReplay publishes items on the capture's clock (or at once with
// --max) and returns the frames accepted and the duplicates.
func publishReplay(ctx context.Context, pub *ingest.Publisher, o *replayOptions, items []replayItem, start time.Time) (total, dups int, err error) {
	for _, it := range items {
		if !o.maxSpeed {
			due := start.Add(time.Duration(float64(it.offset) / o.speed))
			if d := time.Until(due); d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
					return total, dups, ctx.Err()
				}
			}
		}
		recv := time.Now().UnixNano()
		if o.keepTime && it.absolute != 0 {
			recv = it.absolute
		}
		for i := range it.frames {
			it.frames[i].RecvUnixNano = recv
		}
		res, err := pub.PublishFrames(ctx, "replay", it.protocol, o.sensor, it.frames)
		if err != nil {
			return total, dups, fmt.Errorf("replay: after %d frames: %w", total, err)
		}
		total += res.Accepted
		dups += res.Duplicates
	}
	return total, dups, nil
}

func envOr(getenv func(string) string, k, def string) string {
	if v := getenv(k); v != "" {
		return v
	}
	return def
}

// replayItems splits a capture into publishable items.
func replayItems(format, protocol string, data []byte) ([]replayItem, error) {
	switch format {
	case "beast":
		return beastItems(data), nil
	case "avr":
		return avrItems(data), nil
	case "tlog":
		return tlogItems(data), nil
	case "pcap":
		return pcapItems(data)
	case "hex":
		return hexItems(protocol, data)
	}
	return nil, fmt.Errorf("unknown --format %q (beast, avr, tlog, pcap or hex)", format)
}

// ticksSince converts 12 MHz counter ticks since first to a duration (0
// for a counter that went backwards).
func ticksSince(ts, first uint64) time.Duration {
	if ts < first {
		return 0
	}
	return time.Duration((ts - first) * 1000 / 12)
}

func beastItems(data []byte) []replayItem {
	var out []replayItem
	var first uint64
	haveFirst := false
	for f, err := range adsb.BeastFrames(data) {
		if err != nil || f.Type == adsb.BeastModeAC {
			continue
		}
		if !haveFirst {
			first, haveFirst = f.Timestamp, true
		}
		out = append(out, replayItem{protocol: "adsb", offset: ticksSince(f.Timestamp, first),
			frames: []ingest.Frame{{Data: bytes.Clone(f.Bytes()), Signal: f.RSSI()}}})
	}
	return out
}

func avrItems(data []byte) []replayItem {
	var out []replayItem
	var first uint64
	haveFirst := false
	for f, err := range adsb.AVRFrames(data) {
		if err != nil || f.Len == 2 {
			continue
		}
		var off time.Duration
		if f.HasTimestamp {
			if !haveFirst {
				first, haveFirst = f.Timestamp, true
			}
			off = ticksSince(f.Timestamp, first)
		}
		out = append(out, replayItem{protocol: "adsb", offset: off, frames: []ingest.Frame{{Data: bytes.Clone(f.Bytes())}}})
	}
	return out
}

func tlogItems(data []byte) []replayItem {
	var r mavlink.TlogReader
	r.Reset(data)
	var out []replayItem
	var first int64
	for {
		f, usec, ok := r.Next()
		if !ok {
			return out
		}
		if len(out) == 0 {
			first = usec
		}
		out = append(out, replayItem{protocol: "mavlink", offset: time.Duration(usec-first) * time.Microsecond,
			absolute: usec * 1000, frames: []ingest.Frame{{Data: bytes.Clone(f.Raw)}}})
	}
}

func pcapItems(data []byte) ([]replayItem, error) {
	rd, err := pcap.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var out []replayItem
	var first time.Time
	for {
		p, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if p.ChecksumKnown && !p.ChecksumOK {
			continue
		}
		var carrier string // Wi-Fi: recognised from the bytes
		switch p.Medium {
		case pcap.MediumWiFi:
		case pcap.MediumBLE:
			carrier = "ble_pdu"
		default:
			continue
		}
		if first.IsZero() {
			first = p.Time
		}
		out = append(out, replayItem{protocol: "remoteid", offset: p.Time.Sub(first), absolute: p.Time.UnixNano(),
			frames: []ingest.Frame{{Data: bytes.Clone(p.Data), Carrier: carrier}}})
	}
}

func hexItems(protocol string, data []byte) ([]replayItem, error) {
	if protocol == "" {
		return nil, errors.New("--format hex needs --protocol adsb, remoteid or mavlink")
	}
	if !ingest.ValidProtocol(protocol) {
		return nil, fmt.Errorf("unknown protocol %q", protocol)
	}
	var out []replayItem
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		b, err := hex.DecodeString(strings.Trim(line, "*;"))
		if err != nil {
			return nil, fmt.Errorf("line %d: not hex", n+1)
		}
		out = append(out, replayItem{protocol: protocol, frames: []ingest.Frame{{Data: b}}})
	}
	return out, nil
}

// mergeItems groups consecutive items of one protocol into items of up to
// n frames, so that --max publishes many frames per acknowledgement wait.
func mergeItems(items []replayItem, n int) []replayItem {
	var out []replayItem
	for _, it := range items {
		if k := len(out) - 1; k >= 0 && out[k].protocol == it.protocol && len(out[k].frames)+len(it.frames) <= n {
			out[k].frames = append(out[k].frames, it.frames...)
			continue
		}
		out = append(out, it)
	}
	return out
}
