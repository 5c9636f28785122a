package sensorclock

import (
	"math"
	"os"
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/internal/testshared"
)

const s = int64(time.Second)

// ticks is t seconds of a 12 MHz counter that started at base.
func ticks(base uint64, t float64) uint64 { return base + uint64(math.Round(t*12e6)) }

// TestBurstKeepsReceiverIntervals: a minute of frames arriving at once (a
// buffered feeder, a fast replay) keeps the receiver's intervals exactly,
// and none is placed after its arrival.
func TestBurstKeepsReceiverIntervals(t *testing.T) {
	var m Model
	arr := int64(1_700_000_000) * s
	var first Time
	for i := 0; i <= 120; i++ {
		got := m.Map(MHz12, ticks(5e9, float64(i)/2), arr+int64(i)) // 1 ns apart
		if got.UnixNano > arr+int64(i) {
			t.Fatalf("frame %d placed %d ns after its arrival", i, got.UnixNano-arr-int64(i))
		}
		if got.Source != FromReceiver {
			t.Fatalf("source %v", got.Source)
		}
		if i == 0 {
			first = got
			continue
		}
		if d := Since(first, got); d != int64(i)*s/2 {
			t.Fatalf("frame %d is %d ns after the first by the receiver, want %d", i, d, int64(i)*s/2)
		}
	}
	if m.Resets != 0 {
		t.Errorf("%d resets in a steady clock", m.Resets)
	}
}

// TestWrapContinues: the 48-bit counter wrapping keeps the clock epoch and
// the intervals.
func TestWrapContinues(t *testing.T) {
	var m Model
	arr := int64(1_700_000_000) * s
	base := wrap12 - uint64(12e6) // one second before the wrap
	a := m.Map(MHz12, base, arr)
	b := m.Map(MHz12, (base+uint64(24e6))%wrap12, arr+2*s)
	if a.Clock != b.Clock || Since(a, b) != 2*s || m.Wraps != 1 || m.Resets != 0 {
		t.Fatalf("across the wrap: clocks %d/%d, %d ns apart, %d wraps, %d resets", a.Clock, b.Clock, Since(a, b), m.Wraps, m.Resets)
	}
	if b.UnixNano <= a.UnixNano || b.UnixNano > arr+2*s {
		t.Fatalf("after the wrap mapped to %d (before %d, arrival %d)", b.UnixNano, a.UnixNano, arr+2*s)
	}
}

// TestRestartIsANewEpoch: a receiver restart (its counter back near 0)
// starts a new clock epoch anchored at the arrival, so that its times are
// neither frozen at the old clock's nor compared with it.
func TestRestartIsANewEpoch(t *testing.T) {
	var m Model
	arr := int64(1_700_000_000) * s
	a := m.Map(MHz12, ticks(9e12, 100), arr)
	b := m.Map(MHz12, ticks(0, 0.001), arr+5*s)
	if a.Clock == b.Clock || m.Resets != 1 {
		t.Fatalf("restart kept clock %d (resets %d)", b.Clock, m.Resets)
	}
	if b.UnixNano != arr+5*s {
		t.Fatalf("after the restart mapped to arrival%+d ns", b.UnixNano-arr-5*s)
	}
	c := m.Map(MHz12, ticks(0, 1.001), arr+6*s)
	if Since(b, c) != s || c.UnixNano != arr+6*s {
		t.Fatalf("after the restart the clock does not run: %d ns, mapped arrival%+d", Since(b, c), c.UnixNano-arr-6*s)
	}
	// A jump forward far beyond the arrivals is a new epoch too.
	d := m.Map(MHz12, ticks(0, 3601), arr+7*s)
	if d.Clock == c.Clock {
		t.Fatal("an hour's jump forward kept the clock epoch")
	}
}

// TestDriftFollowed: a clock running slow (arrivals stretch away from it)
// is followed, so its frames do not fall ever further behind.
func TestDriftFollowed(t *testing.T) {
	var m Model
	arr := int64(1_700_000_000) * s
	var got Time
	for i := 0; i <= 600; i++ { // ten minutes, 100 ppm slow
		sec := float64(i)
		got = m.Map(MHz12, ticks(1e9, sec*(1-100e-6)), arr+int64(i)*s)
	}
	if lag := arr + 600*s - got.UnixNano; lag < 0 || lag > int64(20*time.Millisecond) {
		t.Fatalf("after ten minutes of 100 ppm drift the clock is %v behind its arrivals", time.Duration(lag))
	}
}

