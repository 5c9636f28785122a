package httpapi

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/ingest"
)

// RawPublisher publishes raw frames to the pipeline and returns once
// JetStream has acknowledged them.
type RawPublisher interface {
	PublishFrames(ctx context.Context, adapter, protocol, sensor string, frames []ingest.Frame) (ingest.Result, error)
}

// MaxIngestFrames caps the frames of one ingest request.
const MaxIngestFrames = 1000

type ingestRequest struct {
	Frames       []string `json:"frames"`
	FramesBase64 []string `json:"frames_base64"`
	Sensor       string   `json:"sensor"`
	Carrier      string   `json:"carrier"`
	RecvUnixNano int64    `json:"recv_time_unix_ns"`
}

// handleIngest serves POST /v1/ingest/{protocol}: 202 only after JetStream
// acknowledged every frame, 429/503 with Retry-After under back-pressure.
func handleIngest(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		protocol := chi.URLParam(r, "protocol")
		if !ingest.ValidProtocol(protocol) {
			writeProblem(w, r, http.StatusNotFound,
				fmt.Sprintf("unknown protocol %q; use one of %s", protocol, strings.Join(ingest.Protocols, ", ")))
			return
		}
		if d.Publisher == nil {
			unavailable(w, r, "the pipeline publisher")
			return
		}
		var req ingestRequest
		if !decodeJSON(w, r, &req, 4*DefaultMaxBody) {
			return
		}
		if req.Sensor == "" {
			req.Sensor = "http"
		}
		if errs := req.check(protocol); len(errs) > 0 {
			writeProblem(w, r, http.StatusBadRequest, errs[0].Field+": "+errs[0].Message, errs...)
			return
		}
		if msg := recvTimeProblem(req.RecvUnixNano, time.Now()); msg != "" {
			writeProblem(w, r, http.StatusUnprocessableEntity, "recv_time_unix_ns "+msg,
				FieldError{Field: "recv_time_unix_ns", Message: msg})
			return
		}
		frames, ok := req.frames(w, r)
		if !ok {
			return
		}
		res, err := d.Publisher.PublishFrames(r.Context(), "http", protocol, req.Sensor, frames)
		if err != nil {
			publishProblem(w, r, d, protocol, res, len(frames), err)
			return
		}
		writeJSON(w, http.StatusAccepted, map[string]any{
			"accepted": res.Accepted, "duplicates": res.Duplicates, "subject": res.Subject,
		})
	}
}

// check names every invalid field of the request, in field order.
func (req *ingestRequest) check(protocol string) []FieldError {
	var errs []FieldError
	if !bus.ValidSensor(req.Sensor) {
		errs = append(errs, FieldError{Field: "sensor", Message: "must be " + bus.SensorRule})
	}
	n := len(req.Frames) + len(req.FramesBase64)
	switch {
	case n == 0:
		errs = append(errs, FieldError{Field: "frames", Message: "give at least one frame in frames (hex) or frames_base64"})
	case n > MaxIngestFrames:
		errs = append(errs, FieldError{Field: "frames", Message: fmt.Sprintf("at most %d frames per request, got %d", MaxIngestFrames, n)})
	}
	if req.Carrier != "" && (protocol != "remoteid" || !validCarrier(req.Carrier)) {
		errs = append(errs, FieldError{Field: "carrier", Message: "only for remoteid: one of message, message_pack, wifi_beacon, wifi_nan, ble_adv_data, ble_pdu"})
	}
	if req.RecvUnixNano < 0 {
		errs = append(errs, FieldError{Field: "recv_time_unix_ns", Message: "must not be negative"})
	}
	return errs
}

