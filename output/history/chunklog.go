package history

import (
	"encoding/binary"
	"errors"
)

// The pending log's records (second format) say what an Insert appended
// to the chunks held in memory, so that the points are packed once — for
// the chunks — and the log copies the bytes: the first format packed every
// run of points a second time on its own, its track id, strings and
// absolute time and position again, ~80 bytes a fed fix where the chunk
// takes ~12 (issue 30: a fifth of the recorder's CPU). A record is a
// sequence of segments:
//
//	segTrack  uvarint index, string track id: index names the track in
//	          the segments that follow, until the log is emptied (an index
//	          named again names another track from then on)
//	segChunk  uvarint index, varint t0 (Unix ns), uvarint length + packed
//	          points: a new chunk of the track, starting at t0
//	segAppend uvarint index, uvarint length + packed points: appended to
//	          the track's newest chunk
//	segReset  uvarint index: the track's chunks are dropped (its points
//	          were packed again, the segChunks that follow hold them all)
//
// Read back (replayChunkLog), the segments rebuild the chunks the store
// held, which are unpacked into points and stored like any insert.
const (
	segTrack = 1 + iota
	segChunk
	segAppend
	segReset
)

// holdMark is what a track's held chunks were before an Insert held more
// points: the chunks, and the length of the newest one's packed points.
// From it the log's segments are made, and the chunks restored when the
// log's write fails.
type holdMark struct {
	t    *trackState
	held []*chunk
	off  int
}

func markOf(t *trackState) holdMark {
	m := holdMark{t: t, held: t.held}
	if k := len(t.held); k > 0 {
		m.off = len(t.held[k-1].data)
	}
	return m
}

// repacked reports whether the track's chunks were packed again (hold's
// rare path) rather than appended to.
func (m *holdMark) repacked() bool {
	k := len(m.held)
	return k > 0 && (len(m.t.held) < k || m.t.held[k-1] != m.held[k-1])
}

// holdLogged holds runs' points (s.mu held) and appends to the pending
// log what they added to the held chunks; when the write fails, the held
// chunks are as they were and the error is returned.
func (s *Store) holdLogged(runs []run) error {
	holding, heldN, next := len(s.holding), s.heldN, s.logNext
	marks := s.marks[:0]
	for _, r := range runs {
		if len(r.pts) > 0 {
			marks = append(marks, markOf(r.t))
			s.hold(r.t, r.pts)
		}
	}
	s.marks = marks
	return s.logHeld(holding, heldN, next)
}

// logHeld appends to the pending log what was held since s.marks; when
// the write fails, the held chunks are as they were at the marks, the
// store's counts holding, heldN and next, and the error is returned
// (s.mu held).
func (s *Store) logHeld(holding, heldN int, next uint64) error {
	marks := s.marks
	if len(marks) == 0 {
		return nil
	}
	s.pend = s.appendSegments(s.pend[:0], marks)
	err := s.log.append(s.pend)
	if err != nil {
		s.unhold(marks, holding, heldN, next)
	}
	clear(marks) // no chunk kept from one Insert to the next
	s.marks = marks[:0]
	return err
}

// appendSegments appends to b the segments of what was held since marks.
func (s *Store) appendSegments(b []byte, marks []holdMark) []byte {
	for i := range marks {
		m := &marks[i]
		t := m.t
		if t.logGen != s.logGen {
			t.logGen, t.logIdx = s.logGen, s.logNext
			s.logNext++
			b = append(b, segTrack)
			b = binary.AppendUvarint(b, t.logIdx)
			b = appendString(b, t.id)
		}
		k := len(m.held)
		if m.repacked() {
			b = append(b, segReset)
			b = binary.AppendUvarint(b, t.logIdx)
			k = 0
		} else if c := lastChunk(m.held); c != nil && len(c.data) > m.off {
			b = append(b, segAppend)
			b = binary.AppendUvarint(b, t.logIdx)
			b = appendBytes(b, c.data[m.off:])
		}
		for _, c := range t.held[k:] {
			b = append(b, segChunk)
			b = binary.AppendUvarint(b, t.logIdx)
			b = binary.AppendVarint(b, c.t0)
			b = appendBytes(b, c.data)
		}
	}
	return b
}

// unhold restores the held chunks to marks (newest first), and the
// store's counts of them; the tracks the failed record named are named
// again by the next (s.mu held).
func (s *Store) unhold(marks []holdMark, holding, heldN int, next uint64) {
	for i := len(marks) - 1; i >= 0; i-- {
		m := &marks[i]
		m.t.held = m.held
		if c := lastChunk(m.held); c != nil && len(c.data) != m.off {
			c.truncate(m.off)
		}
	}
	clear(s.holding[holding:])
	s.holding, s.heldN = s.holding[:holding], heldN
	s.logNext = next
	s.logGen++ // every track named again: the names of the failed record are not in the log
}