// TestGPS: Radarcape-style timestamps are UTC on the day nearest the
// arrival, across midnight, and never after the arrival.
func TestGPS(t *testing.T) {
	var m Model
	day := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC).UnixNano()
	gps := func(sec, ns int64) uint64 { return uint64(sec)<<30 | uint64(ns) }
	got := m.Map(GPS, gps(86399, 900_000_000), day+int64(200*time.Millisecond)) // heard before midnight, arrived after
	if want := day - int64(100*time.Millisecond); got.UnixNano != want || got.Source != FromGPS {
		t.Fatalf("23:59:59.9 arriving at 00:00:00.2: %d, want %d (%v)", got.UnixNano, want, got.Source)
	}
	got = m.Map(GPS, gps(3600, 0), day+3590*s)
	if got.UnixNano != day+3590*s || m.Held != 1 {
		t.Fatalf("a GPS time 10 s ahead of the arrival mapped to %d (held %d)", got.UnixNano-day, m.Held)
	}
	if got := m.Map(GPS, gps(90000, 0), day); got.Source != Arrival {
		t.Fatalf("second 90000 of a day is no time: %+v", got)
	}
}

// TestDuplicates: the same bytes with the same timestamp are a duplicate
// once; the same bytes at another time, or without a timestamp, are not.
func TestDuplicates(t *testing.T) {
	var m Model
	f := []byte{0x8D, 0x40, 0x6B, 0x90, 0x20, 0x15, 0xA6}
	if m.Duplicate(100, f) || !m.Duplicate(100, f) || m.Duplicate(101, f) || m.Duplicate(0, f) || m.Duplicate(0, f) {
		t.Fatal("duplicate detection wrong")
	}
	if m.Duplicates != 1 {
		t.Fatalf("%d duplicates counted", m.Duplicates)
	}
}

// TestDuplicatesOutOfOrderAndAfterARestart: a repeat of a frame stamped
// before the newest one (receivers reorder a little) is found, and so is
// a repeat after the clock went back by days (a restarted receiver).
func TestDuplicatesOutOfOrderAndAfterARestart(t *testing.T) {
	var m Model
	f := func(i int) []byte { return []byte{0x8D, byte(i), byte(i >> 8), 0x90, 0x20, 0x15, 0xA6} }
	base := uint64(5e14) // two days into a 12 MHz counter
	for i := range 100 {
		m.Duplicate(base+uint64(i)*6000, f(i))
	}
	if !m.Duplicate(base+50*6000, f(50)) || m.Duplicate(base+50*6000, f(51)) {
		t.Fatal("an out-of-order repeat not found, or a new frame at an old time taken for one")
	}
	for i := range 10 { // restarted: the counter from near zero
		m.Duplicate(1000+uint64(i)*6000, f(1000+i))
	}
	if !m.Duplicate(1000+3*6000, f(1003)) || !m.Duplicate(1000+9*6000, f(1009)) {
		t.Fatal("a repeat after the restart not found")
	}
	if m.Duplicates != 3 {
		t.Fatalf("%d duplicates counted, want 3", m.Duplicates)
	}
}

// BenchmarkMap measures one frame's mapping and duplicate check.
func BenchmarkMap(b *testing.B) {
	var m Model
	f := make([]byte, 14)
	ts, arr := uint64(1e9), int64(1_700_000_000)*s
	b.ReportAllocs()
	for b.Loop() {
		ts += 6000
		arr += 500_000
		m.Duplicate(ts, f)
		m.Map(MHz12, ts, arr)
	}
}

// BenchmarkDuplicate is the exact-duplicate check alone on a stream of
// distinct 7- and 14-byte frames (every Mode S frame pays it).
func BenchmarkDuplicate(b *testing.B) {
	var m Model
	frames := [][]byte{make([]byte, 14), make([]byte, 7)}
	ts := uint64(1e9)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ts += 6000
		f := frames[i&1]
		f[1], f[2], f[3] = byte(i), byte(i>>8), byte(i>>16)
		if m.Duplicate(ts, f) {
			b.Fatal("a distinct frame taken for a duplicate")
		}
	}
}

