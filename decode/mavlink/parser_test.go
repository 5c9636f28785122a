package mavlink

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// collect parses b as a complete input.
func collect(b []byte, key []byte) ([]Frame, Stats) {
	var p Parser
	p.SetKey(key)
	p.Reset(b)
	var out []Frame
	for {
		f, ok := p.Next()
		if !ok {
			return out, p.Stats()
		}
		out = append(out, f)
	}
}

// TestStreamMatchesParser feeds the mixed stream to a Stream in pieces of
// every size from 1 to 300 bytes (and random sizes) and checks that it
// returns the same frames as the one-shot Parser.
func TestStreamMatchesParser(t *testing.T) {
	stream, _ := mixedStream(t)
	stream = stream[:20000]
	want, wantStats := collect(stream, nil)
	rng := rand.New(rand.NewPCG(7, 8))
	for size := 1; size <= 301; size++ {
		var s Stream
		var got []Frame
		var offsets []int64
		for i := 0; i < len(stream); {
			n := size
			if size == 301 {
				n = 1 + rng.IntN(600)
			}
			s.Write(stream[i:min(i+n, len(stream))])
			i += n
			for {
				f, ok := s.Next()
				if !ok {
					break
				}
				got = append(got, Frame{MsgID: f.MsgID, Seq: f.Seq, Raw: append([]byte(nil), f.Raw...)})
				offsets = append(offsets, f.Offset)
			}
		}
		for {
			f, ok := s.FlushNext()
			if !ok {
				break
			}
			got = append(got, Frame{MsgID: f.MsgID, Seq: f.Seq, Raw: append([]byte(nil), f.Raw...)})
			offsets = append(offsets, f.Offset)
		}
		if len(got) != len(want) {
			t.Fatalf("piece size %d: %d frames, want %d", size, len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i].Raw, want[i].Raw) || offsets[i] != want[i].Offset {
				t.Fatalf("piece size %d: frame %d differs (offset %d, want %d)", size, i, offsets[i], want[i].Offset)
			}
		}
		st := s.Stats()
		if st.Frames != wantStats.Frames || st.BadCRC != wantStats.BadCRC || st.SkippedBytes != wantStats.SkippedBytes {
			t.Fatalf("piece size %d: stats %+v, want %+v", size, st, wantStats)
		}
	}
}

// vectorHex returns a vector's bytes by id.
func vectorBytes(t *testing.T, id string) []byte {
	t.Helper()
	for _, v := range loadVectors(t) {
		if v.ID == id {
			return mustHex(t, v.Hex)
		}
	}
	t.Fatalf("no vector %s", id)
	return nil
}

// TestRescan checks resynchronisation cases built from the C library's
// frames: the frames must come back byte for byte and the counters must
// say what was rejected.
func TestRescan(t *testing.T) {
	hb1 := vectorBytes(t, "HEARTBEAT_v1")
	gpi2 := vectorBytes(t, "GLOBAL_POSITION_INT_v2")
	signed := vectorBytes(t, "HEARTBEAT_v2_signed")
	badCRC := vectorBytes(t, "bad_crc_v1_heartbeat")
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	// A false MAVLink 2 start whose length (40) covers the next frame,
	// with zero flags, so it is a full candidate that fails its checksum.
	falseV2 := []byte{0xFD, 40, 0, 0, 0, 1, 1, 0, 0, 0}
	tests := []struct {
		name       string
		in         []byte
		frames     [][]byte
		bad, hdr   int
		skipped    int64
		incomplete bool
	}{
		{"garbage around", cat([]byte{1, 2, 3}, hb1, []byte{0x55, 0xAA}, gpi2, []byte{9}), [][]byte{hb1, gpi2}, 0, 0, 6, false},
		// FE FD: a v1 start claiming 253 bytes (runs past the end), then a v2
		// start whose flags byte (09) is invalid.
		{"stray magic before frame", cat([]byte{0xFE, 0xFD}, hb1), [][]byte{hb1}, 0, 1, 2, false},
		{"frame hidden in a false start", cat(falseV2, hb1, bytes.Repeat([]byte{0x11}, 40-len(hb1)), []byte{0x12, 0x34}, gpi2),
			[][]byte{hb1, gpi2}, 1, 0, int64(len(falseV2) + 40 - len(hb1) + 2), false},
		{"bad CRC then good", cat(badCRC, signed), [][]byte{signed}, 1, 0, int64(len(badCRC)), false},
		{"unknown flags then good", cat([]byte{0xFD, 9, 0x80, 0}, hb1), [][]byte{hb1}, 0, 1, 4, false},
		{"frame cut at the end", cat(hb1, gpi2[:20]), [][]byte{hb1}, 0, 0, 20, true},
		{"frame behind a cut length", cat([]byte{0xFE, 200}, gpi2), [][]byte{gpi2}, 0, 0, 2, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			frames, st := collect(tc.in, nil)
			if len(frames) != len(tc.frames) {
				t.Fatalf("%d frames, want %d (%+v)", len(frames), len(tc.frames), st)
			}
			for i, f := range frames {
				if !bytes.Equal(f.Raw, tc.frames[i]) || !f.CRCOK {
					t.Errorf("frame %d: % x", i, f.Raw)
				}
			}
			if st.BadCRC != tc.bad || st.HeaderErrors != tc.hdr || st.SkippedBytes != tc.skipped || st.IncompleteAtEnd != tc.incomplete {
				t.Errorf("stats %+v; want bad %d hdr %d skipped %d incomplete %v", st, tc.bad, tc.hdr, tc.skipped, tc.incomplete)
			}
		})
	}
}

