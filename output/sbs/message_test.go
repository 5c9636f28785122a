package sbs

import (
	"bytes"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/worker"
	"github.com/cuasd/cuasd/internal/testcapture"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/sim"
)

// captureMsgs is the real capture in raw messages of size records.
func captureMsgs(tb testing.TB, size int) []*nats.Msg {
	tb.Helper()
	return testcapture.Msgs(tb, size)
}

// TestAppendTimeMatchesTimeFormat: the hand-written SBS date and time are
// what time.Format writes, across leap days, century years, the ends of
// the fast path's range and outside it, and 100,000 random instants.
func TestAppendTimeMatchesTimeFormat(t *testing.T) {
	const layout = "2006/01/02,15:04:05.000"
	times := []time.Time{
		time.Unix(0, 0), time.Unix(0, 999_999_999), time.Unix(-1, 0), time.Date(1969, 12, 31, 23, 59, 59, 999e6, time.UTC),
		time.Date(2000, 2, 29, 12, 0, 0, 0, time.UTC), time.Date(2000, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2100, 2, 28, 23, 59, 59, 0, time.UTC), time.Date(2100, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 12, 31, 23, 59, 59, 999_999_999, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 28, 21, 0, 0, 5e6, time.FixedZone("X", 3600)),
	}
	r := rand.New(rand.NewPCG(30, 30))
	for range 100_000 {
		times = append(times, time.Unix(r.Int64N(maxFastSec+86400*800)-86400*400, r.Int64N(1e9)))
	}
	var c clock // one clock across them all: its date changes with the day
	for _, tm := range times {
		want := tm.UTC().Format(layout)
		if got := string(appendTime(nil, tm)); got != want {
			t.Fatalf("%v: %s, want %s", tm, got, want)
		}
		if got := string(c.append(nil, tm)); got != want {
			t.Fatalf("%v after another day: %s, want %s", tm, got, want)
		}
		// By its Unix nanoseconds (a message's time), where they hold it.
		if ns := tm.UnixNano(); time.Unix(0, ns).Equal(tm) {
			if got := string(c.appendNs(nil, ns)); got != want {
				t.Fatalf("%v by nanoseconds: %s, want %s", tm, got, want)
			}
		}
		// The same time again: the kept text.
		if got := string(c.append(nil, tm)); got != want {
			t.Fatalf("%v again: %s, want %s", tm, got, want)
		}
		// The same day again, another time of it: the kept date.
		if later := tm.Add(time.Duration(tm.Nanosecond()%7) * time.Second); later.UTC().YearDay() == tm.UTC().YearDay() {
			if got, want := string(c.append(nil, later)), later.UTC().Format(layout); got != want {
				t.Fatalf("%v: %s, want %s", later, got, want)
			}
		}
	}
}

