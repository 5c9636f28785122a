package beastout

import (
	"bytes"
	"encoding/hex"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/internal/testcapture"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
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

// arrival is the time of a frame that carried none of its own: its
// arrival, Unix ns.
func arrival(ns int64) sensorclock.Time { return sensorclock.Time{UnixNano: ns} }

func TestFilter(t *testing.T) {
	df17 := mustHex(t, "8D406B902015A678D4D220AA4BDA") // CRC good
	bad := bytes.Clone(df17)
	bad[5] ^= 1
	df11 := testcapture.WithParity([]byte{0x5d, 0x40, 0x6b, 0x90, 0, 0, 0}, 0) // all-call reply, IID 0
	// A DF4 reply whose parity is address 406B90 (built with the CRC).
	df4 := testcapture.WithParity([]byte{0x20, 0x00, 0x0F, 0x10, 0, 0, 0}, 0x406B90)
	var f Filter
	if f.Pass('2', df4, arrival(1)) {
		t.Error("DF4 from an address no checked frame announced passed")
	}
	if !f.Pass('3', df17, arrival(2)) || f.Pass('3', bad, arrival(3)) {
		t.Error("DF17: good must pass, bad must not")
	}
	if !f.Pass('2', df4, arrival(4)) {
		t.Error("DF4 from an address a DF17 announced was held back")
	}
	if f.Pass('2', df4, arrival(4+knownTTL+1)) {
		t.Error("DF4 passed after the address went stale")
	}
	if !f.Pass('2', df11, arrival(5)) || !f.Pass('1', []byte{1, 2}, arrival(6)) {
		t.Error("DF11 or Mode A/C held back")
	}
	f.Expire(arrival(5 + knownTTL + 1))
	if len(f.known) != 0 {
		t.Errorf("expire left %d addresses", len(f.known))
	}
	all := Filter{All: true}
	if !all.Pass('3', bad, arrival(1)) {
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
	f.Add("lp", bus.AppendLP(nil, testcapture.WithParity([]byte{0x5d, 0x40, 0x6b, 0x90, 0, 0, 0}, 0)))
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

// TestRepliesJudgedOnTheReceiversClock: whether a parity reply's address
// is known (announced by a checked frame within the last minute) is
// judged on the receiver's clock (issue 30). In a burst (a buffered
// feeder, a reconnect) a DF4 heard 62 s after the DF17 that announced its
// address is not relayed though it arrived 20 ms after it, and one heard
// 59 s after is; the same frames paced as they were heard relay the same.
// An exact duplicate (same timestamp, same bytes) is relayed as the
// receiver sent it, and counted.
func TestRepliesJudgedOnTheReceiversClock(t *testing.T) {
	df17 := mustHex(t, "8D406B902015A678D4D220AA4BDA")
	df4 := testcapture.WithParity([]byte{0x20, 0x00, 0x0F, 0x10, 0, 0, 0}, 0x406B90)
	const mhz = 12_000_000
	want := AppendRecord(AppendRecord(AppendRecord(nil, '3', 1*mhz, 128, df17), '2', 60*mhz, 128, df4), '2', 60*mhz, 128, df4)
	for name, arrival := range map[string]func(int, int64) int64{"burst": testcapture.Burst, "paced": testcapture.Paced} {
		var e Encoder
		var got []byte
		for _, m := range testcapture.FrameMsgs(testcapture.ReplyAfterAMinute(df17, df4), arrival) {
			var err error
			if got, err = e.AppendMsg(got, m, testcapture.Arrival(m)); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, want) || e.Duplicates != 1 || e.Filtered != 13 {
			t.Errorf("%s: relayed %x (%d duplicates, %d held back)\nwant %x: the DF17 and the reply 59 s after it, twice", name, got, e.Duplicates, e.Filtered, want)
		}
	}
}

// TestReplayedCaptureRelaysAsLive: the real capture, its raw messages
// arriving hours after it was heard (`cuasd replay` of a recording, a
// feeder's backlog), in one burst or a minute of wall clock a message,
// relays exactly the records it relays live (each message arriving
// 100 ms after its latest frame was heard): from a GPS-timed receiver
// (?clock=gps) and from a 12 MHz counter.
func TestReplayedCaptureRelaysAsLive(t *testing.T) {
	later := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC).UnixNano()
	for _, clock := range []string{"gps", "12mhz"} {
		relay := func(arrival func(i int, heard int64) int64) []byte {
			var e Encoder
			var out []byte
			for _, m := range testcapture.MsgsAt(t, 64, clock, arrival) {
				var err error
				if out, err = e.AppendMsg(out, m, testcapture.Arrival(m)); err != nil {
					t.Fatal(err)
				}
			}
			return out
		}
		live := relay(func(_ int, heard int64) int64 { return heard + 100e6 })
		if n := parityReplies(t, live); n < 100 {
			t.Fatalf("%s: live, %d parity replies relayed: too few to tell", clock, n)
		}
		for name, arrival := range map[string]func(int, int64) int64{
			"in one burst":       func(i int, _ int64) int64 { return later + int64(i)*1000 },
			"a minute a message": func(i int, _ int64) int64 { return later + int64(i)*int64(time.Minute) },
		} {
			if got := relay(arrival); !bytes.Equal(got, live) {
				t.Errorf("%s, hours later %s: %d bytes (%d parity replies) relayed, live %d (%d)",
					clock, name, len(got), parityReplies(t, got), len(live), parityReplies(t, live))
			}
		}
	}
}

// parityReplies counts the address/parity replies (DF0/4/5/16/20/21) in
// Beast bytes.
func parityReplies(t *testing.T, b []byte) int {
	n := 0
	for f, err := range adsb.BeastFrames(b) {
		if err != nil {
			t.Fatal(err)
		}
		switch f.Bytes()[0] >> 3 {
		case 0, 4, 5, 16, 20, 21:
			if f.Type != bus.BeastModeAC {
				n++
			}
		}
	}
	return n
}

// TestAppendMsgAllocatesNothing: relaying a raw message, each frame timed
// by its receiver's clock, allocates nothing once the addresses are known.
func TestAppendMsgAllocatesNothing(t *testing.T) {
	m, body := benchMsg(t)
	var e Encoder
	out, _ := e.AppendMsg(nil, m, 1)
	allocs := testing.AllocsPerRun(20, func() {
		testcapture.Advance(body, 512*12000)
		out, _ = e.AppendMsg(out[:0], m, 1)
	})
	if allocs != 0 || e.Passed < 512*20 {
		t.Fatalf("%v allocations a raw message (%d frames relayed)", allocs, e.Passed)
	}
}

// benchMsg is a receiver batch: 512 frames, as the Mode S adapters
// publish them, and its body.
func benchMsg(tb testing.TB) (*nats.Msg, []byte) {
	df17 := mustHex(tb, "8D406B902015A678D4D220AA4BDA")
	df11 := testcapture.WithParity([]byte{0x5d, 0x40, 0x6b, 0x90, 0, 0, 0}, 0)
	var body []byte
	for i := 0; i < 256; i++ {
		body = bus.AppendBeast(body, '3', 1+uint64(i)*12000, 0x1a, df17)
		body = bus.AppendBeast(body, '2', 1+uint64(i)*12000+500, 100, df11)
	}
	return &nats.Msg{Data: body, Header: nats.Header{bus.HeaderFraming: {bus.FramingBeast}}}, body
}

// BenchmarkAppendMsgBeast relays receiver batches of 512 frames, each
// batch the next 3 s of the receiver's clock (the same frames again would
// be exact duplicates).
func BenchmarkAppendMsgBeast(b *testing.B) {
	m, body := benchMsg(b)
	var e Encoder
	out := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		testcapture.Advance(body, 256*12000)
		b.StartTimer()
		out, _ = e.AppendMsg(out[:0], m, 1)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/512, "ns/frame")
	if e.Duplicates != 0 {
		b.Fatalf("%d exact duplicates: the benchmark is not relaying new frames", e.Duplicates)
	}
}
