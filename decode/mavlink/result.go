package mavlink

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// Format names an input layout for Parse.
type Format string

// The input formats Parse reads.
const (
	// FormatRaw is a plain byte stream of concatenated frames.
	FormatRaw Format = "raw"
	// FormatTlog is a telemetry log: [8-byte big-endian UNIX µs][frame]...
	FormatTlog Format = "tlog"
)

// Options configure Parse.
type Options struct {
	// Format is FormatRaw (the default when empty) or FormatTlog.
	Format Format
	// Key is an optional 32-byte signing key; with it, signed frames are
	// verified and those that fail are dropped and counted.
	Key []byte
	// Summary leaves the per-frame list out of the result; the statistics
	// and per-name counts are still complete.
	Summary bool
	// MaxProblems bounds Result.Problems (default 16).
	MaxProblems int
}

// Result is what Parse found: the JSON answer of POST /v1/mavlink/parse
// and of `cuasd decode mavlink`.
type Result struct {
	// Frames lists the returned frames in stream order (nil with
	// Options.Summary; the JSON then has no "frames" key).
	Frames []FrameResult `json:"frames,omitempty"`
	Stats  ResultStats   `json:"stats"`
	// ByName counts returned frames by message name ("unknown" for ids
	// the dialect lacks).
	ByName map[string]int `json:"by_name"`
	// Problems are the first rejected candidates, for error details.
	Problems []Problem `json:"-"`
}

// ResultStats is the JSON form of Stats.
type ResultStats struct {
	Frames          int   `json:"frames"`
	BadCRC          int   `json:"bad_crc"`
	BadSignature    int   `json:"bad_signature"`
	HeaderErrors    int   `json:"header_errors"`
	SkippedBytes    int64 `json:"skipped_bytes"`
	IncompleteAtEnd bool  `json:"incomplete_at_end"`
}

// FrameResult is the JSON form of one decoded frame. Every decoded field is
// what the sender claims: MAVLink is unauthenticated unless signed and
// verified.
type FrameResult struct {
	Version       uint8            `json:"version"`
	Seq           uint8            `json:"seq"`
	SysID         uint8            `json:"sysid"`
	CompID        uint8            `json:"compid"`
	MsgID         uint32           `json:"msgid"`
	Name          string           `json:"name"`
	PayloadLen    int              `json:"payload_len"`
	IncompatFlags uint8            `json:"incompat_flags"`
	CompatFlags   uint8            `json:"compat_flags"`
	CRCOK         bool             `json:"crc_ok"`
	Signed        bool             `json:"signed"`
	Signature     *SignatureResult `json:"signature,omitempty"`
	// Fields holds the decoded fields, or for an unknown id
	// {"payload_hex": "..", "crc": "unverifiable: ..."}.
	Fields   json.RawMessage `json:"fields"`
	Offset   int64           `json:"offset"`
	TlogUsec *int64          `json:"tlog_usec,omitempty"`
}

// SignatureResult is the JSON form of a frame's signature block.
type SignatureResult struct {
	LinkID    uint8  `json:"link_id"`
	Timestamp uint64 `json:"timestamp"`
	Sig       string `json:"sig"`
	// SignatureValid is present only when a key was given; frames whose
	// signature fails are dropped, so it is then always true.
	SignatureValid *bool `json:"signature_valid,omitempty"`
}