// TestDuplicatesOnTheCapture: the real Beast capture holds every record
// twice (same timestamp, same bytes, 10 to a few thousand records apart);
// the model finds exactly the exact duplicates a full map finds: none
// missed, no distinct frame dropped. The same frames truncated to 7
// bytes at the same timestamps are distinct from the 14-byte ones, and so
// is every frame with one bit changed, byte by byte.
func TestDuplicatesOnTheCapture(t *testing.T) {
	capture, err := os.ReadFile(testshared.Path(t, "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin"))
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		ts    uint64
		frame string
	}
	seen := map[key]bool{}
	var m Model
	want, long := uint64(0), 0
	for f, err := range adsb.BeastFrames(capture) {
		if err != nil {
			t.Fatal(err)
		}
		k := key{f.Timestamp, string(f.Bytes())}
		if seen[k] {
			want++
		}
		seen[k] = true
		m.Duplicate(f.Timestamp, f.Bytes())
		if f.Type == adsb.BeastModeSLong {
			long++
		}
	}
	if want == 0 || m.Duplicates != want {
		t.Fatalf("%d duplicates found, a map finds %d", m.Duplicates, want)
	}
	before := m.Duplicates
	for f := range adsb.BeastFrames(capture) {
		if f.Type == adsb.BeastModeSLong {
			m.Duplicate(f.Timestamp, f.Bytes()[:7])
		}
	}
	if got := m.Duplicates - before; got != uint64(long/2) {
		t.Fatalf("the %d long frames cut to 7 bytes: %d duplicates, want %d (their own repeats only)", long, got, long/2)
	}
	before = m.Duplicates
	for k := range seen {
		for i := range len(k.frame) {
			f := []byte(k.frame)
			f[i] ^= 1 << (i % 8)
			m.Duplicate(k.ts, f)
		}
	}
	if got := m.Duplicates - before; got != 0 {
		t.Fatalf("%d frames with one bit changed taken for duplicates", got)
	}
}

// TestGPSNotATimeOfDayCounted: a Beast timestamp read as GPS time whose
// nanoseconds are 10^9 or more, or whose second is past the day's last,
// cannot be one: the frame is timed by its arrival and counted, so that
// a 12 MHz receiver given ?clock=gps (about 7 % of its counter values
// have such nanoseconds) is seen, not silently mistimed.
func TestGPSNotATimeOfDayCounted(t *testing.T) {
	var m Model
	day := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC).UnixNano()
	gps := func(sec, ns int64) uint64 { return uint64(sec)<<30 | uint64(ns) }
	for _, raw := range []uint64{gps(43199, 999_999_999), gps(43199, 0)} {
		if got := m.Map(GPS, raw, day); got.Source != FromGPS {
			t.Fatalf("%x: %+v", raw, got)
		}
	}
	for _, raw := range []uint64{gps(43199, 1_000_000_000), gps(43199, 1<<30-1), gps(86400, 0)} {
		if got := m.Map(GPS, raw, day); got.Source != Arrival || got.UnixNano != day {
			t.Fatalf("%x: %+v, want the arrival", raw, got)
		}
	}
	if m.Invalid != 3 {
		t.Fatalf("%d invalid timestamps counted, want 3", m.Invalid)
	}
}

// stream is a receiver's fabricated stream: frame i stamped i·5 ms after
// base on its 12 MHz counter, its bytes its own.
type stream struct {
	base uint64
	buf  [14]byte
}

func (s *stream) ts(i int) uint64 { return s.base + uint64(i)*60_000 }

func (s *stream) frame(i int) []byte {
	s.buf = [14]byte{0x8D, byte(i), byte(i >> 8), byte(i >> 16), 0x58, byte(s.base >> 24), byte(s.base >> 32)}
	return s.buf[:]
}

// feed gives the model frame i arriving at arrival as the decoder does
// (the duplicate check, then the clock), and says what became of it.
func (s *stream) feed(m *Model, i int, arrival int64) (t Time, dropped bool) {
	if m.Duplicate(s.ts(i), s.frame(i)) {
		return Time{}, true
	}
	return m.Judge(s.ts(i), Stamp{Arrival: arrival})
}

