package sbs

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/internal/testshared"
)

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
		// The same day again, another time of it: the kept date.
		if later := tm.Add(time.Duration(tm.Nanosecond()%7) * time.Second); later.UTC().YearDay() == tm.UTC().YearDay() {
			if got, want := string(c.append(nil, later)), later.UTC().Format(layout); got != want {
				t.Fatalf("%v: %s, want %s", later, got, want)
			}
		}
	}
}

// TestAppendHex6: six upper-case hex digits, zero-padded.
func TestAppendHex6(t *testing.T) {
	for _, a := range []uint32{0, 0xa, 0x4ca1fa, 0xffffff, 0x00abcd} {
		if got, want := string(appendHex6(nil, a)), fmt.Sprintf("%06X", a); got != want {
			t.Fatalf("%#x: %s, want %s", a, got, want)
		}
	}
}

// BenchmarkAppendMsg is the per-message SBS output's work (issue 30): the
// real Beast capture in raw messages of 512 records, as --beast-listen
// stores them, each record's line written (its receiver time mapped, its
// message decoded, positions CPR-decoded as readsb does). Each pass over
// the capture is a fresh encoder, so its records are not exact
// duplicates of the pass before.
func BenchmarkAppendMsg(b *testing.B) {
	capture, err := os.ReadFile(testshared.Path(b, "data", "adsb", "beastblackbox_ulss7_2018-04-03.beast.bin"))
	if err != nil {
		b.Fatal(err)
	}
	// Raw messages in bus framing, as the Beast adapter batches them.
	var msgs []*nats.Msg
	var body []byte
	k := 0
	flush := func() {
		m := &nats.Msg{Subject: "cuas.raw.adsb.rx1", Header: nats.Header{}, Data: body}
		m.Header.Set(bus.HeaderFraming, bus.FramingBeast)
		m.Header.Set(bus.HeaderSensor, "rx1")
		m.Header.Set(bus.HeaderRecvTime, strconv.FormatInt(time.Date(2018, 4, 3, 19, 5, 0, 0, time.UTC).UnixNano(), 10))
		msgs, body, k = append(msgs, m), nil, 0
	}
	for f, err := range adsb.BeastFrames(capture) {
		if err != nil {
			b.Fatal(err)
		}
		body = bus.AppendBeast(body, f.Type, f.Timestamp, f.Signal, f.Bytes())
		if k++; k == 512 {
			flush()
		}
	}
	flush()
	var e MessageEncoder
	var buf []byte
	lines := 0
	now := time.Date(2018, 4, 3, 19, 5, 0, 0, time.UTC)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m := msgs[i%len(msgs)]
		if i%len(msgs) == 0 && i > 0 {
			e = MessageEncoder{} // a fresh receiver: no exact duplicates of the last pass
		}
		buf, err = e.AppendMsg(buf[:0], m, now)
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
