package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	"github.com/cuasd/cuasd/gate"
)

// DefaultMaxBody is the request body limit of endpoints that do not set
// their own: 1 MiB.
const DefaultMaxBody = 1 << 20

// FieldError names one invalid input field in a validation problem
// (gate's type: one field-error type in all of cuasd).
type FieldError = gate.FieldError

// Problem is an RFC 9457 problem details object, the body of every non-2xx
// answer.
type Problem struct {
	Type     string       `json:"type"`
	Title    string       `json:"title"`
	Status   int          `json:"status"`
	Detail   string       `json:"detail,omitempty"`
	Instance string       `json:"instance,omitempty"`
	Errors   []FieldError `json:"errors,omitempty"`
}

// problemTypeBase is where the problem types are documented.
const problemTypeBase = "https://github.com/cuasd/cuasd/blob/main/docs/ERRORS.md#"

// problemSlugs gives each status we answer with a stable, documented type.
var problemSlugs = map[int]string{
	http.StatusBadRequest:                  "invalid-request",
	http.StatusUnauthorized:                "unauthorized",
	http.StatusForbidden:                   "forbidden",
	http.StatusNotFound:                    "not-found",
	http.StatusMethodNotAllowed:            "method-not-allowed",
	http.StatusConflict:                    "conflict",
	http.StatusRequestEntityTooLarge:       "too-large",
	http.StatusUnsupportedMediaType:        "unsupported-media-type",
	http.StatusUnprocessableEntity:         "undecodable",
	http.StatusTooManyRequests:             "rate-limited",
	http.StatusRequestHeaderFieldsTooLarge: "headers-too-large",
	http.StatusInternalServerError:         "internal",
	http.StatusNotImplemented:              "not-implemented",
	http.StatusServiceUnavailable:          "unavailable",
}

// writeJSON writes v as a JSON body with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// A value we built ourselves failed to encode: a bug, not bad input.
		slog.Error("encode response", "err", err)
		b = []byte(`{"type":"` + problemTypeBase + `internal","title":"Internal Server Error","status":500,"detail":"the response could not be encoded"}`)
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write(b)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// writeProblem writes an RFC 9457 application/problem+json answer. detail
// should tell the caller what to change; errs name the invalid fields.
func writeProblem(w http.ResponseWriter, r *http.Request, status int, detail string, errs ...FieldError) {
	slug, ok := problemSlugs[status]
	if !ok {
		slug = strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "-"))
	}
	p := Problem{
		Type:   problemTypeBase + slug,
		Title:  http.StatusText(status),
		Status: status,
		Detail: detail,
		Errors: errs,
	}
	if r != nil {
		p.Instance = r.URL.Path
	}
	b, _ := json.Marshal(p)
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// decodeJSON reads a JSON object request body into dst. It insists on an
// application/json Content-Type (415), at most maxBytes of body (413; 0
// means DefaultMaxBody), well-formed JSON with no unknown fields, correct
// types and nothing after the object (400 naming the field). On failure it
// has written the problem answer and returns false.
func decodeJSON(w http.ResponseWriter, r *http.Request, dst any, maxBytes int64) bool {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBody
	}
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		writeProblem(w, r, http.StatusUnsupportedMediaType,
			fmt.Sprintf("Content-Type must be application/json, got %q", ct))
		return false
	}
	if r.ContentLength > maxBytes {
		writeProblem(w, r, http.StatusRequestEntityTooLarge,
			fmt.Sprintf("request body of %d bytes exceeds the limit of %d bytes", r.ContentLength, maxBytes))
		return false
	}
	raw, err := readBody(http.MaxBytesReader(w, r.Body, maxBytes), r.ContentLength)
	if err != nil {
		writeDecodeError(w, r, err, maxBytes)
		return false
	}
	if d := jsonDepth(raw); d > MaxJSONDepth {
		writeProblem(w, r, http.StatusBadRequest,
			fmt.Sprintf("JSON nested %d levels deep; at most %d are accepted", d, MaxJSONDepth))
		return false
	}
	// Every request body is an object. encoding/json decodes null into a
	// struct as a no-op, so without this check `null` would act on a zero
	// request (PUT /v1/allowlist with null emptied the list).
	// Malformed bodies are left to the decoder, which names the offset.
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) > 0 && jsonValueKind(t[0]) != "" {
		writeProblem(w, r, http.StatusBadRequest,
			fmt.Sprintf("request body must be a JSON object, got %s", jsonValueKind(t[0])),
			FieldError{Field: "(body)", Message: "must be a JSON object"})
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		writeDecodeError(w, r, err, maxBytes)
		return false
	}
	// Exactly one JSON value: trailing data is a malformed request.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeDecodeError(w, r, err, maxBytes)
			return false
		}
		writeProblem(w, r, http.StatusBadRequest, "request body must hold exactly one JSON value")
		return false
	}
	return true
}

