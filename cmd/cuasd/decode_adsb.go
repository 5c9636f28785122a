package main

import (
	"context"
	"encoding/json"
	"errors"
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
//
// Comm-B replies (DF20/21) take --meteo (also try registers 4,4 and 4,5)
// and --known GS,TRACK,ALT (the aircraft's ADS-B ground speed in knots,
// track in degrees and altitude in feet; any may be empty), against which
// the candidate registers are checked.
func runDecodeADSB(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("cuasd decode adsb", `Usage:
  cuasd decode adsb [--fix] [--ref LAT,LON] [--meteo] [--known GS,TRACK,ALT] HEX...
  cuasd decode adsb [--ref LAT,LON] --even HEX --odd HEX --newest even|odd

Decodes Mode S / ADS-B frames and prints the JSON answer of
POST /v1/ads-b/decode. Every decoded field is an unauthenticated claim.`, args, stdout, stderr)
	fix := fs.Bool("fix", false, "repair a single bit error in DF17/DF18 frames that fail their CRC")
	ref := fs.String("ref", "", "reference position `LAT,LON` in degrees (the receiver's): local decoding, surface pairs")
	even := fs.String("even", "", "the even (F=0) position frame of a CPR pair, in `HEX`")
	odd := fs.String("odd", "", "the odd (F=1) position frame of a CPR pair, in `HEX`")
	newest := fs.String("newest", "", "which frame of the pair was received last: `even|odd`")
	meteo := fs.Bool("meteo", false, "Comm-B: also try the meteorological registers 4,4 and 4,5")
	known := fs.String("known", "", "Comm-B: the aircraft's known ADS-B state `GS,TRACK,ALT` (knots, degrees, feet; leave any empty)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	req := adsbjson.Request{Fix: *fix, Meteo: *meteo}
	if *known != "" {
		k, err := parseKnown(*known)
		if err != nil {
			return err
		}
		req.Known = k
	}
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

// parseKnown reads --known GS,TRACK,ALT; empty parts are unknown. The
// ranges are checked by adsbjson, as for the endpoint.
func parseKnown(s string) (*adsbjson.Known, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return nil, fmt.Errorf("decode adsb: --known wants GS,TRACK,ALT (knots, degrees, feet; any may be empty), got %q", s)
	}
	var k adsbjson.Known
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		v, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return nil, fmt.Errorf("decode adsb: --known part %d (%q) is not a number", i+1, p)
		}
		switch i {
		case 0:
			k.Groundspeed = &v
		case 1:
			k.Track = &v
		default:
			a := int(v)
			k.Altitude = &a
		}
	}
	return &k, nil
}
