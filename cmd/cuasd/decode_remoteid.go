package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cuasd/cuasd/decode/remoteid"
	"github.com/cuasd/cuasd/ingest/pcap"
)

// runDecodeRemoteID implements `cuasd decode remoteid`:
//
//	cuasd decode remoteid [--carrier C] HEX   one message, pack or carrier frame → one JSON object
//	cuasd decode remoteid --pcap FILE         every Remote ID frame of a capture → one JSON object per line
func runDecodeRemoteID(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("cuasd decode remoteid", `Usage:
  cuasd decode remoteid [--carrier CARRIER] HEX
  cuasd decode remoteid --pcap FILE|-

Decodes an ASTM F3411 Remote ID message, message pack or carrier frame, or
every Remote ID frame of a pcap/pcapng capture (one JSON object per line).`, args, stdout, stderr)
	pcapFile := fs.String("pcap", "", "decode every Remote ID frame of this pcap/pcapng capture `FILE` (- for standard input), one JSON object per line")
	carrierName := fs.String("carrier", "auto", "how to read HEX, a `CARRIER`: "+strings.Join(remoteid.CarrierNames(), ", "))
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *pcapFile != "" {
		if fs.NArg() != 0 {
			return errors.New("decode remoteid: --pcap takes no HEX argument")
		}
		return replayRemoteIDPcap(ctx, *pcapFile, stdout)
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("decode remoteid: give HEX or --pcap FILE")
	}
	carrier, ok := remoteid.ParseCarrier(*carrierName)
	if !ok {
		return fmt.Errorf("decode remoteid: unknown carrier %q (%s)", *carrierName, strings.Join(remoteid.CarrierNames(), ", "))
	}
	b, err := remoteid.ParseHex(strings.Join(fs.Args(), ""))
	if err != nil {
		return fmt.Errorf("decode remoteid: %w", err)
	}
	res, err := remoteid.DecodeResult(carrier, b)
	if err != nil {
		return fmt.Errorf("decode remoteid: %w", err)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// remoteIDPcapLine is one line of `--pcap` output: a Remote ID frame found in
// the capture, or, with "error", one that failed its checksum or decoding.
type remoteIDPcapLine struct {
	Frame           int                    `json:"frame"`
	Time            string                 `json:"time"`
	Transport       string                 `json:"transport"`
	Transmitter     string                 `json:"transmitter,omitempty"`
	RSSI            *int                   `json:"rssi_dbm,omitempty"`
	MessageCounter  *uint8                 `json:"message_counter,omitempty"`
	ProtocolVersion *int                   `json:"protocol_version,omitempty"`
	MessagePack     *bool                  `json:"message_pack,omitempty"`
	Messages        []any                  `json:"messages"`
	Warnings        []remoteid.WarningView `json:"warnings"`
	Error           string                 `json:"error,omitempty"`
}

// replayRemoteIDPcap prints every Remote ID frame of the capture at path
// (standard input for "-"); a capture without one is an error.
func replayRemoteIDPcap(ctx context.Context, path string, stdout io.Writer) error {
	var in io.Reader = stdin
	if path != "-" {
		fh, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("decode remoteid: %w", err)
		}
		defer fh.Close()
		in = fh
	}
	path = inputName(path)
	r, err := pcap.NewReader(in)
	if err != nil {
		return fmt.Errorf("decode remoteid: %s: %w", path, err)
	}
	enc := json.NewEncoder(stdout)
	var f pcap.RemoteIDFrame
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := r.NextRemoteID(&f)
		if errors.Is(err, io.EOF) && n == 0 {
			return fmt.Errorf("decode remoteid: no Remote ID frame in %s", path)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("decode remoteid: %s: %w", path, err)
		}
		if err := enc.Encode(pcapLine(&f)); err != nil {
			return err
		}
	}
}

func pcapLine(f *pcap.RemoteIDFrame) remoteIDPcapLine {
	l := remoteIDPcapLine{
		Frame:     f.Packet.Number,
		Time:      f.Packet.Time.UTC().Format(time.RFC3339Nano),
		Transport: f.Frame.Transport.String(),
		Messages:  []any{},
		Warnings:  []remoteid.WarningView{},
	}
	if f.Frame.HasTransmitter {
		l.Transmitter = remoteid.FormatMAC(f.Frame.Transmitter)
	}
	if f.Packet.HasRSSI {
		rssi := f.Packet.RSSI
		l.RSSI = &rssi
	}
	if f.Err != nil {
		l.Error = f.Err.Error()
		return l
	}
	v := remoteid.NewFrameView(&f.Frame)
	l.MessageCounter, l.ProtocolVersion, l.MessagePack = v.MessageCounter, &v.ProtocolVersion, &v.MessagePack
	l.Messages, l.Warnings = v.Messages, v.Warnings
	return l
}
