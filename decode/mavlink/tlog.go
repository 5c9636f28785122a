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
	key := r.p.keyPtr()
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
		j := i + tlogStampLen
		if isMagic(buf[j]) {
			off := int64(j)
			fr, n, v := examine(buf[j:], key)
			end := j + n
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
				r.p.incomplete = false
				r.resync = false
				r.pos = end
				return fr, int64(binary.BigEndian.Uint64(buf[i:j])), true
			case v == vBadCRC && !r.resync && nextOK:
				st.BadCRC++
				r.report(Problem{Kind: ProblemBadCRC, Offset: off, Version: fr.Version, MsgID: fr.MsgID, PayloadLen: uint8(len(fr.Payload))})
				st.SkippedBytes += int64(end - i)
				r.pos = end
				continue
			case v == vBadSig && !r.resync:
				st.BadSignature++
				r.report(Problem{Kind: ProblemBadSignature, Offset: off, Version: 2, MsgID: fr.MsgID, PayloadLen: uint8(len(fr.Payload))})
				st.SkippedBytes += int64(end - i)
				r.pos = end
				continue
			case !r.resync:
				switch v {
				case vHeaderErr:
					st.HeaderErrors++
					r.report(Problem{Kind: ProblemHeader, Offset: off, Version: 2, MsgID: fr.MsgID, Flags: fr.IncompatFlags})
				case vBadCRC:
					st.BadCRC++
					r.report(Problem{Kind: ProblemBadCRC, Offset: off, Version: fr.Version, MsgID: fr.MsgID, PayloadLen: uint8(len(fr.Payload))})
				case vNeedMore:
					r.p.incomplete = true
					r.report(Problem{Kind: ProblemIncomplete, Offset: off, Version: fr.Version, MsgID: fr.MsgID, Need: n, Have: len(buf) - j})
				case vUnknown:
					r.report(Problem{Kind: ProblemUnframed, Offset: off, Version: fr.Version, MsgID: fr.MsgID, PayloadLen: uint8(len(fr.Payload))})
				}
			}
		}
		// Lost step: resynchronise one byte further on.
		r.resync = true
		st.SkippedBytes++
		r.pos = i + 1
	}
}

func (r *TlogReader) report(pr Problem) {
	if r.OnProblem != nil {
		r.OnProblem(pr)
	}
}
