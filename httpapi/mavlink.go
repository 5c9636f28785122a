package httpapi

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"

	"github.com/cuasd/cuasd/decode/mavlink"
	"github.com/cuasd/cuasd/ingest"
)

// Limits of POST /v1/mavlink/parse.
const (
	// mavlinkMaxStream bounds the decoded byte stream: 1 MiB.
	mavlinkMaxStream = 1 << 20
	// mavlinkMaxBody leaves room for 1 MiB as hex (2 MiB of text, the larger
	// encoding) and the other fields.
	mavlinkMaxBody = 2*mavlinkMaxStream + 4<<10
)

// mavlinkParseRequest is the body of POST /v1/mavlink/parse.
type mavlinkParseRequest struct {
	Hex           *string `json:"hex"`
	Base64        *string `json:"base64"`
	Format        string  `json:"format"`
	SigningKeyHex *string `json:"signing_key_hex"`
	Summary       bool    `json:"summary"`
	publishOption
}

// handleMAVLinkParse serves POST /v1/mavlink/parse: a byte stream of MAVLink
// frames (raw or a tlog) as hex or base64, answered with every frame, the
// parser's statistics and per-message counts. An input with no valid frame
// is 422, naming what was found instead. The signing key is the request's
// signing_key_hex or, without one, the --mavlink-key of the service.
func handleMAVLinkParse(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req mavlinkParseRequest
		if !decodeJSON(w, r, &req, mavlinkMaxBody) {
			return
		}
		if code, detail, errs := req.publishOption.check(r, d); code != 0 {
			writeProblem(w, r, code, detail, errs...)
			return
		}
		opt := mavlink.Options{Format: mavlink.Format(req.Format), Key: d.MAVLinkKey, Summary: req.Summary}
		switch opt.Format {
		case "", mavlink.FormatRaw, mavlink.FormatTlog:
		default:
			writeProblem(w, r, http.StatusBadRequest, fmt.Sprintf("format must be \"raw\" or \"tlog\", got %q", req.Format),
				FieldError{Field: "format", Message: "must be raw or tlog"})
			return
		}
		if req.SigningKeyHex != nil {
			key, err := hex.DecodeString(strings.TrimSpace(*req.SigningKeyHex))
			if err != nil || len(key) != mavlink.KeyLen {
				writeProblem(w, r, http.StatusBadRequest, "signing_key_hex must be 64 hex digits (a 32-byte MAVLink 2 signing key)",
					FieldError{Field: "signing_key_hex", Message: "must be 64 hex digits"})
				return
			}
			opt.Key = key
		}
		in, field, err := mavlinkInput(req)
		if field == "" {
			writeProblem(w, r, http.StatusBadRequest, "give the byte stream in exactly one of hex or base64",
				FieldError{Field: "hex", Message: "exactly one of hex or base64 is required"})
			return
		}
		if err != nil {
			writeProblem(w, r, http.StatusUnprocessableEntity, field+": "+err.Error(),
				FieldError{Field: field, Message: err.Error()})
			return
		}
		if len(in) > mavlinkMaxStream {
			writeProblem(w, r, http.StatusRequestEntityTooLarge,
				fmt.Sprintf("the byte stream is %d bytes; the limit is %d (1 MiB)", len(in), mavlinkMaxStream))
			return
		}
		res, err := mavlink.Parse(in, opt)
		if err != nil {
			writeProblem(w, r, http.StatusBadRequest, err.Error())
			return
		}
		if res.Stats.Frames == 0 {
			writeProblem(w, r, http.StatusUnprocessableEntity, res.NoFrameDetail(len(in)),
				FieldError{Field: field, Message: "no valid MAVLink frame"})
			return
		}
		writeDecoded(w, r, d, "mavlink", req.publishOption, mavlinkChunks(in, opt.Format), res)
	}
}

// mavlinkChunks is what the pipeline receives for a parse request: the raw
// stream as one chunk, or each frame of a tlog stamped with its time.
func mavlinkChunks(in []byte, f mavlink.Format) []ingest.Frame {
	if f != mavlink.FormatTlog {
		return []ingest.Frame{{Data: in}}
	}
	var r mavlink.TlogReader
	r.Reset(in)
	var out []ingest.Frame
	for {
		fr, usec, ok := r.Next()
		if !ok {
			return out
		}
		out = append(out, ingest.Frame{Data: append([]byte(nil), fr.Raw...), RecvUnixNano: usec * 1000})
	}
}

// mavlinkInput decodes the request's byte stream; field names the field
// it came from ("" when neither or both were given).
func mavlinkInput(req mavlinkParseRequest) (in []byte, field string, err error) {
	switch {
	case req.Hex != nil && req.Base64 == nil:
		// Whitespace between bytes is allowed ("fe 09 00 ..."): it is how
		// frames are pasted from logs.
		s := strings.Join(strings.Fields(*req.Hex), "")
		in, err = hex.DecodeString(s)
		if err != nil {
			return nil, "hex", fmt.Errorf("not hexadecimal: %v", err)
		}
		return in, "hex", nil
	case req.Base64 != nil && req.Hex == nil:
		s := strings.Join(strings.Fields(*req.Base64), "")
		in, err = base64.StdEncoding.DecodeString(s)
		if err != nil {
			if in, err2 := base64.RawStdEncoding.DecodeString(s); err2 == nil {
				return in, "base64", nil
			}
			return nil, "base64", fmt.Errorf("not base64: %v", err)
		}
		return in, "base64", nil
	}
	return nil, "", nil
}
