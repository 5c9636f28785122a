// Package adsbjson shapes decoded ADS-B / Mode S messages into the JSON of
// the POST /v1/ads-b/decode endpoint and of `cuasd decode adsb`, so that
// both print the same thing.
//
// It owns the request and response types of that endpoint and the rules of
// its three forms (one frame, a batch of frames, an even/odd pair). It must
// not touch HTTP, flags or I/O: the handler and the CLI map its Problem to
// their own error reporting. It allocates freely; the allocation-free hot
// path is package adsb.
//
// Every field it emits is a claim made by an unauthenticated, spoofable
// transmitter, not ground truth.
package adsbjson

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/cuasd/cuasd/decode/adsb"
)

// MaxFrames is the most frames one request may carry.
const MaxFrames = 1000

// Notice is the statement every response carries.
const Notice = "ADS-B and Mode S are unauthenticated and spoofable: every decoded field is a claim by the transmitter, not ground truth."

// Request is the body of POST /v1/ads-b/decode. Exactly one form is used:
// Hex (one frame), Frames (a batch) or Even with Odd (a CPR pair).
type Request struct {
	// Hex is one frame as hexadecimal text; case and white space are
	// ignored, and so are an AVR '*' prefix and ';' suffix.
	Hex *string `json:"hex,omitempty"`
	// Frames are up to MaxFrames frames, each decoded on its own.
	Frames []string `json:"frames,omitempty"`
	// Even and Odd are the two frames of a CPR pair, Newest ("even" or
	// "odd") the one received last, which decides the position.
	Even   *string `json:"even,omitempty"`
	Odd    *string `json:"odd,omitempty"`
	Newest string  `json:"newest,omitempty"`
	// Reference is a known position near the aircraft (the receiver's):
	// needed for surface pairs, and used for local decoding of single
	// frames and to cross-check airborne pairs.
	Reference *Reference `json:"reference,omitempty"`
	// Fix asks for single-bit error correction of DF17/DF18 frames.
	Fix bool `json:"fix,omitempty"`
	// Known is what is known about the aircraft of the Comm-B replies
	// (DF20/21): their register candidates are checked against it.
	Known *Known `json:"known,omitempty"`
	// Meteo also tries the meteorological Comm-B registers 4,4 and 4,5,
	// which pyModeS leaves out by default (their loose format matches much
	// other traffic).
	Meteo bool `json:"meteo,omitempty"`
}

// Reference is a position in degrees.
type Reference struct {
	Lat *float64 `json:"lat"`
	Lon *float64 `json:"lon"`
}

// Response is the answer to a Request.
type Response struct {
	// Messages holds one entry per frame, in request order (even before
	// odd for a pair).
	Messages []Message `json:"messages"`
	// Position is the resolved position of a pair, or of a single frame
	// decoded against the reference.
	Position *Position `json:"position,omitempty"`
	Notice   string    `json:"notice"`
}

// Position is a resolved CPR position.
type Position struct {
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
	// Method is cpr_global_airborne, cpr_global_surface,
	// cpr_local_airborne or cpr_local_surface.
	Method string `json:"method"`
}

// Problem is why a request could not be answered: Status 400 for a request
// of the wrong shape, 422 for frames or pairs that cannot be decoded.
// Field names the offending request field.
type Problem struct {
	Status int
	Field  string
	Detail string
}

func (p *Problem) Error() string { return p.Detail }

func badRequest(field, format string, args ...any) *Problem {
	return &Problem{Status: 400, Field: field, Detail: fmt.Sprintf(format, args...)}
}

func undecodable(field, format string, args ...any) *Problem {
	return &Problem{Status: 422, Field: field, Detail: fmt.Sprintf(format, args...)}
}

// Decode answers a Request.
func Decode(req Request) (Response, *Problem) {
	resp := Response{Messages: []Message{}, Notice: Notice}
	ref, p := req.check()
	if p != nil {
		return resp, p
	}
	opts := adsb.Options{FixOneBit: req.Fix}
	switch {
	case req.Hex != nil:
		return decodeOne(req, ref, opts, resp)
	case req.Frames != nil:
		return decodeFrames(req, ref, opts, resp)
	}
	return decodePair(req, ref, opts, resp)
}

// check validates the request's shape and returns its reference position
// (nil without one).
func (req *Request) check() (*adsb.LatLon, *Problem) {
	forms := 0
	if req.Hex != nil {
		forms++
	}
	if req.Frames != nil {
		forms++
	}
	if req.Even != nil || req.Odd != nil {
		forms++
	}
	if forms != 1 {
		return nil, badRequest("", "give exactly one of hex, frames, or even with odd")
	}
	var ref *adsb.LatLon
	if r := req.Reference; r != nil {
		if r.Lat == nil || r.Lon == nil {
			return nil, badRequest("reference", "reference needs both lat and lon")
		}
		if !(*r.Lat >= -90 && *r.Lat <= 90) {
			return nil, badRequest("reference.lat", "reference.lat must be between -90 and 90 degrees")
		}
		if !(*r.Lon >= -180 && *r.Lon <= 180) {
			return nil, badRequest("reference.lon", "reference.lon must be between -180 and 180 degrees")
		}
		ref = &adsb.LatLon{Lat: *r.Lat, Lon: *r.Lon}
	}
	if p := req.Known.check(); p != nil {
		return nil, p
	}
	return ref, nil
}