// readBody reads the whole body into one buffer of the declared length
// when there is one (io.ReadAll would grow it by doubling: twice the
// memory for a large request).
func readBody(rd io.Reader, n int64) ([]byte, error) {
	if n <= 0 {
		return io.ReadAll(rd)
	}
	buf := bytes.NewBuffer(make([]byte, 0, n+bytes.MinRead)) // room for the EOF read
	_, err := buf.ReadFrom(rd)
	return buf.Bytes(), err
}

func writeDecodeError(w http.ResponseWriter, r *http.Request, err error, maxBytes int64) {
	var (
		mbe *http.MaxBytesError
		se  *json.SyntaxError
		ute *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &mbe):
		writeProblem(w, r, http.StatusRequestEntityTooLarge,
			fmt.Sprintf("request body exceeds the limit of %d bytes", maxBytes))
	case errors.As(err, &se):
		writeProblem(w, r, http.StatusBadRequest,
			fmt.Sprintf("malformed JSON at byte offset %d: %v", se.Offset, err))
	case errors.Is(err, io.EOF):
		writeProblem(w, r, http.StatusBadRequest, "request body is empty; a JSON object is required")
	case errors.Is(err, io.ErrUnexpectedEOF):
		writeProblem(w, r, http.StatusBadRequest, "malformed JSON: the body ends in the middle of a value")
	case errors.As(err, &ute):
		// An embedded request struct shows up as its Go type name
		// ("Request.hex"); our JSON names are lower case, so drop the
		// capitalised segments.
		parts := strings.Split(ute.Field, ".")
		for len(parts) > 1 && parts[0] != "" && parts[0][0] >= 'A' && parts[0][0] <= 'Z' {
			parts = parts[1:]
		}
		field := strings.Join(parts, ".")
		if field == "" {
			field = "(body)"
		}
		writeProblem(w, r, http.StatusBadRequest,
			fmt.Sprintf("field %q must be %s, got JSON %s", field, jsonKind(ute.Type.Kind().String()), ute.Value),
			FieldError{Field: field, Message: fmt.Sprintf("must be %s, got %s", jsonKind(ute.Type.Kind().String()), ute.Value)})
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		writeProblem(w, r, http.StatusBadRequest, fmt.Sprintf("unknown field %q", name),
			FieldError{Field: name, Message: "unknown field"})
	default:
		writeProblem(w, r, http.StatusBadRequest, "malformed JSON: "+err.Error())
	}
}

// MaxJSONDepth bounds the nesting of request bodies: no endpoint needs
// more, and deep nesting is a cheap way to make a decoder work hard.
const MaxJSONDepth = 32

// jsonDepth returns the deepest nesting of objects and arrays in b,
// skipping strings. Malformed JSON is left to the decoder to report.
func jsonDepth(b []byte) int {
	depth, deepest, inStr, esc := 0, 0, false, false
	for _, c := range b {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// jsonValueKind names the JSON type, other than an object, of a value
// starting with c; "" for an object or malformed JSON.
func jsonValueKind(c byte) string {
	switch c {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '"':
		return "a string"
	case '[':
		return "an array"
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return "a number"
	}
	return ""
}

// jsonKind turns a Go kind into the JSON type a caller should send.
func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return "a number"
	}
	return "a value of another type"
}

// writeJSONStatus is writeJSON with an explicit content type, for bodies
// such as problem extensions that writeProblem does not model.
func writeJSONStatus(w http.ResponseWriter, status int, contentType string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeJSON(w, status, v) // reports the encoding failure
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