// TestUnknownID covers an id the dialect lacks: reported with its raw
// payload when the next frame (or the end) corroborates its length, taken
// for a false start otherwise.
func TestUnknownID(t *testing.T) {
	hb1 := vectorBytes(t, "HEARTBEAT_v1")
	unknown := []byte{0xFD, 3, 0, 0, 7, 1, 1, 0xEF, 0xCD, 0xAB, 0xAA, 0xBB, 0xCC, 0x12, 0x34}
	if Lookup(0xABCDEF) != nil {
		t.Fatal("0xABCDEF is in the dialect")
	}
	res, err := Parse(append(append([]byte(nil), unknown...), hb1...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Frames) != 2 || res.Frames[0].Name != "unknown" || res.Frames[0].CRCOK || res.Frames[0].MsgID != 0xABCDEF ||
		res.ByName["unknown"] != 1 || res.ByName["HEARTBEAT"] != 1 {
		t.Fatalf("%+v", res)
	}
	var fields map[string]string
	if err := json.Unmarshal(res.Frames[0].Fields, &fields); err != nil {
		t.Fatal(err)
	}
	if fields["payload_hex"] != "aabbcc" || !strings.HasPrefix(fields["crc"], "unverifiable") {
		t.Errorf("fields %v", fields)
	}
	// Followed by garbage: not corroborated, so a false start.
	frames, st := collect(append(append([]byte(nil), unknown...), 0x01, 0x02), nil)
	if len(frames) != 0 || st.SkippedBytes != int64(len(unknown)+2) {
		t.Errorf("uncorroborated unknown id: %d frames, %+v", len(frames), st)
	}
	// Covering a frame that verifies: refused, the hidden frame wins.
	cover := []byte{0xFD, byte(len(hb1)), 0, 0, 7, 1, 1, 0xEF, 0xCD, 0xAB}
	in := append(append(append([]byte(nil), cover...), hb1...), 0x00, 0x00)
	frames, _ = collect(in, nil)
	if len(frames) != 1 || !bytes.Equal(frames[0].Raw, hb1) {
		t.Errorf("unknown id covering a frame: %d frames", len(frames))
	}
}

// TestSignatureVerification: with the key, signed frames verify and are
// marked valid; a tampered signature is dropped and counted; unsigned
// frames still pass (Sig Unsigned).
func TestSignatureVerification(t *testing.T) {
	vs := loadVectors(t)
	var key []byte
	for _, v := range vs {
		if v.ID == "HEARTBEAT_v2_signed" {
			key = mustHex(t, v.SigningKeyHex)
		}
	}
	in := bytes.Join([][]byte{vectorBytes(t, "HEARTBEAT_v2_signed"), vectorBytes(t, "HEARTBEAT_v2_signed_bad_signature"),
		vectorBytes(t, "HEARTBEAT_v1"), vectorBytes(t, "GLOBAL_POSITION_INT_v2_signed")}, nil)
	frames, st := collect(in, key)
	if len(frames) != 3 || st.BadSignature != 1 {
		t.Fatalf("%d frames, %+v", len(frames), st)
	}
	if frames[0].Sig != SignatureValid || frames[1].Sig != Unsigned || frames[2].Sig != SignatureValid {
		t.Errorf("sig states %v %v %v", frames[0].Sig, frames[1].Sig, frames[2].Sig)
	}
	frames, st = collect(in, nil)
	if len(frames) != 4 || st.BadSignature != 0 || frames[0].Sig != SignatureUnverified {
		t.Errorf("without key: %d frames, %+v", len(frames), st)
	}
	// Sign reproduces the C library's signature.
	raw := vectorBytes(t, "HEARTBEAT_v2_signed")
	var k [KeyLen]byte
	copy(k[:], key)
	if s := Sign(raw, &k); !bytes.Equal(s[:], raw[len(raw)-6:]) {
		t.Errorf("Sign % x, frame has % x", s, raw[len(raw)-6:])
	}
	var p Parser
	if err := p.SetKey([]byte{1, 2, 3}); err == nil {
		t.Error("short key accepted")
	}
}

// TestZeroAllocs holds the hot path to its promise.
func TestZeroAllocs(t *testing.T) {
	stream, _ := mixedStream(t)
	var p Parser
	var m Message
	buf := make([]byte, 0, 8192)
	allocs := testing.AllocsPerRun(5, func() {
		p.Reset(stream)
		for {
			f, ok := p.Next()
			if !ok {
				break
			}
			if m.Decode(&f) {
				buf = m.AppendJSON(buf[:0])
			}
		}
	})
	if allocs != 0 {
		t.Errorf("Parser.Next + Decode + AppendJSON: %v allocs per stream", allocs)
	}
	var s Stream
	s.Write(stream[:4096])
	for {
		if _, ok := s.Next(); !ok {
			break
		}
	}
	allocs = testing.AllocsPerRun(5, func() {
		for i := 4096; i+1400 <= 4096+1400*10; i += 1400 {
			s.Write(stream[i : i+1400])
			for {
				if _, ok := s.Next(); !ok {
					break
				}
			}
		}
	})
	if allocs != 0 {
		t.Errorf("Stream steady state: %v allocs", allocs)
	}
	tl := tlogOf(stream[:20000])
	var r TlogReader
	allocs = testing.AllocsPerRun(5, func() {
		r.Reset(tl)
		for {
			if _, _, ok := r.Next(); !ok {
				break
			}
		}
	})
	if allocs != 0 {
		t.Errorf("TlogReader.Next: %v allocs", allocs)
	}
}

// tlogOf wraps every frame of a raw stream in a tlog entry with
// increasing timestamps.
func tlogOf(stream []byte) []byte {
	frames, _ := collect(stream, nil)
	var out []byte
	for i, f := range frames {
		u := uint64(1_700_000_000_000_000 + i*1000)
		out = append(out, byte(u>>56), byte(u>>48), byte(u>>40), byte(u>>32), byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
		out = append(out, f.Raw...)
	}
	return out
}

// TestTlogResync damages a tlog (garbage inside, a cut entry, a corrupt
// length byte) and checks that the reader recovers every intact entry.
func TestTlogResync(t *testing.T) {
	stream, _ := mixedStream(t)
	frames, _ := collect(stream[:5000], nil)
	tl := tlogOf(stream[:5000])
	// Insert garbage after the 3rd entry and corrupt the length byte of
	// the 10th.
	var pos []int
	off := 0
	for _, f := range frames {
		pos = append(pos, off)
		off += 8 + len(f.Raw)
	}
	damaged := append([]byte(nil), tl[:pos[3]]...)
	damaged = append(damaged, 0xFE, 0x01, 0xFD, 0x00, 0x42)
	damaged = append(damaged, tl[pos[3]:]...)
	damaged[pos[9]+5+8+1] ^= 0x40 // 5 inserted bytes; +8 timestamp; +1 length byte
	damaged = append(damaged, tl[:pos[1]+12]...)
	var r TlogReader
	r.Reset(damaged)
	var got [][]byte
	for {
		f, _, ok := r.Next()
		if !ok {
			break
		}
		got = append(got, f.Raw)
	}
	// All entries but the damaged 10th, plus the intact 1st of the tail.
	want := len(frames) - 1 + 1
	if len(got) != want {
		t.Fatalf("%d frames, want %d; stats %+v", len(got), want, r.Stats())
	}
	st := r.Stats()
	if !st.IncompleteAtEnd || st.BadCRC != 1 {
		t.Errorf("stats %+v", st)
	}
	for i, j := 0, 0; i < len(frames); i++ {
		if i == 9 {
			continue
		}
		if !bytes.Equal(got[j], frames[i].Raw) {
			t.Fatalf("entry %d differs", i)
		}
		j++
	}
}
