package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

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

// runReplay implements `cuasd replay FILE --format F`: it publishes a
// capture to a running cuasd over NATS, preserving its timing (scaled by
// --speed) or as fast as possible (--max).
func runReplay(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cuasd replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "", "capture format: beast, avr, tlog, pcap or hex")
	url := fs.String("nats-url", envOr(getenv, "CUAS_NATS_URL", "nats://127.0.0.1:4222"), "NATS URL of the running cuasd")
	sensor := fs.String("sensor", "replay", "sensor name to publish as")
	protocol := fs.String("protocol", "", "protocol of --format hex input: adsb, remoteid or mavlink")
	speed := fs.Float64("speed", 1, "replay speed factor (2 = twice as fast)")
	maxSpeed := fs.Bool("max", false, "publish as fast as possible, ignoring the capture's timing")
	keepTime := fs.Bool("capture-time", false, "stamp frames with the capture's own receive times where the format records them (default: now)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("replay: give exactly one capture file (got %d)", len(pos))
	}
	file := pos[0]
	if *speed <= 0 {
		return errors.New("replay: --speed must be positive")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	items, err := replayItems(*format, *protocol, data)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	nc, err := nats.Connect(*url, nats.Name("cuasd replay"))
	if err != nil {
		return fmt.Errorf("replay: connect %s: %w", *url, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	// A frame's identity is its place in the capture: a retried replay (same
	// file, same --sensor, within JetStream's 2-minute de-duplication window)
	// adds nothing, while identical frames at different places are kept.
	seq := int64(0)
	for _, it := range items {
		for j := range it.frames {
			it.frames[j].ID = ingest.MsgID(it.protocol, *sensor, seq, it.frames[j].Data)
			seq++
		}
	}
	pub := ingest.NewPublisher(js, nil)
	if *maxSpeed {
		items = mergeItems(items, 500)
	}
	start := time.Now()
	total, dups := 0, 0
	for _, it := range items {
		if !*maxSpeed {
			due := start.Add(time.Duration(float64(it.offset) / *speed))
			if d := time.Until(due); d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
		recv := time.Now().UnixNano()
		if *keepTime && it.absolute != 0 {
			recv = it.absolute
		}
		for i := range it.frames {
			it.frames[i].RecvUnixNano = recv
		}
		res, err := pub.PublishFrames(ctx, "replay", it.protocol, *sensor, it.frames)
		if err != nil {
			return fmt.Errorf("replay: after %d frames: %w", total, err)
		}
		total += res.Accepted
		dups += res.Duplicates
	}
	fmt.Fprintf(stdout, "replayed %d frames (%d duplicates) from %s in %s\n", total, dups, file, time.Since(start).Round(time.Millisecond))
	return nil
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
			var off time.Duration
			if f.Timestamp >= first {
				// 12 MHz counter ticks → ns.
				off = time.Duration((f.Timestamp - first) * 1000 / 12)
			}
			out = append(out, replayItem{protocol: "adsb", offset: off,
				frames: []ingest.Frame{{Data: bytes.Clone(f.Bytes()), Signal: f.RSSI()}}})
		}
		return out, nil
	case "avr":
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
				if f.Timestamp >= first {
					off = time.Duration((f.Timestamp - first) * 1000 / 12)
				}
			}
			out = append(out, replayItem{protocol: "adsb", offset: off, frames: []ingest.Frame{{Data: bytes.Clone(f.Bytes())}}})
		}
		return out, nil
	case "tlog":
		var r mavlink.TlogReader
		r.Reset(data)
		var out []replayItem
		var first int64
		for {
			f, usec, ok := r.Next()
			if !ok {
				break
			}
			if len(out) == 0 {
				first = usec
			}
			out = append(out, replayItem{protocol: "mavlink", offset: time.Duration(usec-first) * time.Microsecond,
				absolute: usec * 1000, frames: []ingest.Frame{{Data: bytes.Clone(f.Raw)}}})
		}
		return out, nil
	case "pcap":
		rd, err := pcap.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		var out []replayItem
		var first time.Time
		for {
			p, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, err
			}
			if p.ChecksumKnown && !p.ChecksumOK {
				continue
			}
			var carrier string
			switch p.Medium {
			case pcap.MediumWiFi:
				carrier = ""
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
		return out, nil
	case "hex":
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
			line = strings.Trim(line, "*;")
			b, err := hex.DecodeString(line)
			if err != nil {
				return nil, fmt.Errorf("line %d: not hex", n+1)
			}
			out = append(out, replayItem{protocol: protocol, frames: []ingest.Frame{{Data: b}}})
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown --format %q (beast, avr, tlog, pcap or hex)", format)
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
