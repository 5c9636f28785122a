package beastout

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/adsb"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withParity sets a short frame's parity field to its CRC XOR ap (an
// address, or an interrogator code).
func withParity(f []byte, ap uint32) []byte {
	p := adsb.CRC24(f[:4]) ^ ap
	f[4], f[5], f[6] = byte(p>>16), byte(p>>8), byte(p)
	return f
}

func TestAppendRecordEscapes(t *testing.T) {
	// Every 0x1a after the record's first byte is doubled, including in
	// the timestamp and the signal byte (the Beast specification).
	data := []byte{0x5d, 0x1a, 2, 3, 4, 5, 6}
	got := AppendRecord(nil, '2', 0x1a0000000001, 0x1a, data)
	want := []byte{0x1a, '2', 0x1a, 0x1a, 0, 0, 0, 0, 1, 0x1a, 0x1a, 0x5d, 0x1a, 0x1a, 2, 3, 4, 5, 6}
	if !bytes.Equal(got, want) {
		t.Fatalf("got %x\nwant %x", got, want)
	}
	var f adsb.BeastFrame
	n, err := adsb.ParseBeast(got, &f)
	if err != nil || n != len(got) || f.Timestamp != 0x1a0000000001 || f.Signal != 0x1a || !bytes.Equal(f.Bytes(), data) {
		t.Fatalf("parse back: n %d err %v frame %+v", n, err, f)
	}
}

func TestFilter(t *testing.T) {
	df17 := mustHex(t, "8D406B902015A678D4D220AA4BDA") // CRC good
	bad := bytes.Clone(df17)
	bad[5] ^= 1
	df11 := withParity([]byte{0x5d, 0x40, 0x6b, 0x90, 0, 0, 0}, 0) // all-call reply, IID 0
	// A DF4 reply whose parity is address 406B90 (built with the CRC).
	df4 := withParity([]byte{0x20, 0x00, 0x0F, 0x10, 0, 0, 0}, 0x406B90)
	var f Filter
	if f.Pass('2', df4, 1) {
		t.Error("DF4 from an address no checked frame announced passed")
	}
	if !f.Pass('3', df17, 2) || f.Pass('3', bad, 3) {
		t.Error("DF17: good must pass, bad must not")
	}
	if !f.Pass('2', df4, 4) {
		t.Error("DF4 from an address a DF17 announced was held back")
	}
	if f.Pass('2', df4, 4+knownTTL+1) {
		t.Error("DF4 passed after the address went stale")
	}
	if !f.Pass('2', df11, 5) || !f.Pass('1', []byte{1, 2}, 6) {
		t.Error("DF11 or Mode A/C held back")
	}
	f.Expire(5 + knownTTL + 1)
	if len(f.known) != 0 {
		t.Errorf("expire left %d addresses", len(f.known))
	}
	all := Filter{All: true}
	if !all.Pass('3', bad, 1) {
		t.Error("All held back a bad frame")
	}
}

func TestAppendMsg(t *testing.T) {
	df17 := mustHex(t, "8D406B902015A678D4D220AA4BDA")
	body := bus.AppendBeast(nil, '1', 7, 9, []byte{0x12, 0x34})
	body = bus.AppendBeast(body, '3', 0x123456789abc, 0xc8, df17)
	var e Encoder
	got, err := e.AppendMsg(nil, &nats.Msg{Data: body, Header: nats.Header{bus.HeaderFraming: {bus.FramingBeast}}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := AppendRecord(AppendRecord(nil, '1', 7, 9, []byte{0x12, 0x34}), '3', 0x123456789abc, 0xc8, df17)
	if !bytes.Equal(got, want) || e.Passed != 2 {
		t.Fatalf("beast: got %x want %x (passed %d)", got, want, e.Passed)
	}
	// lp frames have no receiver timestamp: 0, and the signal header.
	lp := bus.AppendLP(bus.AppendLP(nil, df17), []byte{1, 2, 3})
	got, err = e.AppendMsg(nil, &nats.Msg{Data: lp, Header: nats.Header{bus.HeaderFraming: {bus.FramingLP}, bus.HeaderSignal: {"-6.0"}}}, 1)
	want = AppendRecord(nil, '3', 0, 128, df17)
	if err != nil || !bytes.Equal(got, want) || e.Filtered != 1 {
		t.Fatalf("lp: got %x want %x err %v filtered %d", got, want, err, e.Filtered)
	}
}

func TestSignalByte(t *testing.T) {
	for in, want := range map[string]byte{"": 0, "x": 0, "0": 255, "-6.0": 128, "-200": 0, "3": 0, "NaN": 0} {
		if got := signalByte(in); got != want {
			t.Errorf("signalByte(%q) = %d, want %d", in, got, want)
		}
	}
}

// FuzzAppendMsg: whatever a raw message holds, the output is a sequence
// of well-formed Beast records that parse back, never more frames than in.
func FuzzAppendMsg(f *testing.F) {
	f.Add("beast", bus.AppendBeast(nil, '3', 1, 2, mustHex(f, "8D406B902015A678D4D220AA4BDA")))
	f.Add("lp", bus.AppendLP(nil, withParity([]byte{0x5d, 0x40, 0x6b, 0x90, 0, 0, 0}, 0)))
	f.Add("hexlines", []byte("8D406B902015A678D4D220AA4BDA\n"))
	f.Fuzz(func(t *testing.T, framing string, body []byte) {
		e := Encoder{Filter: Filter{All: true}}
		out, _ := e.AppendMsg(nil, &nats.Msg{Data: body, Header: nats.Header{bus.HeaderFraming: {framing}}}, 1)
		var fr adsb.BeastFrame
		n := 0
		for len(out) > 0 {
			used, err := adsb.ParseBeast(out, &fr)
			if err != nil {
				t.Fatalf("output does not parse at record %d: %v", n, err)
			}
			out = out[used:]
			n++
		}
		if uint64(n) != e.Passed {
			t.Fatalf("%d records, %d passed", n, e.Passed)
		}
	})
}

func BenchmarkAppendMsgBeast(b *testing.B) {
	// A receiver batch: 512 frames, as the Mode S adapters publish them.
	df17 := mustHex(b, "8D406B902015A678D4D220AA4BDA")
	df11 := withParity([]byte{0x5d, 0x40, 0x6b, 0x90, 0, 0, 0}, 0)
	var body []byte
	for i := 0; i < 256; i++ {
		body = bus.AppendBeast(body, '3', uint64(i)*12000, 0x1a, df17)
		body = bus.AppendBeast(body, '2', uint64(i)*12000+500, 100, df11)
	}
	m := &nats.Msg{Data: body, Header: nats.Header{bus.HeaderFraming: {bus.FramingBeast}}}
	var e Encoder
	out := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, _ = e.AppendMsg(out[:0], m, 1)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/512, "ns/frame")
}