// truncate cuts c to its first off bytes of packed points, and its time
// range, box and packing state to theirs: they are unpacked and packed
// again (the packing is deterministic, so the bytes are the same).
func (c *chunk) truncate(off int) {
	c.data = c.data[:off]
	pts := heldPoints([]*chunk{c})
	*c = chunk{data: c.data[:0]}
	for i := range pts {
		c.add(&pts[i])
	}
}

func lastChunk(cs []*chunk) *chunk {
	if len(cs) == 0 {
		return nil
	}
	return cs[len(cs)-1]
}

// resetLog empties the pending log; the tracks it named are named again.
func (s *Store) resetLog() error {
	s.logGen++
	s.logNext = 0
	return s.log.reset()
}

func appendBytes(b, p []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

// replayedTrack is a track's chunks rebuilt from a pending log.
type replayedTrack struct {
	id     string
	t0s    []int64
	chunks [][]byte
}

// chunkReplay rebuilds the held chunks from a pending log's records.
type chunkReplay struct {
	names  []*replayedTrack // by the log's index
	byID   map[string]*replayedTrack
	tracks []*replayedTrack // in the order the log first names them
}

// replayChunkLog appends to dst the points of the chunks that records
// (of the second format) rebuild, by track.
func replayChunkLog(records [][]byte, dst []Point) ([]Point, error) {
	r := chunkReplay{byID: map[string]*replayedTrack{}}
	for _, rec := range records {
		if err := r.record(rec); err != nil {
			return dst, err
		}
	}
	for _, t := range r.tracks {
		for i, data := range t.chunks {
			if err := eachPoint(data, t.t0s[i], t.id, func(p *Point) error { dst = append(dst, *p); return nil }); err != nil {
				return dst, errors.Join(errCorrupt, err)
			}
		}
	}
	return dst, nil
}

// record applies one record's segments.
func (r *chunkReplay) record(b []byte) error {
	for len(b) > 0 {
		kind := b[0]
		idx, n := binary.Uvarint(b[1:])
		if n <= 0 {
			return errCorrupt
		}
		b = b[1+n:]
		if kind == segTrack {
			var err error
			if b, err = r.name(idx, b); err != nil {
				return err
			}
			continue
		}
		if idx >= uint64(len(r.names)) {
			return errCorrupt // a track the log has not named
		}
		var err error
		if b, err = r.segment(kind, r.names[idx], b); err != nil {
			return err
		}
	}
	return nil
}

// name reads a segTrack's id and names it idx (the next index, or one
// named before).
func (r *chunkReplay) name(idx uint64, b []byte) ([]byte, error) {
	id, b, err := readString(b)
	if err != nil || idx > uint64(len(r.names)) {
		return nil, errCorrupt
	}
	t := r.byID[id]
	if t == nil {
		t = &replayedTrack{id: id}
		r.byID[id] = t
		r.tracks = append(r.tracks, t)
	}
	if idx == uint64(len(r.names)) {
		r.names = append(r.names, t)
	} else {
		r.names[idx] = t
	}
	return b, nil
}

// segment applies a segChunk, segAppend or segReset of track t.
func (r *chunkReplay) segment(kind byte, t *replayedTrack, b []byte) ([]byte, error) {
	switch kind {
	case segReset:
		t.t0s, t.chunks = t.t0s[:0], t.chunks[:0]
		return b, nil
	case segChunk:
		t0, n := binary.Varint(b)
		if n <= 0 {
			return nil, errCorrupt
		}
		data, rest, err := readBytes(b[n:])
		if err != nil {
			return nil, err
		}
		// A copy: appends to it must not write over the records.
		t.t0s, t.chunks = append(t.t0s, t0), append(t.chunks, append([]byte(nil), data...))
		return rest, nil
	case segAppend:
		data, rest, err := readBytes(b)
		if err != nil || len(t.chunks) == 0 {
			return nil, errCorrupt
		}
		k := len(t.chunks) - 1
		t.chunks[k] = append(t.chunks[k], data...)
		return rest, nil
	}
	return nil, errCorrupt
}

func readBytes(b []byte) (data, rest []byte, err error) {
	l, n := binary.Uvarint(b)
	if n <= 0 || uint64(len(b)-n) < l {
		return nil, nil, errCorrupt
	}
	return b[n : n+int(l)], b[n+int(l):], nil
}
