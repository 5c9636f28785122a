package mavlink

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzParser checks the stream parser's invariants on any input: frames
// are in order, do not overlap, are the input's own bytes, verify their
// checksum when their id is known; every other byte is counted as skipped;
// a Stream fed in pieces finds the same frames.
func FuzzParser(f *testing.F) {
	for _, v := range loadVectors(f) {
		f.Add(mustHex(f, v.Hex), uint8(7))
	}
	f.Fuzz(func(t *testing.T, in []byte, piece uint8) {
		var p Parser
		p.Reset(in)
		var frames []Frame
		var m Message
		var framed int64
		end := int64(0)
		for {
			fr, ok := p.Next()
			if !ok {
				break
			}
			if fr.Offset < end || fr.Offset+int64(len(fr.Raw)) > int64(len(in)) {
				t.Fatalf("frame at %d (len %d) overlaps or overruns (end %d, input %d)", fr.Offset, len(fr.Raw), end, len(in))
			}
			if !bytes.Equal(in[fr.Offset:fr.Offset+int64(len(fr.Raw))], fr.Raw) {
				t.Fatal("frame bytes are not the input's")
			}
			if (fr.Def != nil) != fr.CRCOK {
				t.Fatal("CRCOK disagrees with Def")
			}
			if m.Decode(&fr) {
				if js := m.AppendJSON(nil); !json.Valid(js) {
					t.Fatalf("invalid JSON %s", js)
				}
			}
			end = fr.Offset + int64(len(fr.Raw))
			framed += int64(len(fr.Raw))
			frames = append(frames, fr)
		}
		st := p.Stats()
		if st.Frames != len(frames) || st.SkippedBytes != int64(len(in))-framed {
			t.Fatalf("stats %+v with %d frames of %d bytes in %d", st, len(frames), framed, len(in))
		}
		n := int(piece)%64 + 1
		var s Stream
		var got int
		check := func(fr Frame) {
			if got >= len(frames) || fr.Offset != frames[got].Offset || !bytes.Equal(fr.Raw, frames[got].Raw) {
				t.Fatalf("stream frame %d at %d differs from the parser's", got, fr.Offset)
			}
			got++
		}
		for i := 0; i < len(in); i += n {
			s.Write(in[i:min(i+n, len(in))])
			for {
				fr, ok := s.Next()
				if !ok {
					break
				}
				check(fr)
			}
		}
		for {
			fr, ok := s.FlushNext()
			if !ok {
				break
			}
			check(fr)
		}
		if got != len(frames) {
			t.Fatalf("stream found %d frames, parser %d", got, len(frames))
		}
		if res, err := Parse(in, Options{}); err != nil || res.Stats.Frames != len(frames) {
			t.Fatalf("Parse: %v %+v", err, res)
		}
	})
}

// FuzzTlog checks the tlog reader on any input: entries in order, frames
// are the input's bytes, every byte is either a returned entry or skipped.
func FuzzTlog(f *testing.F) {
	stream, _ := mixedStream(f)
	tl := tlogOf(stream[:3000])
	f.Add(tl)
	f.Add(tl[:len(tl)-7])
	f.Add(append([]byte{1, 2, 3}, tl[:500]...))
	f.Fuzz(func(t *testing.T, in []byte) {
		var r TlogReader
		r.Reset(in)
		var framed, end int64
		n := 0
		for {
			fr, _, ok := r.Next()
			if !ok {
				break
			}
			if fr.Offset < end+tlogStampLen || !bytes.Equal(in[fr.Offset:fr.Offset+int64(len(fr.Raw))], fr.Raw) {
				t.Fatalf("entry at %d out of place", fr.Offset)
			}
			end = fr.Offset + int64(len(fr.Raw))
			framed += tlogStampLen + int64(len(fr.Raw))
			n++
		}
		st := r.Stats()
		if st.Frames != n || st.SkippedBytes != int64(len(in))-framed {
			t.Fatalf("stats %+v, %d entries of %d bytes in %d", st, n, framed, len(in))
		}
		if res, err := Parse(in, Options{Format: FormatTlog}); err != nil || res.Stats.Frames != n {
			t.Fatalf("Parse: %v", err)
		}
	})
}

// FuzzMessageJSON decodes any payload as any message: the JSON must be
// valid and zero-extension must never read past the payload.
func FuzzMessageJSON(f *testing.F) {
	f.Add(uint32(0), []byte{1, 2, 3})
	f.Add(uint32(253), []byte("\x04PreArm: \xff\xfe bad utf8 \"quoted\" <tag>"))
	f.Add(uint32(12900), bytes.Repeat([]byte{0xff}, 300))
	f.Fuzz(func(t *testing.T, id uint32, payload []byte) {
		msgs := Messages()
		def := &msgs[int(id%uint32(len(msgs)))]
		var m Message
		m.DecodePayload(def, payload)
		js := m.AppendJSON(nil)
		if !json.Valid(js) {
			t.Fatalf("%s: invalid JSON %s", def.Name, js)
		}
		var obj map[string]any
		if err := json.Unmarshal(js, &obj); err != nil || len(obj) != len(def.Fields) {
			t.Fatalf("%s: %v, %d keys for %d fields", def.Name, err, len(obj), len(def.Fields))
		}
	})
}