// TestResendBeyondTheDuplicateCheck: a feeder that, on reconnect,
// re-sends its last 10,000 frames (50 s, more than twice what the
// duplicate check remembers) within 50 ms, then goes on: every re-sent
// frame is dropped (an exact duplicate, or judged re-sent), none is a
// clock reset, and the new frames go on on the same clock epoch, their
// time from the last frame before the drop exact.
func TestResendBeyondTheDuplicateCheck(t *testing.T) {
	var m Model
	rx := stream{base: 5e12}
	arr := int64(1_700_000_000) * s
	var last Time
	for i := range 20_000 { // 100 s, paced
		last, _ = rx.feed(&m, i, arr+int64(i)*5e6+3e6)
	}
	at := arr + 20_000*5e6 + 2*s // reconnected 2 s later
	for i := 10_000; i < 20_000; i++ {
		if got, dropped := rx.feed(&m, i, at+int64(i-10_000)*5e3); !dropped {
			t.Fatalf("re-sent frame %d taken as new: %+v", i, got)
		}
	}
	if m.Resets != 0 || m.Resent == 0 || m.Resent+m.Duplicates != 10_000 || m.ResentLive != 0 {
		t.Fatalf("%d resets, %d judged re-sent + %d duplicates of 10,000 re-sent, %d live", m.Resets, m.Resent, m.Duplicates, m.ResentLive)
	}
	next, dropped := rx.feed(&m, 20_000, at+60*int64(time.Millisecond))
	if dropped || next.Clock != last.Clock || Since(last, next) != 5e6 {
		t.Fatalf("the first new frame: %+v (dropped %v), %d ns after the last before the drop", next, dropped, Since(last, next))
	}
}

// TestSlowResendConfirmedByRepeats: a re-send delivered at only twice
// the receiver's pace, which by its arrivals alone would look like a
// restart, repeats frames the duplicate check still remembers and so
// stays judged re-sent until it catches up.
func TestSlowResendConfirmedByRepeats(t *testing.T) {
	var m Model
	rx := stream{base: 5e12}
	arr := int64(1_700_000_000) * s
	for i := range 10_000 {
		rx.feed(&m, i, arr+int64(i)*5e6+3e6)
	}
	at := arr + 10_000*5e6 + 2*s
	for i := 7_000; i < 10_000; i++ { // 15 s re-sent over 7.5 s
		if got, dropped := rx.feed(&m, i, at+int64(i-7_000)*25e5); !dropped {
			t.Fatalf("re-sent frame %d taken as new: %+v", i, got)
		}
	}
	if m.Resets != 0 || m.Resent == 0 || m.ResentLive != 0 {
		t.Fatalf("%d resets, %d judged re-sent, %d live", m.Resets, m.Resent, m.ResentLive)
	}
}

// TestRestartInsideTheSpan: the receiver and cuasd started together (its
// counter from 0.1 s) and the receiver restarts a minute later, so that
// its new counter values fall inside the span already seen. Paced, its
// clock runs in step with the arrivals: at most ResendEvidence of its
// frames are judged re-sent (counted as live), then it is a new clock
// epoch whose frames map to their arrivals. In a burst, where the
// arrivals cannot tell, its frames are judged re-sent until its counter
// passes the old one's newest, and since none repeated a remembered
// frame, a new epoch begins there: counted, never frozen.
func TestRestartInsideTheSpan(t *testing.T) {
	arr := int64(1_700_000_000) * s
	for _, tc := range []struct {
		name     string
		arrival  func(i int) int64 // of the restarted receiver's frame i
		maxLost  int
		wantTime bool // the frames after the restart map to their arrivals
	}{
		{"paced", func(i int) int64 { return arr + 62*s + int64(i)*5e6 + 3e6 }, int(ResendEvidence/(5*time.Millisecond)) + 1, true},
		{"burst", func(i int) int64 { return arr + 62*s + int64(i)*1e3 }, 12_000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m Model
			old, restarted := stream{base: 1_200_000}, stream{base: 600_000} // 0.1 s, 0.05 s
			for i := range 12_000 {                                          // a minute
				old.feed(&m, i, arr+int64(i)*5e6+3e6)
			}
			lost, first := 0, -1
			var got Time
			for i := range 20_000 {
				var dropped bool
				got, dropped = restarted.feed(&m, i, tc.arrival(i))
				switch {
				case dropped && first >= 0:
					t.Fatalf("frame %d judged re-sent after frame %d was taken", i, first)
				case dropped:
					lost++
				case first < 0:
					first = i
				}
			}
			if lost > tc.maxLost || m.Resets != 1 || m.ResentLive != uint64(lost) || m.Resent != uint64(lost) {
				t.Errorf("%d frames lost (at most %d), %d resets, %d judged re-sent, %d counted live", lost, tc.maxLost, m.Resets, m.Resent, m.ResentLive)
			}
			if d := tc.arrival(19_999) - got.UnixNano; tc.wantTime && (d < 0 || d > 3e6) {
				t.Errorf("the restarted receiver's last frame mapped to arrival%+d ns: frozen", -d)
			}
			t.Logf("%s: %d of the restarted receiver's frames judged re-sent", tc.name, lost)
		})
	}
}