// frames decodes the hex frames, then the base64 ones. On false it has
// answered 422 naming the first frame that is not non-empty hex or base64.
func (req *ingestRequest) frames(w http.ResponseWriter, r *http.Request) ([]ingest.Frame, bool) {
	frames := make([]ingest.Frame, 0, len(req.Frames)+len(req.FramesBase64))
	for i, h := range req.Frames {
		b, err := hex.DecodeString(strings.Join(strings.Fields(h), ""))
		if err != nil || len(b) == 0 {
			writeProblem(w, r, http.StatusUnprocessableEntity, fmt.Sprintf("frames[%d] is not non-empty hex: %q", i, clip(h)),
				FieldError{Field: fmt.Sprintf("frames[%d]", i), Message: "not hex"})
			return nil, false
		}
		frames = append(frames, ingest.Frame{Data: b, RecvUnixNano: req.RecvUnixNano, Carrier: req.Carrier})
	}
	for i, s := range req.FramesBase64 {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(b) == 0 {
			writeProblem(w, r, http.StatusUnprocessableEntity, fmt.Sprintf("frames_base64[%d] is not non-empty base64", i),
				FieldError{Field: fmt.Sprintf("frames_base64[%d]", i), Message: "not base64"})
			return nil, false
		}
		frames = append(frames, ingest.Frame{Data: b, RecvUnixNano: req.RecvUnixNano, Carrier: req.Carrier})
	}
	return frames, true
}

// publishProblem answers a failed publish of n frames: 503 when the store
// is full, 429 under back-pressure, else 503; always with Retry-After.
func publishProblem(w http.ResponseWriter, r *http.Request, d Deps, protocol string, res ingest.Result, n int, err error) {
	var bp interface{ Backpressure() bool }
	w.Header().Set("Retry-After", "1")
	if storeFull(w, r, err, fmt.Sprintf("%d of %d frames stored", res.Accepted+res.Duplicates, n)) {
		return
	}
	if errors.As(err, &bp) && bp.Backpressure() {
		writeProblem(w, r, http.StatusTooManyRequests,
			fmt.Sprintf("the pipeline is saturated (%d of %d frames stored); retry the request, stored frames are de-duplicated", res.Accepted+res.Duplicates, n))
		return
	}
	if errors.Is(err, ingest.ErrNotRunning) {
		writeProblem(w, r, http.StatusServiceUnavailable, "the service's inputs are starting or stopping; nothing was stored, retry the request")
		return
	}
	d.Logger.Warn("ingest publish failed", "protocol", protocol, "err", err)
	writeProblem(w, r, http.StatusServiceUnavailable, "JetStream did not acknowledge the frames; retry the request")
}

// storeFull answers 503 with Retry-After when JetStream refused frames for
// lack of space (a stream at its cap, discard-new, or the store
// exhausted): unlike saturation (429), space returns only as old frames
// age out or an operator makes room. It reports whether it answered.
func storeFull(w http.ResponseWriter, r *http.Request, err error, stored string) bool {
	var sf interface{ StoreFull() bool }
	if !errors.As(err, &sf) || !sf.StoreFull() {
		return false
	}
	w.Header().Set("Retry-After", "30")
	writeProblem(w, r, http.StatusServiceUnavailable,
		"the raw-frame store is full ("+stored+"); frames are refused, not dropped: retry later, stored frames are de-duplicated")
	return true
}

// Bounds of a stated receive time: a frame from the future would make a
// track last_seen years ahead (it never expires on its sensor's clock), and
// one older than the raw stream's default retention cannot be replayed
// beside live data anyway.
const (
	MaxRecvFuture = 5 * time.Minute
	MaxRecvPast   = 24 * time.Hour
)

// recvTimeProblem says what is wrong with a stated receive time (0: now),
// or "".
func recvTimeProblem(ns int64, now time.Time) string {
	if ns == 0 {
		return ""
	}
	t := time.Unix(0, ns)
	switch {
	case t.After(now.Add(MaxRecvFuture)):
		return fmt.Sprintf("is %s in the future; at most %s ahead of the server clock is accepted", t.Sub(now).Round(time.Second), MaxRecvFuture)
	case t.Before(now.Add(-MaxRecvPast)):
		return fmt.Sprintf("is %s in the past; at most %s is accepted (replay older captures with cuasd replay)", now.Sub(t).Round(time.Second), MaxRecvPast)
	}
	return ""
}

// clip shortens user input quoted back in an error.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func validCarrier(c string) bool {
	switch c {
	case "message", "message_pack", "wifi_beacon", "wifi_nan", "ble_adv_data", "ble_pdu":
		return true
	}
	return false
}
