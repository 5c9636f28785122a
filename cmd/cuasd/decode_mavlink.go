package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cuasd/cuasd/decode/mavlink"
)

// runDecodeMAVLink implements `cuasd decode mavlink`: it parses MAVLink
// frames given as hex arguments, a raw byte-stream file (--raw) or a
// telemetry log (--tlog) and prints the JSON object of POST
// /v1/mavlink/parse. --summary leaves out the per-frame list.
func runDecodeMAVLink(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("cuasd decode mavlink", `Usage:
  cuasd decode mavlink [flags] HEX...
  cuasd decode mavlink --tlog FILE|- [--summary]
  cuasd decode mavlink --raw FILE|- [--summary]

Parses MAVLink v1/v2 frames (checksums verified against the common and
ardupilotmega dialects) and prints the JSON answer of POST /v1/mavlink/parse.
HEX arguments are concatenated; whitespace is ignored. Every decoded field
is the sender's unauthenticated claim.`, args, stdout, stderr)
	tlog := fs.String("tlog", "", "parse the telemetry log `FILE` ([8-byte big-endian UNIX µs][frame]...; - for stdin)")
	raw := fs.String("raw", "", "parse the raw byte-stream `FILE` of concatenated frames (- for stdin)")
	summary := fs.Bool("summary", false, "print only stats and by_name, not every frame")
	keyHex := fs.String("key", "", "MAVLink 2 signing key (64 `HEX` digits) to verify signed frames")
	compact := fs.Bool("compact", false, "print compact JSON instead of indented")
	// Flags may come before or after the hex arguments.
	hexArgs, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("decode mavlink: %w", err)
	}

	opt := mavlink.Options{Format: mavlink.FormatRaw, Summary: *summary}
	if *keyHex != "" {
		k, err := hex.DecodeString(*keyHex)
		if err != nil || len(k) != mavlink.KeyLen {
			return errors.New("decode mavlink: --key must be 64 hex digits (32 bytes)")
		}
		opt.Key = k
	}
	in, err := mavlinkInput(fs, *tlog, *raw, hexArgs, &opt)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	res, err := mavlink.Parse(in, opt)
	if err != nil {
		return fmt.Errorf("decode mavlink: %w", err)
	}
	if res.Stats.Frames == 0 {
		return errors.New("decode mavlink: " + res.NoFrameDetail(len(in)))
	}
	var out []byte
	if *compact {
		out, err = json.Marshal(res)
	} else {
		out, err = json.MarshalIndent(res, "", "  ")
	}
	if err != nil {
		return fmt.Errorf("decode mavlink: %w", err)
	}
	_, err = stdout.Write(append(out, '\n'))
	return err
}

// mavlinkInput reads the one input given: the --tlog file (setting the
// tlog format), the --raw file or the hex arguments. Given none or more
// than one, it prints the usage and fails.
func mavlinkInput(fs *flag.FlagSet, tlog, raw string, hexArgs []string, opt *mavlink.Options) ([]byte, error) {
	var in []byte
	var err error
	switch {
	case tlog != "" && raw == "" && len(hexArgs) == 0:
		opt.Format = mavlink.FormatTlog
		in, err = mavlinkReadInput(tlog)
	case raw != "" && tlog == "" && len(hexArgs) == 0:
		in, err = mavlinkReadInput(raw)
	case raw == "" && tlog == "" && len(hexArgs) > 0:
		in, err = hex.DecodeString(strings.Join(strings.Fields(strings.Join(hexArgs, " ")), ""))
		if err != nil {
			return nil, fmt.Errorf("decode mavlink: hex: %v", err)
		}
	default:
		fs.Usage()
		return nil, errors.New("decode mavlink: give HEX arguments, --tlog FILE or --raw FILE (one of them)")
	}
	if err != nil {
		return nil, fmt.Errorf("decode mavlink: %w", err)
	}
	return in, nil
}

// mavlinkReadInput reads a whole file, or standard input for "-".
func mavlinkReadInput(path string) ([]byte, error) { return readInput(path) }