// TestResendRuleBounds: a step back below the span the epoch covered, or
// further back than ResendMax, is a reset at once (nothing judged
// re-sent); a model whose frames are not checked for duplicates (a
// transmitter's clock) never judges a frame re-sent.
func TestResendRuleBounds(t *testing.T) {
	arr := int64(1_700_000_000) * s
	for _, tc := range []struct {
		name   string
		base   uint64 // of the stepped-back frames
		frames int    // before the step
	}{
		{"below the span", 5e12 - 24e6, 2_000},
		{"beyond ResendMax", 5e12, 30_000}, // 150 s covered; back to its start
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m Model
			a, b := stream{base: 5e12}, stream{base: tc.base}
			for i := range tc.frames {
				a.feed(&m, i, arr+int64(i)*5e6)
			}
			if got, dropped := b.feed(&m, 1, arr+int64(tc.frames)*5e6); dropped || m.Resets != 1 || got.UnixNano != arr+int64(tc.frames)*5e6 {
				t.Fatalf("dropped %v, %d resets, mapped to arrival%+d", dropped, m.Resets, got.UnixNano-arr-int64(tc.frames)*5e6)
			}
		})
	}
	var m Model
	m.Map(MHz12, ticks(5e12, 60), arr)
	if got := m.Map(MHz12, ticks(5e12, 10), arr+s); m.Resent != 0 || m.Resets != 1 {
		t.Fatalf("without the duplicate check: %+v, %d resets", got, m.Resets)
	}
}

// TestGPSResend: a GPS-timed receiver's feeder re-sending its last
// 10,000 frames (50 s, more than the duplicate check remembers) on
// reconnect: every re-sent frame is dropped, an exact duplicate or judged
// re-sent, and the frames after them are taken at their own times. A
// frame stamped further back than ResendMax is taken (a clock set back),
// and one stamped a minute ahead (held at its arrival) does not make the
// frames after it look re-sent.
func TestGPSResend(t *testing.T) {
	var m Model
	day := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC).UnixNano()
	t0 := int64(3600) * s // 01:00 UTC
	gps := func(i int) uint64 {
		ns := t0 + int64(i)*5e6
		return uint64(ns/s)<<30 | uint64(ns%s)
	}
	var buf [14]byte
	frame := func(i int) []byte {
		buf = [14]byte{0x8D, byte(i), byte(i >> 8), byte(i >> 16), 0x58}
		return buf[:]
	}
	feed := func(i int, arrival int64) (Time, bool) {
		if m.Duplicate(gps(i), frame(i)) {
			return Time{}, true
		}
		return m.Judge(gps(i), Stamp{Kind: GPS, Arrival: arrival})
	}
	late := 20 * int64(time.Millisecond)
	for i := range 20_000 { // 100 s, paced
		if _, dropped := feed(i, day+t0+int64(i)*5e6+late); dropped {
			t.Fatalf("live frame %d dropped", i)
		}
	}
	at := day + t0 + 20_000*5e6 + 2*s // reconnected 2 s later
	for i := 10_000; i < 20_000; i++ {
		if got, dropped := feed(i, at+int64(i-10_000)*5e3); !dropped {
			t.Fatalf("re-sent frame %d taken as new: %+v", i, got)
		}
	}
	if m.Resent == 0 || m.Resent+m.Duplicates != 10_000 || m.Held != 0 {
		t.Fatalf("%d judged re-sent + %d duplicates of 10,000 re-sent (%d held)", m.Resent, m.Duplicates, m.Held)
	}
	next, dropped := feed(20_000, at+60*int64(time.Millisecond))
	if dropped || next.UnixNano != day+t0+20_000*5e6 {
		t.Fatalf("the first new frame: %+v (dropped %v)", next, dropped)
	}
	// 30,000 frames (150 s) back: beyond ResendMax, a clock set back.
	if _, dropped := feed(20_000-30_000, at+s); dropped {
		t.Fatal("a frame 150 s back (beyond ResendMax) dropped")
	}
	// One frame a minute ahead of its arrival is held, and moves nothing.
	ahead := 20_001 + 12_000
	if _, dropped := feed(ahead, at+2*s); dropped || m.Held != 1 {
		t.Fatalf("a frame a minute ahead: dropped %v, held %d", dropped, m.Held)
	}
	if _, dropped := feed(20_002, at+2*s+10*int64(time.Millisecond)); dropped {
		t.Fatal("the frame after one stamped a minute ahead was dropped as re-sent")
	}
}
