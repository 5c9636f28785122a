package mavlink

// Stats counts what a parser has seen. Frames counts returned frames
// (Unknown of them with an id the dialect lacks); the other counters count
// rejected candidates. A candidate that starts inside a frame already
// counted as bad (found while rescanning it) is not counted again, so the
// counters stay comparable with MAVLink's C parser, which never looks
// inside a bad frame.
type Stats struct {
	Frames       int
	Unknown      int
	BadCRC       int
	BadSignature int
	HeaderErrors int
	// SkippedBytes counts input bytes that are not part of a returned frame
	// (nor, for a tlog, of a returned entry's timestamp).
	SkippedBytes int64
	// IncompleteAtEnd reports that the input ended inside a candidate frame
	// and no frame was found after that candidate's start.
	IncompleteAtEnd bool
}

// Parser finds MAVLink 1 and 2 frames in a byte stream. It verifies each
// frame's checksum with the message's CRC_EXTRA and, when a key is set, the
// signature of signed frames. Garbage between frames is skipped and counted.
// After a false start (a magic byte that does not begin a valid frame: bad
// checksum, unknown incompatibility flags, a length running past the end of
// the input) it rescans from the byte after that magic byte, so that a real
// frame hidden inside the false one is not lost.
//
// The zero Parser is ready to use; Reset gives it a buffer. Next allocates
// nothing. A Parser is not safe for concurrent use.
type Parser struct {
	// OnProblem, when set, is called with every counted rejected candidate.
	OnProblem func(Problem)

	key    [KeyLen]byte
	hasKey bool

	buf  []byte
	pos  int
	base int64 // stream offset of buf[0]

	badEnd     int64 // stream offset where the last counted bad frame ends
	incomplete bool  // an incomplete candidate is pending at end of input
	stats      Stats
}

// SetKey sets the 32-byte MAVLink 2 signing key used to verify signed
// frames; a nil key turns verification off. Frames that fail verification
// are dropped and counted as bad signatures. Unsigned frames are still
// returned (Frame.Sig says Unsigned): an observer wants to see them.
func (p *Parser) SetKey(key []byte) error {
	if key == nil {
		p.hasKey = false
		return nil
	}
	if len(key) != KeyLen {
		return &Error{Op: "key", Msg: "signing key must be 32 bytes"}
	}
	copy(p.key[:], key)
	p.hasKey = true
	return nil
}

func (p *Parser) keyPtr() *[KeyLen]byte {
	if p.hasKey {
		return &p.key
	}
	return nil
}

// Reset starts parsing buf, a complete input (a candidate running past its
// end is a false start), and clears the statistics.
func (p *Parser) Reset(buf []byte) {
	p.buf, p.pos, p.base = buf, 0, 0
	p.badEnd, p.incomplete = 0, false
	p.stats = Stats{}
}

// Stats returns the counters since the last Reset.
func (p *Parser) Stats() Stats {
	s := p.stats
	s.IncompleteAtEnd = p.incomplete
	return s
}

// Next returns the next frame of the buffer given to Reset; ok is false at
// the end of the buffer.
func (p *Parser) Next() (f Frame, ok bool) {
	return p.next(true)
}

// next scans p.buf from p.pos. When atEOF is false a candidate running past
// the end of the buffer stops the scan with p.pos at its magic byte, waiting
// for more data (see Stream).
func (p *Parser) next(atEOF bool) (Frame, bool) {
	buf := p.buf
	key := p.keyPtr()
	for {
		i := p.pos
		for i < len(buf) && !isMagic(buf[i]) {
			i++
		}
		p.stats.SkippedBytes += int64(i - p.pos)
		p.pos = i
		if i == len(buf) {
			return Frame{}, false
		}
		off := p.base + int64(i)
		f, n, v := examine(buf[i:], key)
		if v == vFrame { // the common case, decided without judge
			return p.accept(f, i, n, off), true
		}
		switch p.judge(f, v, i, n, off, atEOF, key) {
		case stepAccept:
			return p.accept(f, i, n, off), true
		case stepWait:
			return Frame{}, false
		case stepSkipFrame:
			p.stats.SkippedBytes += int64(n)
			p.pos = i + n
			continue
		}
		// False start: rescan from the byte after the magic byte.
		p.stats.SkippedBytes++
		p.pos = i + 1
	}
}

// step is what next does with a candidate that examine did not accept
// outright.
type step uint8

const (
	stepFalseStart step = iota // rescan from the byte after its magic byte
	stepAccept                 // take it as a frame
	stepWait                   // stop: more data may complete it
	stepSkipFrame              // a real frame to drop whole (bad signature)
)

