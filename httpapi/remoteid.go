package httpapi

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"github.com/cuasd/cuasd/decode/remoteid"
	"github.com/cuasd/cuasd/ingest"
)

// remoteIDMaxBody bounds a decode request: the largest carrier frame (an
// 802.11 frame of ~2.3 kB) hex-encoded fits many times over.
const remoteIDMaxBody = 64 << 10

// RemoteIDDecodeRequest is the body of POST /v1/remote-id/decode: exactly
// one of Hex and Base64, and optionally the carrier the bytes are.
type RemoteIDDecodeRequest struct {
	Hex     *string `json:"hex"`
	Base64  *string `json:"base64"`
	Carrier string  `json:"carrier"`
	publishOption
}

// handleRemoteIDDecode serves POST /v1/remote-id/decode. The answer is a
// remoteid.Result; anything that cannot be decoded is a 422 naming the byte
// offset and the reason.
func handleRemoteIDDecode(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req RemoteIDDecodeRequest
		if !decodeJSON(w, r, &req, remoteIDMaxBody) {
			return
		}
		if code, detail, errs := req.publishOption.check(r, d); code != 0 {
			writeProblem(w, r, code, detail, errs...)
			return
		}
		if (req.Hex == nil) == (req.Base64 == nil) {
			writeProblem(w, r, http.StatusBadRequest, `send exactly one of "hex" and "base64"`,
				FieldError{Field: "hex", Message: "exactly one of hex and base64 is required"})
			return
		}
		carrier, ok := remoteid.ParseCarrier(req.Carrier)
		if !ok {
			writeProblem(w, r, http.StatusBadRequest, fmt.Sprintf("unknown carrier %q", req.Carrier),
				FieldError{Field: "carrier", Message: "one of " + strings.Join(remoteid.CarrierNames(), ", ")})
			return
		}
		field := "hex"
		var b []byte
		var err error
		if req.Hex != nil {
			b, err = remoteid.ParseHex(*req.Hex)
		} else {
			field = "base64"
			b, err = base64.StdEncoding.DecodeString(strings.TrimSpace(*req.Base64))
			if err == nil && len(b) == 0 {
				err = fmt.Errorf("no bytes")
			}
		}
		if err != nil {
			writeProblem(w, r, http.StatusUnprocessableEntity, field+" is not valid: "+err.Error(),
				FieldError{Field: field, Message: err.Error()})
			return
		}
		res, err := remoteid.DecodeResult(carrier, b)
		if err != nil {
			writeProblem(w, r, http.StatusUnprocessableEntity, "cannot decode as Remote ID: "+err.Error(),
				FieldError{Field: field, Message: err.Error()})
			return
		}
		c := ""
		if req.Carrier != "" && req.Carrier != "auto" {
			c = carrier.String()
		}
		writeDecoded(w, r, d, "remoteid", req.publishOption, []ingest.Frame{{Data: b, Carrier: c}}, res)
	}
}
