// Command cuasd is the counter-UAS intelligence service: one binary that
// decodes drone and aircraft broadcasts, fuses them into tracks, scores them
// with the Λ gate, records decisions in a signed Merkle log and serves the
// HTTP API and the map. Run `cuasd help` for the commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errSilent) {
			fmt.Fprintln(os.Stderr, "cuasd:", err)
		}
		var ec exitCoder
		if errors.As(err, &ec) {
			os.Exit(ec.ExitCode())
		}
		os.Exit(1)
	}
}

// errSilent is returned when the command already told the user what went
// wrong (for example a verification report), so main only sets the exit code.
var errSilent = errors.New("silent failure")

// exitCoder lets a command choose its exit status.
type exitCoder interface{ ExitCode() int }

const usage = `cuasd — counter-UAS intelligence service

Usage:
  cuasd serve [flags]              run the service (embedded NATS + JetStream by default)
  cuasd decode adsb HEX...         decode Mode S / ADS-B frames to JSON
  cuasd decode remoteid HEX        decode a Remote ID message, pack or carrier frame
  cuasd decode remoteid --pcap F   decode every Remote ID frame of a pcap/pcapng capture
  cuasd decode mavlink HEX         parse MAVLink v1/v2 frames
  cuasd decode mavlink --tlog F    parse a MAVLink telemetry log
  cuasd replay FILE [--format F]   publish a capture (beast, avr, tlog, pcap, hex; recognised
                                   without --format) to a running cuasd over NATS
                                   [--speed N | --max] [--nats-url URL]
  cuasd simulate [flags]           publish synthetic aircraft, drones, MAVLink vehicles and a
                                   swarm to a running cuasd (--rate N for load tests)
  cuasd verify BUNDLE              verify a receipt bundle offline
  cuasd token new --name N --role R
                                   print a fresh API token and its --auth-tokens line
  cuasd version                    print the version

A FILE or BUNDLE argument may be - for standard input. Run
"cuasd COMMAND --help" or "cuasd help COMMAND" for a command's flags. Every
flag of serve is also an environment variable CUAS_<FLAG> and a key of the
--config YAML file.
`

// run is the whole program, callable from tests: args exclude the program
// name, getenv reads the environment. Help asked for (-h, --help on any
// command) is a success.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, getenv, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// dispatch runs the command args[0].
func dispatch(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], getenv, stdout, stderr)
	case "decode":
		return runDecode(ctx, args[1:], stdout, stderr)
	case "simulate":
		return runSimulate(ctx, args[1:], getenv, stdout, stderr)
	case "replay":
		return runReplay(ctx, args[1:], getenv, stdout, stderr)
	case "token":
		return runToken(args[1:], stdout, stderr)
	case "verify":
		return runVerify(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-version":
		if wantsHelp(args[1:]) {
			return printHelp(stdout, versionUsage)
		}
		fmt.Fprintln(stdout, "cuasd", version())
		return nil
	case "help", "-h", "--help":
		if len(args) > 1 && args[0] == "help" && !wantsHelp(args[1:]) {
			// `cuasd help COMMAND...` is `cuasd COMMAND... --help`.
			return dispatch(ctx, append(args[1:len(args):len(args)], "--help"), getenv, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

const versionUsage = `Usage:
  cuasd version

Prints the version of cuasd (a VCS tag or pseudo-version, or "dev").
`

const decodeUsage = `Usage:
  cuasd decode adsb HEX...         decode Mode S / ADS-B frames to JSON
  cuasd decode remoteid HEX        decode a Remote ID message, pack or carrier frame
  cuasd decode remoteid --pcap F   decode every Remote ID frame of a pcap/pcapng capture
  cuasd decode mavlink HEX         parse MAVLink v1/v2 frames
  cuasd decode mavlink --tlog F    parse a MAVLink telemetry log

A file argument F may be - for standard input.
Run "cuasd decode PROTOCOL --help" for the flags of one protocol.
`

// runDecode dispatches `cuasd decode <protocol>`.
func runDecode(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, decodeUsage)
		return errors.New("decode: name a protocol: adsb, remoteid or mavlink")
	}
	if wantsHelp(args[:1]) {
		return printHelp(stdout, decodeUsage)
	}
	switch args[0] {
	case "adsb", "ads-b":
		return runDecodeADSB(ctx, args[1:], stdout, stderr)
	case "remoteid", "remote-id", "rid":
		return runDecodeRemoteID(ctx, args[1:], stdout, stderr)
	case "mavlink":
		return runDecodeMAVLink(ctx, args[1:], stdout, stderr)
	}
	return fmt.Errorf("decode: unknown protocol %q (adsb, remoteid or mavlink)", args[0])
}

// version is the module version stamped by the Go toolchain (a VCS tag or
// pseudo-version), or "dev" for a plain `go build` of a work tree.
func version() string {
	if v := buildVersion; v != "" {
		return v
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// buildVersion can be set with -ldflags "-X main.buildVersion=v1.2.3".
var buildVersion string
