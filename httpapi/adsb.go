package httpapi

import (
	"net/http"
	"time"

	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/adsb/adsbjson"
	"github.com/cuasd/cuasd/ingest"
)

// adsbMaxBody bounds a decode request: 1000 frames of 28 hex digits with
// quotes, commas and some white space come to about 35 kB.
const adsbMaxBody = 128 << 10

// handleADSBDecode serves POST /v1/ads-b/decode: one frame (hex), a batch
// (frames, each answered in order, a bad one with its own error), or an
// even/odd CPR pair with the frame received last (newest), optionally
// with a reference position and single-bit correction (fix); Comm-B
// replies (DF20/21) are read against a known state and, with meteo, the
// meteorological registers too. The request
// rules and the JSON are package adsbjson's, shared with `cuasd decode
// adsb`. A request of the wrong shape is a 400; a frame or pair that cannot
// be decoded is a 422 saying why.
func handleADSBDecode(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			adsbjson.Request
			publishOption
		}
		if !decodeJSON(w, r, &req, adsbMaxBody) {
			return
		}
		if code, detail, errs := req.publishOption.check(r, d); code != 0 {
			writeProblem(w, r, code, detail, errs...)
			return
		}
		resp, p := adsbjson.Decode(req.Request)
		if p != nil {
			var errs []FieldError
			if p.Field != "" {
				errs = append(errs, FieldError{Field: p.Field, Message: p.Detail})
			}
			writeProblem(w, r, p.Status, p.Detail, errs...)
			return
		}
		writeDecoded(w, r, d, "adsb", req.publishOption, adsbFrames(&req.Request), resp)
	}
}

// adsbFrames are the request's frames in the order they were received (a
// pair's older frame first), each stamped now, the newest last.
func adsbFrames(q *adsbjson.Request) []ingest.Frame {
	var hexes []string
	switch {
	case q.Hex != nil:
		hexes = []string{*q.Hex}
	case len(q.Frames) > 0:
		hexes = q.Frames
	case q.Even != nil && q.Odd != nil:
		hexes = []string{*q.Odd, *q.Even}
		if q.Newest == "odd" {
			hexes = []string{*q.Even, *q.Odd}
		}
	}
	now := time.Now().UnixNano()
	var out []ingest.Frame
	for i, h := range hexes {
		var f [14]byte
		n, err := adsb.ParseHex(&f, h)
		if err != nil {
			continue
		}
		out = append(out, ingest.Frame{Data: append([]byte(nil), f[:n]...), RecvUnixNano: now - int64(len(hexes)-1-i)*int64(time.Millisecond)})
	}
	return out
}
