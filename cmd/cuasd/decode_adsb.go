package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cuasd/cuasd/decode/adsb/adsbjson"
)

// runDecodeADSB implements `cuasd decode adsb`, printing the JSON that
// POST /v1/ads-b/decode answers (both come from package adsbjson):
//
//	cuasd decode adsb [--fix] [--ref LAT,LON] HEX           one frame
//	cuasd decode adsb [--fix] [--ref LAT,LON] HEX HEX...    a batch, one result per frame
//	cuasd decode adsb [--ref LAT,LON] --even HEX --odd HEX --newest even|odd
func runDecodeADSB(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("decode adsb", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fix := fs.Bool("fix", false, "repair a single bit error in DF17/DF18 frames that fail their CRC")
	ref := fs.String("ref", "", "reference position `LAT,LON` in degrees (the receiver's): local decoding, surface pairs")
	even := fs.String("even", "", "the even (F=0) position frame of a CPR pair")
	odd := fs.String("odd", "", "the odd (F=1) position frame of a CPR pair")
	newest := fs.String("newest", "", "which frame of the pair was received last: even or odd")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: cuasd decode adsb [--fix] [--ref LAT,LON] HEX...\n       cuasd decode adsb [--ref LAT,LON] --even HEX --odd HEX --newest even|odd")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	req := adsbjson.Request{Fix: *fix}
	if *ref != "" {
		la, lo, ok := strings.Cut(*ref, ",")
		lat, err1 := strconv.ParseFloat(strings.TrimSpace(la), 64)
		lon, err2 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
		if !ok || err1 != nil || err2 != nil {
			return fmt.Errorf("decode adsb: --ref wants LAT,LON in degrees, got %q", *ref)
		}
		req.Reference = &adsbjson.Reference{Lat: &lat, Lon: &lon}
	}
	switch {
	case *even != "" || *odd != "":
		if fs.NArg() != 0 {
			return errors.New("decode adsb: give either HEX arguments or --even/--odd, not both")
		}
		req.Even, req.Odd, req.Newest = even, odd, *newest
	case fs.NArg() == 1:
		h := fs.Arg(0)
		req.Hex = &h
	case fs.NArg() > 1:
		req.Frames = fs.Args()
	default:
		fs.Usage()
		return errors.New("decode adsb: give HEX, or --even HEX --odd HEX --newest even|odd")
	}
	resp, p := adsbjson.Decode(req)
	if p != nil {
		return fmt.Errorf("decode adsb: %s", p.Detail)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(resp)
}
