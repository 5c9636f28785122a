package bus

import (
	"bytes"
	"errors"
	"testing"
)

func collect(t *testing.T, framing string, body []byte) ([][]byte, error) {
	t.Helper()
	var out [][]byte
	_, err := EachFrame(framing, body, nil, func(i int, f []byte) error {
		if i != len(out) {
			t.Fatalf("index %d, want %d", i, len(out))
		}
		out = append(out, bytes.Clone(f))
		return nil
	})
	return out, err
}

func TestEachFrame(t *testing.T) {
	lp := AppendLP(AppendLP(nil, []byte{1, 2, 3}), []byte{4})
	got, err := collect(t, FramingLP, lp)
	if err != nil || len(got) != 2 || !bytes.Equal(got[0], []byte{1, 2, 3}) || !bytes.Equal(got[1], []byte{4}) {
		t.Fatalf("lp: %v %v", got, err)
	}
	for _, bad := range [][]byte{lp[:len(lp)-1], append(bytes.Clone(lp), 0), {0, 0}} {
		if _, err := collect(t, FramingLP, bad); !errors.Is(err, ErrFraming) {
			t.Errorf("lp %x: err %v", bad, err)
		}
	}
	got, err = collect(t, FramingHexLines, []byte("8D40\r\n\n  0a0B \nzz\nabc"))
	if err != nil || len(got) != 4 || !bytes.Equal(got[0], []byte{0x8d, 0x40}) || !bytes.Equal(got[1], []byte{0x0a, 0x0b}) ||
		got[2] != nil || got[3] != nil {
		t.Fatalf("hexlines: %x %v", got, err)
	}
	got, err = collect(t, "", []byte{9})
	if err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
	if _, err := collect(t, "zip", nil); !errors.Is(err, ErrFraming) {
		t.Fatal(err)
	}
}

func FuzzEachFrame(f *testing.F) {
	f.Add("lp", AppendLP(nil, []byte{1, 2}))
	f.Add("hexlines", []byte("8D406B902015A678D4D220AA4BDA\n"))
	f.Add("beast", AppendBeast(nil, BeastModeSShort, 1, 2, []byte{0x5d, 1, 2, 3, 4, 5, 6}))
	f.Add("lpt", AppendLPT(AppendLPT(nil, 5, []byte{1, 2}), 0, []byte{3}))
	f.Fuzz(func(t *testing.T, framing string, body []byte) {
		total := 0
		_, _ = EachFrame(framing, body, nil, func(i int, fr []byte) error { total += len(fr); return nil })
		if total > len(body) {
			t.Fatalf("frames longer than the body")
		}
	})
}

// TestLPTFraming (issue 30): an lpt batch gives each frame with its time;
// a time of 0 is none; a cut batch is an error, as lp's.
func TestLPTFraming(t *testing.T) {
	body := AppendLPT(AppendLPT(nil, 1_700_000_000_123_456_789, []byte{1, 2, 3}), 0, []byte{4})
	var ts []uint64
	var frames [][]byte
	if _, err := EachFrameTS(FramingLPT, body, nil, func(_ int, t uint64, f []byte) error {
		ts, frames = append(ts, t), append(frames, f)
		return nil
	}); err != nil || len(frames) != 2 || ts[0] != 1_700_000_000_123_456_789 || ts[1] != 0 || len(frames[0]) != 3 || frames[1][0] != 4 {
		t.Fatalf("%v: %v %v", err, ts, frames)
	}
	if _, err := EachFrameTS(FramingLPT, body[:len(body)-1], nil, func(int, uint64, []byte) error { return nil }); err == nil {
		t.Fatal("a cut lpt batch was read")
	}
	// lp frames have no time.
	if _, err := EachFrameTS(FramingLP, AppendLP(nil, []byte{9}), nil, func(_ int, t uint64, _ []byte) error {
		if t != 0 {
			return errors.New("time in lp")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestObsPartition(t *testing.T) {
	// The partition must be stable, in range, and spread keys.
	seen := map[int]bool{}
	for _, k := range []string{"406B90", "1581BSIM00001003", "1-1@udp", "", "~ABCDEF"} {
		p := ObsPartition(k)
		if p < 0 || p >= ObsPartitions || ObsPartition(k) != p {
			t.Fatalf("%q: partition %d", k, p)
		}
		seen[p] = true
		if s := ObsSubject("adsb", p); len(s) != len("cuas.obs.adsb.p00") {
			t.Fatalf("subject %q", s)
		}
	}
	if len(seen) < 2 {
		t.Fatal("keys do not spread over partitions")
	}
	if ObsPartition("") != int(uint32(2166136261)%ObsPartitions) {
		t.Fatal("the empty key must hash to the FNV offset basis")
	}
}

func TestBeastFraming(t *testing.T) {
	long := []byte{0x8d, 0x40, 0x6b, 0x90, 0x20, 0x15, 0xa6, 0x78, 0xd4, 0xd2, 0x20, 0xaa, 0x4b, 0xda}
	b := AppendBeast(nil, BeastModeAC, 0x1a1a1a1a1a1a, 0x1a, []byte{0x12, 0x34})
	b = AppendBeast(b, BeastModeSLong, 0x0000_0102_0304, 200, long)
	type rec struct {
		typ  byte
		ts   uint64
		sig  byte
		data []byte
	}
	var recs []rec
	if err := EachBeast(b, func(typ byte, ts uint64, sig byte, data []byte) error {
		recs = append(recs, rec{typ, ts, sig, bytes.Clone(data)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].ts != 0x1a1a1a1a1a1a || recs[0].sig != 0x1a || !bytes.Equal(recs[0].data, []byte{0x12, 0x34}) ||
		recs[1].typ != BeastModeSLong || recs[1].ts != 0x01020304 || recs[1].sig != 200 || !bytes.Equal(recs[1].data, long) {
		t.Fatalf("records %+v", recs)
	}
	// Decoders get the Mode S frame only, indexed from 0.
	got, err := collect(t, FramingBeast, b)
	if err != nil || len(got) != 1 || !bytes.Equal(got[0], long) {
		t.Fatalf("frames %x %v", got, err)
	}
	for _, bad := range [][]byte{b[:len(b)-1], append(bytes.Clone(b), '4', 0, 0, 0, 0, 0, 0, 0, 0)} {
		if _, err := collect(t, FramingBeast, bad); !errors.Is(err, ErrFraming) {
			t.Errorf("beast %x: err %v", bad, err)
		}
	}
}
