package httpapi

import (
	"net/http"

	"github.com/cuasd/cuasd/decode/adsb/adsbjson"
)

// adsbMaxBody bounds a decode request: 1000 frames of 28 hex digits with
// quotes, commas and some white space come to about 35 kB.
const adsbMaxBody = 128 << 10

// handleADSBDecode serves POST /v1/ads-b/decode: one frame (hex), a batch
// (frames, each answered in order, a bad one with its own error), or an
// even/odd CPR pair with the frame received last (newest), optionally
// with a reference position and single-bit correction (fix). The request
// rules and the JSON are package adsbjson's, shared with `cuasd decode
// adsb`. A request of the wrong shape is a 400; a frame or pair that cannot
// be decoded is a 422 saying why.
func handleADSBDecode(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req adsbjson.Request
		if !decodeJSON(w, r, &req, adsbMaxBody) {
			return
		}
		resp, p := adsbjson.Decode(req)
		if p != nil {
			var errs []FieldError
			if p.Field != "" {
				errs = append(errs, FieldError{Field: p.Field, Message: p.Detail})
			}
			writeProblem(w, r, p.Status, p.Detail, errs...)
			return
		}
		writeJSON(w, http.StatusOK, resp)
	}
}