// judge decides on the candidate of n bytes at buf[i] (stream offset off)
// with verdict v, counting and reporting the problems.
func (p *Parser) judge(f Frame, v verdict, i, n int, off int64, atEOF bool, key *[32]byte) step {
	switch v {
	case vUnknown:
		// An unknown id's checksum cannot be verified, so accept it only
		// when it is corroborated by what follows: the end of the data,
		// or the magic byte of a next frame. Otherwise random bytes after
		// a stray magic byte would be taken for a frame and swallow the
		// real frames behind them.
		buf, end := p.buf, i+n
		if end == len(buf) && !atEOF {
			// Wait for the next byte (or the end of the stream) to
			// corroborate, so that a Stream decides as Parser does.
			return stepWait
		}
		if (end == len(buf) || isMagic(buf[end])) && !hidesFrame(buf[i+1:end], key) {
			p.stats.Unknown++
			return stepAccept
		}
		p.problem(Problem{Kind: ProblemUnframed, Offset: off, Version: f.Version, MsgID: f.MsgID, PayloadLen: uint8(len(f.Payload))}, off)
	case vNeedMore:
		if !atEOF {
			return stepWait
		}
		// The input ends inside this candidate: whatever it was, it
		// cannot complete, so rescan the bytes after its magic byte.
		if !p.incomplete {
			p.incomplete = true
			p.report(Problem{Kind: ProblemIncomplete, Offset: off, Version: f.Version, MsgID: f.MsgID, Need: n, Have: len(p.buf) - i})
		}
	case vBadCRC:
		if off >= p.badEnd {
			p.stats.BadCRC++
			p.badEnd = off + int64(n)
			p.report(Problem{Kind: ProblemBadCRC, Offset: off, Version: f.Version, MsgID: f.MsgID, PayloadLen: uint8(len(f.Payload))})
		}
	case vBadSig:
		// The checksum held, so the frame is real: skip all of it.
		p.stats.BadSignature++
		p.report(Problem{Kind: ProblemBadSignature, Offset: off, Version: 2, MsgID: f.MsgID, PayloadLen: uint8(len(f.Payload))})
		return stepSkipFrame
	case vHeaderErr:
		if off >= p.badEnd {
			p.stats.HeaderErrors++
			p.report(Problem{Kind: ProblemHeader, Offset: off, Version: 2, MsgID: f.MsgID, Flags: f.IncompatFlags})
		}
	}
	return stepFalseStart
}

func (p *Parser) accept(f Frame, i, n int, off int64) Frame {
	f.Offset = off
	p.pos = i + n
	p.stats.Frames++
	p.incomplete = false
	return f
}

// problem reports an uncounted kind of problem (an unframed unknown id)
// unless it lies inside a frame already counted as bad.
func (p *Parser) problem(pr Problem, off int64) {
	if off >= p.badEnd {
		p.report(pr)
	}
}

func (p *Parser) report(pr Problem) {
	if p.OnProblem != nil {
		p.OnProblem(pr)
	}
}

// Stream parses a byte stream that arrives in pieces (UDP datagrams, TCP
// reads, a serial port): Write appends data, Next returns the frames found
// so far. A candidate frame cut at the end of the data is kept until more
// data arrives. Frames returned by Next point into the Stream's buffer and
// are valid until the next Write. The zero Stream is ready to use.
type Stream struct {
	p Parser
}

// SetKey sets the signing key; see Parser.SetKey.
func (s *Stream) SetKey(key []byte) error { return s.p.SetKey(key) }

// SetOnProblem sets the function called with each counted rejected
// candidate.
func (s *Stream) SetOnProblem(fn func(Problem)) { s.p.OnProblem = fn }

// Write appends data to the stream. It compacts the buffer first, so it
// allocates only while the buffer grows to its working size. It never fails.
func (s *Stream) Write(data []byte) (int, error) {
	p := &s.p
	if p.pos > 0 {
		rest := copy(p.buf, p.buf[p.pos:])
		p.base += int64(p.pos)
		p.buf = p.buf[:rest]
		p.pos = 0
	}
	p.buf = append(p.buf, data...)
	return len(data), nil
}

// Next returns the next complete frame, or ok false when the buffered data
// holds none (more may follow after the next Write).
func (s *Stream) Next() (f Frame, ok bool) { return s.p.next(false) }

// FlushNext declares the end of the stream: a pending incomplete candidate
// is rescanned as a false start, and the frames hidden in it, if any, are
// returned by repeated calls until ok is false.
func (s *Stream) FlushNext() (f Frame, ok bool) { return s.p.next(true) }

// Buffered returns the number of bytes held waiting for the rest of a
// frame.
func (s *Stream) Buffered() int { return len(s.p.buf) - s.p.pos }

// Stats returns the stream's counters.
func (s *Stream) Stats() Stats {
	st := s.p.stats
	st.IncompleteAtEnd = s.p.Buffered() > 0
	return st
}

// Buffered returns the bytes not yet consumed.
func (p *Parser) Buffered() int { return len(p.buf) - p.pos }

// hidesFrame reports whether a frame whose checksum verifies starts
// somewhere in b. It runs only for frames of unknown ids.
func hidesFrame(b []byte, key *[KeyLen]byte) bool {
	for j := range b {
		if isMagic(b[j]) {
			if _, _, v := examine(b[j:], key); v == vFrame || v == vBadSig {
				return true
			}
		}
	}
	return false
}