// TestTrackThenAppendMatchesAppend: an encoder that kept the state of
// the first half of the real capture without writing (Track, as while no
// client listens) writes for the second half exactly the lines of one
// that wrote all along: the same replies of addresses made known, the
// same positions from CPR halves heard while silent.
func TestTrackThenAppendMatchesAppend(t *testing.T) {
	msgs := captureMsgs(t, 64)
	now := time.Date(2018, 4, 3, 19, 5, 0, 0, time.UTC)
	var all, silent MessageEncoder
	var want, got []byte
	half := len(msgs) / 2
	for i, m := range msgs {
		var err error
		if i < half {
			_, err = all.AppendMsg(nil, m, now)
			if err == nil {
				err = silent.Track(m, now)
			}
		} else {
			if want, err = all.AppendMsg(want, m, now); err == nil {
				got, err = silent.AppendMsg(got, m, now)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := bytes.Count(want, []byte("MSG,3,")); n < 100 {
		t.Fatalf("the second half wrote %d MSG,3 lines: too few to tell", n)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("after Track: %d bytes of lines, want the %d written all along", len(got), len(want))
	}
}

// BenchmarkAppendMsg is the per-message SBS output's work (issue 30): the
// real Beast capture in raw messages of 512 records, as --beast-listen
// stores them, each record's line written (its receiver time mapped, its
// message decoded, positions CPR-decoded as readsb does). Each pass over
// the capture is a fresh encoder, so its records are not exact
// duplicates of the pass before.
func BenchmarkAppendMsg(b *testing.B) {
	msgs := captureMsgs(b, 512)
	now := time.Date(2018, 4, 3, 19, 5, 0, 0, time.UTC)
	benchLines(b, msgs, func(int) time.Time { return now }, func(i int, e *MessageEncoder) {
		if i%len(msgs) == 0 && i > 0 {
			*e = MessageEncoder{} // a fresh receiver: no exact duplicates of the last pass
		}
	})
}

// benchLines is one encoder's AppendMsg over msgs in turn, logged at
// now(i), each after before(i, the encoder), reporting the time a line.
func benchLines(b *testing.B, msgs []*nats.Msg, now func(i int) time.Time, before func(int, *MessageEncoder)) {
	var e MessageEncoder
	var buf []byte
	lines := 0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		before(i, &e)
		var err error
		buf, err = e.AppendMsg(buf[:0], msgs[i%len(msgs)], now(i))
		if err != nil {
			b.Fatal(err)
		}
		lines += bytes.Count(buf, []byte("\r\n"))
	}
	if lines == 0 {
		b.Fatal("no lines")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(lines), "ns/line")
}

// TestAppendDegreesMatchesStrconv: five decimals as strconv writes them,
// for latitudes and longitudes at random, exact ties (v·10^5 = n + ½,
// which strconv rounds to even), values a few ulps either side of a tie,
// signed zeros, values that round to zero, and values outside the fast
// path's range.
func TestAppendDegreesMatchesStrconv(t *testing.T) {
	vs := []float64{0, math.Copysign(0, -1), 1e-9, -1e-9, -0.000004, -0.000005, 0.000005, 0.015625, -0.015625,
		0.046875, 179.999995, -179.999995, 180, -180, 90, -90, 335.5, 1e7, -1e7, math.Inf(1), math.Inf(-1), math.NaN(),
		math.MaxFloat64, math.SmallestNonzeroFloat64, 51.123455, 45.000015}
	r := rand.New(rand.NewPCG(30, 5))
	for range 300_000 {
		vs = append(vs, r.Float64()*400-200)
		// An exact tie: (2k+1)/64 has v·10^5 = n + ½ when 3125 divides
		// 2k+1 (a binary fraction with five fives in its decimal value).
		tie := float64(3125*(2*r.Int64N(1000)+1)) / (64 * 3125) * float64(1-2*r.IntN(2))
		vs = append(vs, tie, math.Nextafter(tie, 0), math.Nextafter(tie, 1000), math.Nextafter(tie, -1000))
		// Near a tie of the decimal kind: (n + ½)/10^5, not exact in binary.
		near := (float64(r.Int64N(36_000_000)-18_000_000) + 0.5) / 1e5
		vs = append(vs, near, math.Nextafter(near, 1000), math.Nextafter(near, -1000))
	}
	for _, v := range vs {
		if got, want := string(appendDegrees(nil, v)), strconv.FormatFloat(v, 'f', 5, 64); got != want {
			t.Fatalf("%v (%b): %s, want %s", v, math.Float64bits(v), got, want)
		}
	}
}

// FuzzAppendDegrees holds appendDegrees to strconv for any float64.
func FuzzAppendDegrees(f *testing.F) {
	for _, v := range []float64{0, 0.015625, -47.123455, 179.999995, math.NaN()} {
		f.Add(math.Float64bits(v))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		v := math.Float64frombits(bits)
		if got, want := string(appendDegrees(nil, v)), strconv.FormatFloat(v, 'f', 5, 64); got != want {
			t.Fatalf("%v: %s, want %s", v, got, want)
		}
	})
}

// simMsgs is seconds of the pipeline benchmark's simulated ADS-B traffic
// (its latency phase's world: 2,000 aircraft, ~52,000 frames/s) in raw
// messages of one 10-ms tick each, lp-framed as the benchmark publishes
// them.
func simMsgs(tb testing.TB, seconds int) []*nats.Msg {
	tb.Helper()
	start := time.Unix(1_700_000_000, 0)
	w := sim.NewWorld(sim.Config{Aircraft: 2000, Drones: 200, MAVLink: 10, Rate: 50000, Tick: 10 * time.Millisecond}, start)
	var msgs []*nats.Msg
	for i := 1; i <= seconds*100; i++ {
		now := start.Add(time.Duration(i) * 10 * time.Millisecond)
		out := map[string][][]byte{}
		w.Step(now, 10*time.Millisecond, out)
		var body []byte
		for _, f := range out["adsb"] {
			body = bus.AppendLP(body, f)
		}
		m := &nats.Msg{Subject: "cuas.raw.adsb.sim", Header: nats.Header{}, Data: body}
		m.Header.Set(bus.HeaderFraming, bus.FramingLP)
		m.Header.Set(bus.HeaderSensor, "sim")
		m.Header.Set(bus.HeaderRecvTime, strconv.FormatInt(now.UnixNano(), 10))
		msgs = append(msgs, m)
	}
	return msgs
}

// BenchmarkAppendMsgSim is the per-message SBS output's work at the
// pipeline benchmark (issue 30): its simulated DF17 traffic, ~500 frames
// a raw message without receiver times, most of them positions decoded
// globally from their pairs. "cold" evicts the caches between raw
// messages (16 MB written, outside the timer), as the pipeline's other
// work does between two of them: there the encoder's cost is its
// aircraft state's memory more than its arithmetic.
func BenchmarkAppendMsgSim(b *testing.B) {
	msgs := simMsgs(b, 20)
	warmAndCold(b, func(b *testing.B, between func()) {
		benchLines(b, msgs, func(i int) time.Time {
			return time.Unix(1_700_000_000, 0).Add(time.Duration(i) * 10 * time.Millisecond)
		}, func(int, *MessageEncoder) { between() })
	})
}

// warmAndCold runs bench as "warm" and as "cold", where between, called
// by bench between two raw messages, evicts the caches (16 MB written,
// outside the timer).
func warmAndCold(b *testing.B, bench func(b *testing.B, between func())) {
	b.Run("warm", func(b *testing.B) { bench(b, func() {}) })
	evict := make([]byte, 16<<20)
	b.Run("cold", func(b *testing.B) {
		bench(b, func() {
			b.StopTimer()
			for j := 0; j < len(evict); j += 64 {
				evict[j]++
			}
			b.StartTimer()
		})
	})
}

// TestAppendMsgAllocatesNothing: once it knows the aircraft, the encoder
// writes a raw message's lines without allocating, callsigns and squawks
// too.
func TestAppendMsgAllocatesNothing(t *testing.T) {
	msgs := simMsgs(t, 2)
	now := time.Unix(1_700_000_000, 0)
	var e MessageEncoder
	var buf []byte
	for _, m := range msgs { // the aircraft and the buffer's size
		buf, _ = e.AppendMsg(buf[:0], m, now)
	}
	// AllocsPerRun counts the whole process's allocations. Under the race
	// detector a few (9-11) now and then land in a run that are not the
	// encoder's: in 2-3 of 10 race runs, whatever it decoded, and none
	// when run again (and, on a loaded machine, in all three runs once
	// in make test). The encoder's own are the same in every run, so the
	// fewest of up to ten runs is what it allocates.
	lines := 0
	allocs := math.Inf(1)
	for i := 0; i < 10 && allocs != 0; i++ {
		allocs = min(allocs, testing.AllocsPerRun(1, func() {
			for _, m := range msgs {
				buf, _ = e.AppendMsg(buf[:0], m, now)
				lines += bytes.Count(buf, []byte("MSG,1,"))
			}
		}))
	}
	if lines == 0 || allocs != 0 {
		t.Fatalf("%v allocations for %d raw messages (%d MSG,1 lines)", allocs, len(msgs), lines)
	}
	var m adsb.Message
	var f fields
	var sq [4]byte
	for _, cm := range captureMsgs(t, 512) {
		_, _ = bus.EachFrameTS(bus.FramingBeast, cm.Data, nil, func(_ int, _ uint64, frame []byte) error {
			if adsb.Decode(frame, &m) == nil && m.HasSquawk && m.DF == 5 {
				if n := testing.AllocsPerRun(10, func() { lineFields(&m, &f, &sq) }); n != 0 || string(f.squawk) != m.Squawk.String() {
					t.Fatalf("a squawk's fields: %v allocations, %q for %s", n, f.squawk, m.Squawk)
				}
			}
			return nil
		})
	}
}

// TestForgetsOnTheFramesClock: the encoder forgets aircraft by its frames'
// times, not the wall clock's, so frames whose times are long past (a
// GPS-timed receiver's recording played in hours later, raw messages
// with their sensor's own Cuas-Sensor-Ns), their lines logged now, give
// the lines they give when the wall clock is theirs: the same replies of known
// addresses, the same positions. Only the logged date and time (fields
// 9-10) differ.
func TestForgetsOnTheFramesClock(t *testing.T) {
	msgs := captureMsgs(t, 64)
	then := time.Date(2018, 4, 3, 19, 5, 0, 0, time.UTC)
	later := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	var atThen, atLater MessageEncoder
	var want, got []byte
	for i, m := range msgs {
		var err error
		if want, err = atThen.AppendMsg(want, m, then); err != nil {
			t.Fatal(err)
		}
		// A minute of wall clock a message: as many sweeps as can be.
		if got, err = atLater.AppendMsg(got, m, later.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	strip := func(b []byte) []string {
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\r\n") {
			f := strings.Split(l, ",")
			f[8], f[9] = "", ""
			out = append(out, strings.Join(f, ","))
		}
		return out
	}
	w, g := strip(want), strip(got)
	if n := bytes.Count(want, []byte("MSG,3,")); n < 100 {
		t.Fatalf("the capture wrote %d MSG,3 lines: too few to tell", n)
	}
	if len(g) != len(w) {
		t.Fatalf("logged years later: %d lines, want the %d logged at the capture's time", len(g), len(w))
	}
	for i := range w {
		if g[i] != w[i] {
			t.Fatalf("line %d logged years later:\n%s\nwant\n%s", i, g[i], w[i])
		}
	}
}

// TestRepliesJudgedOnTheReceiversClock: a parity reply is written only
// within a minute of its address's checked squitter on the receiver's
// clock (issue 30). In a burst the mapped times bunch up at the arrival:
// a DF4 heard 62 s after the DF17 that announced its address, 20 ms
// after it by arrival, is not written, one heard 59 s after is (once: its
// exact duplicate is dropped); the same frames paced as heard write the
// same lines.
func TestRepliesJudgedOnTheReceiversClock(t *testing.T) {
	df17, err := hex.DecodeString("8D406B902015A678D4D220AA4BDA") // identification: MSG,1
	if err != nil {
		t.Fatal(err)
	}
	df4 := testcapture.WithParity([]byte{0x20, 0x00, 0x0F, 0x10, 0, 0, 0}, 0x406B90) // MSG,5
	for name, arrival := range map[string]func(int, int64) int64{"burst": testcapture.Burst, "paced": testcapture.Paced} {
		var e MessageEncoder
		var out []byte
		for _, m := range testcapture.FrameMsgs(testcapture.ReplyAfterAMinute(df17, df4), arrival) {
			if out, err = e.AppendMsg(out, m, time.Unix(0, testcapture.Arrival(m))); err != nil {
				t.Fatal(err)
			}
		}
		if n1, n5 := bytes.Count(out, []byte("MSG,1,")), bytes.Count(out, []byte("MSG,5,")); n1 != 1 || n5 != 1 {
			t.Errorf("%s: %d MSG,1 and %d MSG,5 lines, want 1 and 1 (the reply 59 s after the squitter):\n%s", name, n1, n5, out)
		}
	}
}

// simBatches is simMsgs decoded as fusion's feed hands them to
// per-message SBS (worker.ModeSTap): each raw message's Mode S messages,
// timed by the same clock mapping, in one batch.
func simBatches(tb testing.TB, seconds int) []*worker.ModeSBatch {
	tb.Helper()
	var clk output.FrameClock
	var out []*worker.ModeSBatch
	for _, m := range simMsgs(tb, seconds) {
		bt := &worker.ModeSBatch{Meta: &worker.Meta{}}
		clk.Begin(m, 0)
		_, err := bus.EachFrameTS(m.Header.Get(bus.HeaderFraming), m.Data, nil, func(_ int, ts uint64, frame []byte) error {
			at, dup := clk.Frame(ts, frame)
			var f worker.ModeSFrame
			if !dup && adsb.DecodeWith(frame, &f.Msg, adsb.Options{}) == nil {
				f.At = at
				bt.Frames = append(bt.Frames, f)
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, bt)
	}
	return out
}

// BenchmarkAppendDecodedSim is per-message SBS as cuasd serve runs it at
// the pipeline benchmark's rate (issue 30): AppendDecoded over the Mode S
// messages fusion's feed decoded from the simulated traffic (2,000
// aircraft interleaved, ~500 messages a batch), reported per message
// (ns/msg, the pipeline's CPU per frame) and per line. "cold" evicts the
// caches between batches (16 MB written, outside the timer), as the
// pipeline's other work does between two of them.
func BenchmarkAppendDecodedSim(b *testing.B) {
	bts := simBatches(b, 20)
	warmAndCold(b, func(b *testing.B, between func()) {
		var e MessageEncoder
		var buf []byte
		msgs, lines := 0, 0
		start := time.Unix(1_700_000_000, 0)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			between()
			bt := bts[i%len(bts)]
			buf = e.AppendDecoded(buf[:0], bt, start.Add(time.Duration(i)*10*time.Millisecond))
			msgs += len(bt.Frames)
			lines += bytes.Count(buf, []byte("\r\n"))
		}
		if lines == 0 {
			b.Fatal("no lines")
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(msgs), "ns/msg")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(lines), "ns/line")
	})
}

// TestAppendIntMatchesStrconv: decimal integers as strconv writes them,
// around every power of ten, at the ends of int64 and at random.
func TestAppendIntMatchesStrconv(t *testing.T) {
	vs := []int64{0, math.MinInt64, math.MaxInt64, math.MinInt64 + 1}
	for p := int64(1); p <= 1e18; p *= 10 {
		vs = append(vs, p-1, p, p+1, -p+1, -p, -p-1)
	}
	r := rand.New(rand.NewPCG(30, 6))
	for range 100_000 {
		vs = append(vs, r.Int64N(200_000)-100_000, int64(r.Uint64()), r.Int64N(4e9)-2e9)
	}
	for _, v := range vs {
		if got, want := string(appendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Fatalf("%d: %s, want %s", v, got, want)
		}
	}
}

// FuzzAppendInt holds appendInt to strconv for any int64.
func FuzzAppendInt(f *testing.F) {
	for _, v := range []int64{0, -1, 999_999_999, -1e9, math.MinInt64} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v int64) {
		if got, want := string(appendInt(nil, v)), strconv.FormatInt(v, 10); got != want {
			t.Fatalf("%d: %s, want %s", v, got, want)
		}
	})
}