// decodeOne answers a request for one frame (hex).
func decodeOne(req Request, ref *adsb.LatLon, opts adsb.Options, resp Response) (Response, *Problem) {
	var m adsb.Message
	if p := decodeText("hex", *req.Hex, opts, &m); p != nil {
		return resp, p
	}
	msg := describeWith(&m, &req, nil)
	if ref != nil && m.HasCPR {
		lat, lon, err := adsb.LocalPosition(&m, *ref)
		if err != nil {
			return resp, undecodable("reference", "the position cannot be resolved from this reference: %s", reason(err))
		}
		msg.Lat, msg.Lon = &lat, &lon
		resp.Position = &Position{Lat: lat, Lon: lon, Method: localMethod(&m)}
	}
	resp.Messages = append(resp.Messages, msg)
	return resp, nil
}

// decodeFrames answers a batch: each frame decoded on its own (an error
// is reported in its entry), with what earlier squitters said about an
// address informing its Comm-B replies.
func decodeFrames(req Request, ref *adsb.LatLon, opts adsb.Options, resp Response) (Response, *Problem) {
	if len(req.Frames) == 0 {
		return resp, badRequest("frames", "frames is empty")
	}
	if len(req.Frames) > MaxFrames {
		return resp, badRequest("frames", "%d frames; at most %d per request", len(req.Frames), MaxFrames)
	}
	batch := batchState{}
	for i, s := range req.Frames {
		var m adsb.Message
		idx := i
		if p := decodeText(fmt.Sprintf("frames[%d]", i), s, opts, &m); p != nil {
			e := Message{Index: &idx, Input: s, Error: p.Detail}
			if m.Len > 0 {
				// The header of a frame that failed its CRC.
				df, rem := int(m.DF), int(m.CRCRemainder)
				e.DF, e.CRCRemainder = &df, &rem
			}
			resp.Messages = append(resp.Messages, e)
			continue
		}
		msg := describeWith(&m, &req, batch)
		msg.Index = &idx
		if ref != nil && m.HasCPR {
			if lat, lon, err := adsb.LocalPosition(&m, *ref); err == nil {
				msg.Lat, msg.Lon = &lat, &lon
			}
		}
		resp.Messages = append(resp.Messages, msg)
	}
	return resp, nil
}

// decodePair answers an even/odd pair with its global position.
func decodePair(req Request, ref *adsb.LatLon, opts adsb.Options, resp Response) (Response, *Problem) {
	if req.Even == nil || req.Odd == nil {
		return resp, badRequest("", "a pair needs both even and odd")
	}
	if req.Newest != "even" && req.Newest != "odd" {
		return resp, badRequest("newest", `newest must be "even" or "odd": the frame received last decides the position`)
	}
	var even, odd adsb.Message
	if p := decodeText("even", *req.Even, opts, &even); p != nil {
		return resp, p
	}
	if p := decodeText("odd", *req.Odd, opts, &odd); p != nil {
		return resp, p
	}
	if p := checkPair(&even, &odd); p != nil {
		return resp, p
	}
	em, om := Describe(&even, req.Fix), Describe(&odd, req.Fix)
	newestOdd := req.Newest == "odd"
	lat, lon, err := adsb.GlobalPosition(&even, &odd, newestOdd, ref)
	if err != nil {
		return resp, undecodable("", "the pair does not resolve: %s", reason(err))
	}
	newest, nm := &even, &em
	if newestOdd {
		newest, nm = &odd, &om
	}
	method := "cpr_global_airborne"
	if even.IsSurface() {
		method = "cpr_global_surface"
	} else if p := checkAgainstReference(newest, ref, lat, lon); p != nil {
		return resp, p
	}
	nm.Lat, nm.Lon = &lat, &lon
	resp.Messages = append(resp.Messages, em, om)
	resp.Position = &Position{Lat: lat, Lon: lon, Method: method}
	return resp, nil
}

// checkPair says why two frames are not an even/odd position pair.
func checkPair(even, odd *adsb.Message) *Problem {
	switch {
	case !even.HasCPR:
		return undecodable("even", "the even frame is not a position message (it is %s)", even.Kind)
	case !odd.HasCPR:
		return undecodable("odd", "the odd frame is not a position message (it is %s)", odd.Kind)
	case even.CPR.Odd:
		return undecodable("even", "the frame given as even has F=1: it is an odd report")
	case !odd.CPR.Odd:
		return undecodable("odd", "the frame given as odd has F=0: it is an even report")
	}
	return nil
}