// Parse parses a whole input (a raw stream or a tlog) and collects every
// frame, the statistics and the per-name counts. It never fails on bad
// data; it returns an *Error only for a bad key or format. A Result with no
// frame is the caller's cue to report the input as invalid, using Problems
// (see Result.NoFrameDetail).
func Parse(input []byte, opt Options) (*Result, error) {
	c := collector{opt: opt, res: &Result{ByName: map[string]int{}}, max: opt.MaxProblems}
	if c.max <= 0 {
		c.max = 16
	}
	var st Stats
	switch opt.Format {
	case FormatRaw, "":
		var p Parser
		if err := p.SetKey(opt.Key); err != nil {
			return nil, err
		}
		p.OnProblem = c.problem
		p.Reset(input)
		for f, ok := p.Next(); ok; f, ok = p.Next() {
			c.add(&f, 0, false)
		}
		st = p.Stats()
	case FormatTlog:
		var r TlogReader
		if err := r.SetKey(opt.Key); err != nil {
			return nil, err
		}
		r.OnProblem = c.problem
		r.Reset(input)
		for f, usec, ok := r.Next(); ok; f, usec, ok = r.Next() {
			c.add(&f, usec, true)
		}
		st = r.Stats()
	default:
		return nil, &Error{Op: "parse", Msg: fmt.Sprintf("unknown format %q (want raw or tlog)", opt.Format)}
	}
	c.res.Stats = ResultStats{
		Frames: st.Frames, BadCRC: st.BadCRC, BadSignature: st.BadSignature,
		HeaderErrors: st.HeaderErrors, SkippedBytes: st.SkippedBytes,
		IncompleteAtEnd: st.IncompleteAtEnd,
	}
	return c.res, nil
}

// collector gathers Parse's result frame by frame.
type collector struct {
	opt     Options
	res     *Result
	max     int
	msg     Message
	scratch []byte
}

func (c *collector) problem(p Problem) {
	if len(c.res.Problems) < c.max {
		c.res.Problems = append(c.res.Problems, p)
	}
}

// add counts f and, unless only a summary is wanted, describes it.
func (c *collector) add(f *Frame, usec int64, tlog bool) {
	c.res.ByName[f.Name()]++
	if c.opt.Summary {
		return
	}
	c.scratch = frameFields(c.scratch[:0], f, &c.msg)
	fr := FrameResult{
		Version: f.Version, Seq: f.Seq, SysID: f.SysID, CompID: f.CompID,
		MsgID: f.MsgID, Name: f.Name(), PayloadLen: len(f.Payload),
		IncompatFlags: f.IncompatFlags, CompatFlags: f.CompatFlags,
		CRCOK: f.CRCOK, Signed: f.Signed(),
		Fields: json.RawMessage(append([]byte(nil), c.scratch...)),
		Offset: f.Offset,
	}
	if link, ts, sig, ok := f.Signature(); ok {
		fr.Signature = &SignatureResult{LinkID: link, Timestamp: ts, Sig: hex.EncodeToString(sig)}
		if c.opt.Key != nil {
			valid := f.Sig == SignatureValid
			fr.Signature.SignatureValid = &valid
		}
	}
	if tlog {
		u := usec
		fr.TlogUsec = &u
	}
	c.res.Frames = append(c.res.Frames, fr)
}

// frameFields appends the JSON "fields" object of f.
func frameFields(dst []byte, f *Frame, m *Message) []byte {
	if m.Decode(f) {
		return m.AppendJSON(dst)
	}
	dst = append(dst, `{"payload_hex":"`...)
	dst = hex.AppendEncode(dst, f.Payload)
	return append(dst, `","crc":"unverifiable: message id not in the common/ardupilotmega dialects"}`...)
}

// NoFrameDetail describes, for an input in which no valid frame was found,
// what was found instead, e.g. "no valid MAVLink frame in 17 bytes: bad CRC
// at offset 0 (v1 msgid 0 HEARTBEAT, payload 9 bytes)".
func (r *Result) NoFrameDetail(inputLen int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "no valid MAVLink frame in %d bytes", inputLen)
	switch {
	case len(r.Problems) > 0:
		b.WriteString(": ")
		for i, p := range r.Problems {
			if i == 4 {
				fmt.Fprintf(&b, "; and %d more", len(r.Problems)-i)
				break
			}
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(p.Error())
		}
	case inputLen == 0:
		b.WriteString(": the input is empty")
	default:
		fmt.Fprintf(&b, ": no frame start byte (0xFE for MAVLink 1, 0xFD for MAVLink 2) in the input; %d bytes skipped", r.Stats.SkippedBytes)
	}
	return b.String()
}
