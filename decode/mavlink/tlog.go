package mavlink

import "encoding/binary"

// tlogStampLen is the length of a tlog entry's timestamp.
const tlogStampLen = 8

// TlogReader reads a telemetry log (.tlog, as written by QGroundControl,
// Mission Planner and MAVProxy): repeated entries of an 8-byte big-endian
// UNIX time in microseconds followed by one MAVLink frame. The zero
// TlogReader is ready to use; Reset gives it the file's bytes. Next
// allocates nothing.
//
// An entry whose frame fails its checksum is skipped whole when the next
// entry starts where its length says (the length byte is believed, as
// gomavlib and pymavlink do). When the entries lose step (a corrupt length,
// garbage, a cut), the reader resynchronises by scanning forward, one byte
// at a time, for a timestamp followed by a frame that verifies; candidates
// met while resynchronising are not counted as bad frames.
type TlogReader struct {
	// OnProblem, when set, is called with every counted rejected entry.
	OnProblem func(Problem)

	p      Parser // holds the key and the statistics
	buf    []byte
	pos    int
	resync bool
}

// SetKey sets the signing key; see Parser.SetKey.
func (r *TlogReader) SetKey(key []byte) error { return r.p.SetKey(key) }

// Reset starts reading the tlog bytes buf and clears the statistics.
func (r *TlogReader) Reset(buf []byte) {
	r.buf, r.pos, r.resync = buf, 0, false
	r.p.Reset(nil)
}

// Stats returns the counters since the last Reset.
func (r *TlogReader) Stats() Stats { return r.p.Stats() }

// Next returns the next frame and its entry's timestamp (UNIX
// microseconds); ok is false at the end of the log.
func (r *TlogReader) Next() (f Frame, usec int64, ok bool) {
	buf := r.buf
	st := &r.p.stats
	for {
		i := r.pos
		rest := len(buf) - i
		if rest == 0 {
			return Frame{}, 0, false
		}
		if rest < tlogStampLen+2 {
			// Too short for a timestamp and a frame header.
			if !r.resync {
				r.p.incomplete = true
				r.report(Problem{Kind: ProblemIncomplete, Offset: int64(i), Have: rest})
			}
			st.SkippedBytes += int64(rest)
			r.pos = len(buf)
			return Frame{}, 0, false
		}
		if j := i + tlogStampLen; isMagic(buf[j]) {
			fr, end, taken := r.entry(j)
			switch {
			case taken:
				return fr, int64(binary.BigEndian.Uint64(buf[i:j])), true
			case end > 0: // a real frame to skip whole
				st.SkippedBytes += int64(end - i)
				r.pos = end
				continue
			}
		}
		// Lost step: resynchronise one byte further on.
		r.resync = true
		st.SkippedBytes++
		r.pos = i + 1
	}
}

// entry examines the frame at buf[j] (after an entry's timestamp). It
// returns the frame when it is taken; otherwise end > 0 when the entry is
// a real frame to skip whole (bad checksum with the next entry in step, or
// a bad signature), and 0 when the reader has lost step.
func (r *TlogReader) entry(j int) (fr Frame, end int, taken bool) {
	buf, st := r.buf, &r.p.stats
	off := int64(j)
	fr, n, v := examine(buf[j:], r.p.keyPtr())
	end = j + n
	// nextOK: the following entry starts where this frame ends.
	nextOK := v != vNeedMore && v != vHeaderErr &&
		(end == len(buf) || (end+tlogStampLen < len(buf) && isMagic(buf[end+tlogStampLen])))
	switch {
	case v == vFrame || (v == vUnknown && nextOK):
		if v == vUnknown {
			st.Unknown++
		}
		fr.Offset = off
		st.Frames++
		r.p.incomplete, r.resync, r.pos = false, false, end
		return fr, end, true
	case v == vBadCRC && !r.resync && nextOK:
		st.BadCRC++
		r.report(Problem{Kind: ProblemBadCRC, Offset: off, Version: fr.Version, MsgID: fr.MsgID, PayloadLen: uint8(len(fr.Payload))})
		return fr, end, false
	case v == vBadSig && !r.resync:
		st.BadSignature++
		r.report(Problem{Kind: ProblemBadSignature, Offset: off, Version: 2, MsgID: fr.MsgID, PayloadLen: uint8(len(fr.Payload))})
		return fr, end, false
	case !r.resync:
		r.lostStep(fr, v, off, n, len(buf)-j)
	}
	return fr, 0, false
}

// lostStep reports why the entry at off is not a frame, once per loss of
// step.
func (r *TlogReader) lostStep(fr Frame, v verdict, off int64, n, have int) {
	st := &r.p.stats
	switch v {
	case vHeaderErr:
		st.HeaderErrors++
		r.report(Problem{Kind: ProblemHeader, Offset: off, Version: 2, MsgID: fr.MsgID, Flags: fr.IncompatFlags})
	case vBadCRC:
		st.BadCRC++
		r.report(Problem{Kind: ProblemBadCRC, Offset: off, Version: fr.Version, MsgID: fr.MsgID, PayloadLen: uint8(len(fr.Payload))})
	case vNeedMore:
		r.p.incomplete = true
		r.report(Problem{Kind: ProblemIncomplete, Offset: off, Version: fr.Version, MsgID: fr.MsgID, Need: n, Have: have})
	case vUnknown:
		r.report(Problem{Kind: ProblemUnframed, Offset: off, Version: fr.Version, MsgID: fr.MsgID, PayloadLen: uint8(len(fr.Payload))})
	}
}

func (r *TlogReader) report(pr Problem) {
	if r.OnProblem != nil {
		r.OnProblem(pr)
	}
}
