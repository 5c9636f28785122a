package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
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
	fs := flag.NewFlagSet("decode remoteid", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pcapFile := fs.String("pcap", "", "decode every Remote ID frame of this pcap/pcapng capture, one JSON object per line")
	carrierName := fs.String("carrier", "auto", "how to read HEX: "+strings.Join(remoteid.CarrierNames(), ", "))
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: cuasd decode remoteid [--carrier C] HEX\n       cuasd decode remoteid --pcap FILE")
		fs.PrintDefaults()
	}
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

func replayRemoteIDPcap(ctx context.Context, path string, stdout io.Writer) error {
	fh, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("decode remoteid: %w", err)
	}
	defer fh.Close()
	r, err := pcap.NewReader(fh)
	if err != nil {
		return fmt.Errorf("decode remoteid: %s: %w", path, err)
	}
	enc := json.NewEncoder(stdout)
	var f pcap.RemoteIDFrame
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := r.NextRemoteID(&f)
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
