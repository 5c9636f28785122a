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
	f.Fuzz(func(t *testing.T, framing string, body []byte) {
		total := 0
		_, _ = EachFrame(framing, body, nil, func(i int, fr []byte) error { total += len(fr); return nil })
		if total > len(body) {
			t.Fatalf("frames longer than the body")
		}
	})
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