// TestReconnectResendWritesTheSameLines: per-message SBS over raw frames
// (its own output.FrameClock, as without fusion's feed) of the real
// capture, paced, against the same with the connection dropped after 200
// messages of 64 records and the last 11,008 records re-sent in a burst
// on reconnect before the rest — more than the exact-duplicate check
// remembers: the same lines (their times aside: fields 7–10), none from
// a re-sent frame.
func TestReconnectResendWritesTheSameLines(t *testing.T) {
	paced := func(_ int, heard int64) int64 { return heard + 100e6 }
	msgs := testcapture.MsgsAt(t, 64, "", paced)
	const cut, back = 200, 172
	if len(msgs) <= cut {
		t.Fatalf("the capture is %d messages", len(msgs))
	}
	lines := func(msgs []*nats.Msg) []string {
		var e MessageEncoder
		var out []byte
		for _, m := range msgs {
			var err error
			if out, err = e.AppendMsg(out, m, time.Unix(0, testcapture.Arrival(m))); err != nil {
				t.Fatal(err)
			}
		}
		var ls []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\r\n") {
			f := strings.Split(l, ",")
			f[6], f[7], f[8], f[9] = "", "", "", ""
			ls = append(ls, strings.Join(f, ","))
		}
		return ls
	}
	want := lines(msgs)
	reconnect := testcapture.Arrival(msgs[cut-1]) + 2e9
	again := append([]*nats.Msg(nil), msgs[:cut]...)
	for i, m := range msgs[cut-back:] { // re-sent, then the rest: a burst
		c := &nats.Msg{Subject: m.Subject, Header: nats.Header{}, Data: m.Data}
		for k, v := range m.Header {
			c.Header[k] = v
		}
		c.Header.Set(bus.HeaderRecvTime, strconv.FormatInt(reconnect+int64(i)*1000, 10))
		again = append(again, c)
	}
	got := lines(again)
	if len(got) != len(want) {
		t.Fatalf("with the re-send %d lines, sent once %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("line %d with the re-send:\n%s\nwant\n%s", i, got[i], want[i])
		}
	}
}
