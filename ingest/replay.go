package ingest

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/mavlink"
	"github.com/cuasd/cuasd/ingest/pcap"
	"github.com/cuasd/cuasd/lifecycle"
)

// ReplayConfig configures a Replay.
type ReplayConfig struct {
	// Format is the capture's format: beast, avr, tlog, pcap or hex.
	Format string
	// Protocol is the protocol of "hex" input (adsb, remoteid, mavlink).
	Protocol string
	// Sensor is the sensor the frames are published as.
	Sensor string
	// Speed scales the capture's timing (2 = twice as fast); with Max the
	// timing is ignored and frames go out as fast as the sink takes them.
	Speed float64
	Max   bool
	// CaptureTime stamps frames with the capture's own receive times where
	// the format records them (default: the time they are published).
	CaptureTime bool
	// Name names the capture in errors and in the source's name.
	Name string
}

// Replay is a capture being replayed (`cuasd replay`): a Source that
// publishes the capture's frames through the Sink on the capture's clock
// (scaled by Speed) or at once (Max), as the live receiver would have. It
// is finite: Run returns nil once every frame is published.
type Replay struct {
	cfg   ReplayConfig
	items []replayItem
	// Accepted and Duplicates count the frames the sink stored and those
	// it already held (a retried replay), once Run returned.
	Accepted, Duplicates int
}

// replayItem is one unit to publish: a frame or, with Max, a run of
// frames of one protocol, with its position on the capture's clock.
type replayItem struct {
	protocol string
	frames   []Frame
	offset   time.Duration
	// absolute is the capture's own receive time (Unix ns), when the
	// format records one.
	absolute int64
}

// NewReplay splits the capture data into frames. A capture without one
// valid frame for its format is an error.
func NewReplay(cfg ReplayConfig, data []byte) (*Replay, error) {
	if cfg.Speed <= 0 {
		cfg.Speed = 1
	}
	items, err := replayItems(cfg.Format, cfg.Protocol, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("no valid %s frame in %s (%d bytes): is it another format?", cfg.Format, cfg.Name, len(data))
	}
	// A frame's identity is its place in the capture: a retried replay (same
	// capture, same sensor, within JetStream's 2-minute de-duplication
	// window) adds nothing, while identical frames at different places are
	// kept.
	seq := int64(0)
	for _, it := range items {
		for j := range it.frames {
			it.frames[j].ID = MsgID(it.protocol, cfg.Sensor, seq, it.frames[j].Data)
			seq++
		}
	}
	if cfg.Max {
		items = mergeItems(items, 500)
	}
	return &Replay{cfg: cfg, items: items}, nil
}

// Name implements Source.
func (r *Replay) Name() string { return "replay " + r.cfg.Name }

// Counters implements Counted.
func (r *Replay) Counters() Counters {
	var protos []string
	for _, it := range r.items {
		if !slices.Contains(protos, it.protocol) {
			protos = append(protos, it.protocol)
		}
	}
	return Counters{Adapter: "replay", Protocols: protos}
}

// Run implements Source: it publishes every item on the capture's clock
// (or at once with Max) and returns nil when done or when ctx ends, and an
// error naming how far it got when the sink refused frames.
func (r *Replay) Run(ctx context.Context, sink Sink, rep lifecycle.Reporter) error {
	rep.Up()
	start := time.Now()
	for _, it := range r.items {
		if !r.wait(ctx, start, it.offset) {
			return nil
		}
		recv := time.Now().UnixNano()
		if r.cfg.CaptureTime && it.absolute != 0 {
			recv = it.absolute
		}
		for i := range it.frames {
			it.frames[i].RecvUnixNano = recv
		}
		res, err := sink.PublishFrames(ctx, "replay", it.protocol, r.cfg.Sensor, it.frames)
		if err != nil {
			return fmt.Errorf("replay: after %d frames: %w", r.Accepted, err)
		}
		r.Accepted += res.Accepted
		r.Duplicates += res.Duplicates
	}
	return nil
}

// wait waits until offset (scaled) after start, unless Max; false when ctx
// ended first.
func (r *Replay) wait(ctx context.Context, start time.Time, offset time.Duration) bool {
	if r.cfg.Max {
		return true
	}
	d := time.Until(start.Add(time.Duration(float64(offset) / r.cfg.Speed)))
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
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

// ticksNs is a 12 MHz counter value in nanoseconds: the receiver's clock
// a replayed frame carries (issue 30), so that a replay at any speed is
// judged by the receiver's time, as the live stream was. 0 stays 0 (no
// timestamp).
func ticksNs(ts uint64) int64 { return int64(ts * 1000 / 12) }

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
			frames: []Frame{{Data: bytes.Clone(f.Bytes()), Signal: f.RSSI(), SensorNs: ticksNs(f.Timestamp), Clock: "receiver"}}})
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
		fr := Frame{Data: bytes.Clone(f.Bytes())}
		if f.HasTimestamp {
			fr.SensorNs, fr.Clock = ticksNs(f.Timestamp), "receiver"
		}
		out = append(out, replayItem{protocol: "adsb", offset: off, frames: []Frame{fr}})
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
			absolute: usec * 1000, frames: []Frame{{Data: bytes.Clone(f.Raw)}}})
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
			frames: []Frame{{Data: bytes.Clone(p.Data), Carrier: carrier}}})
	}
}

func hexItems(protocol string, data []byte) ([]replayItem, error) {
	if protocol == "" {
		return nil, errors.New("--format hex needs --protocol adsb, remoteid or mavlink")
	}
	if !ValidProtocol(protocol) {
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
		out = append(out, replayItem{protocol: protocol, frames: []Frame{{Data: b}}})
	}
	return out, nil
}

// mergeItems groups consecutive items of one protocol into items of up to
// n frames, so that Max publishes many frames per acknowledgement wait.
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