// checkAgainstReference: an airborne pair needs no reference; given one,
// the pair must agree with the local decode of its newest frame, or one of
// the two (frames, or reference) is wrong and we do not guess which.
func checkAgainstReference(newest *adsb.Message, ref *adsb.LatLon, lat, lon float64) *Problem {
	if ref == nil {
		return nil
	}
	llat, llon, lerr := adsb.LocalPosition(newest, *ref)
	if lerr != nil || math.Abs(llat-lat) > 1e-4 || math.Abs(wrap180(llon-lon)) > 1e-4 {
		return undecodable("reference", "the pair resolves to (%.5f, %.5f) but decoding the newest frame against the reference gives %s: at least one frame is corrupt or spoofed, or the reference is over 180 NM away",
			lat, lon, localText(llat, llon, lerr))
	}
	return nil
}

// describeWith is Describe with the request's Comm-B options: its known
// state, merged in a batch with what the batch's earlier squitters said
// about the same address (batch is nil outside a batch).
func describeWith(m *adsb.Message, req *Request, batch batchState) Message {
	j := describeHeader(m, req.Fix)
	describePayload(m, &j)
	if m.DF == 20 || m.DF == 21 {
		k, heard := batch.commBKnown(m, req.Known)
		var c adsb.CommB
		m.CommB(&k, adsb.CommBOptions{Meteo: req.Meteo}, &c)
		describeCommB(&c, &j)
		if batch != nil {
			j.CommB.AddressKnown = &heard
		}
	}
	if batch != nil {
		batch.learn(m)
	}
	return j
}

func localText(lat, lon float64, err error) string {
	if err != nil {
		return "no position (" + reason(err) + ")"
	}
	return fmt.Sprintf("(%.5f, %.5f)", lat, lon)
}

func wrap180(d float64) float64 {
	return d - 360*math.Floor((d+180)/360)
}

func localMethod(m *adsb.Message) string {
	if m.IsSurface() {
		return "cpr_local_surface"
	}
	return "cpr_local_airborne"
}

// decodeText parses and decodes one frame given as text. On failure m
// holds whatever header could be decoded.
func decodeText(field, s string, opts adsb.Options, m *adsb.Message) *Problem {
	var buf [14]byte
	n, err := adsb.ParseHex(&buf, s)
	switch {
	case errors.Is(err, adsb.ErrHex):
		return undecodable(field, "%s is not hexadecimal text of a frame (an even number of hex digits)", field)
	case errors.Is(err, adsb.ErrLength):
		return undecodable(field, "%s is longer than 14 bytes; a Mode S frame is 7 bytes (DF 0-15) or 14 bytes (DF 16-31)", field)
	case n == 0:
		return undecodable(field, "%s is empty", field)
	}
	err = adsb.DecodeWith(buf[:n], m, opts)
	switch {
	case errors.Is(err, adsb.ErrLength):
		return undecodable(field, "%s is %d bytes; a Mode S frame is 7 bytes (DF 0-15) or 14 bytes (DF 16-31), and its first bit must match", field, n)
	case errors.Is(err, adsb.ErrCRC):
		hint := ""
		if !opts.FixOneBit && (m.DF == 17 || m.DF == 18) {
			hint = `; "fix": true tries single-bit correction`
		}
		return undecodable(field, "%s fails its CRC (DF%d, remainder %06X): it was corrupted in reception and is not decoded%s", field, m.DF, m.CRCRemainder, hint)
	case err != nil:
		return undecodable(field, "%s: %v", field, err)
	}
	return nil
}

// reason turns a package adsb error into the endpoint's wording.
func reason(err error) string {
	switch {
	case errors.Is(err, adsb.ErrZone):
		return "the even and odd latitudes lie in different longitude zones (the aircraft crossed a zone boundary between them, or a frame is bad); wait for a fresh pair"
	case errors.Is(err, adsb.ErrLatRange):
		return "the latitude resolves outside ±90°: the frames do not belong together or one is corrupt"
	case errors.Is(err, adsb.ErrAddressMismatch):
		return "the two frames come from different addresses"
	case errors.Is(err, adsb.ErrMixedPosition):
		return "one frame is an airborne and the other a surface position"
	case errors.Is(err, adsb.ErrNotPair):
		return "the frames are not one even and one odd report"
	case errors.Is(err, adsb.ErrReference):
		return "a surface position needs a reference (the receiver's position) to pick the quadrant; give reference"
	case errors.Is(err, adsb.ErrNotPosition):
		return "not a position message"
	}
	return strings.TrimPrefix(err.Error(), "adsb: ")
}
