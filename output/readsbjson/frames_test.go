package readsbjson

import (
	"encoding/hex"
	"maps"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/internal/testcapture"
)

// TestFrameCountsOnTheReceiversClock: a parity reply counts for its
// address only when a checked frame announced the address within the
// last minute of the receiver's clock (issue 30). In a burst (a buffered
// feeder, a reconnect) a DF4 heard 62 s after the DF17 that announced its
// address is not counted though it arrived 20 ms after it, one heard 59 s
// after is; the same frames paced as heard count the same. An exact
// duplicate (same timestamp, same bytes) is counted, as readsb counts it.
func TestFrameCountsOnTheReceiversClock(t *testing.T) {
	df17, _ := hex.DecodeString("8D4CA1FA58C382D690C8AC000000")
	df17 = testcapture.WithParity(df17, 0)
	df4 := testcapture.WithParity([]byte{0x20, 0x00, 0x0f, 0x10, 0, 0, 0}, 0x4ca1fa)
	for name, arrival := range map[string]func(int, int64) int64{"burst": testcapture.Burst, "paced": testcapture.Paced} {
		var c frameCounter
		for _, m := range testcapture.FrameMsgs(testcapture.ReplyAfterAMinute(df17, df4), arrival) {
			c.add(m, testcapture.Arrival(m))
			c.sweep()
		}
		if n, _, _, _ := c.lookup("4CA1FA"); n != 3 || c.totalMessages() != 3 {
			t.Errorf("%s: %d messages counted for 4CA1FA (%d in all), want 3: the DF17 and the reply 59 s after it, twice", name, n, c.totalMessages())
		}
	}
}

// TestReplayedCaptureCountsAsLive: the real capture, its raw messages
// arriving hours after it was heard (`cuasd replay` of a recording, a
// feeder's backlog), in one burst or a minute of wall clock a message
// (the documents flushed after each), counts exactly the messages per
// address it counts live (each message arriving 100 ms after its latest
// frame was heard): from a GPS-timed receiver (?clock=gps) and from a
// 12 MHz counter.
func TestReplayedCaptureCountsAsLive(t *testing.T) {
	later := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC).UnixNano()
	for _, clock := range []string{"gps", "12mhz"} {
		count := func(msgs []*nats.Msg) (map[uint32]uint64, uint64) {
			var c frameCounter
			for _, m := range msgs {
				c.add(m, testcapture.Arrival(m))
				c.sweep()
			}
			by := map[uint32]uint64{}
			for a, s := range c.by {
				by[a] = s.messages
			}
			return by, c.totalMessages()
		}
		liveArrival := func(_ int, heard int64) int64 { return heard + 100e6 }
		live, liveTotal := count(testcapture.MsgsAt(t, 64, clock, liveArrival))
		_, withoutReplies := count(withoutParityReplies(testcapture.MsgsAt(t, 64, clock, liveArrival)))
		if liveTotal < withoutReplies+100 {
			t.Fatalf("%s: live, %d messages counted, %d without the parity replies: too few replies to tell", clock, liveTotal, withoutReplies)
		}
		for name, arrival := range map[string]func(int, int64) int64{
			"in one burst":       func(i int, _ int64) int64 { return later + int64(i)*1000 },
			"a minute a message": func(i int, _ int64) int64 { return later + int64(i)*int64(time.Minute) },
		} {
			got, total := count(testcapture.MsgsAt(t, 64, clock, arrival))
			if total != liveTotal || !maps.Equal(got, live) {
				t.Errorf("%s, hours later %s: %d messages counted for %d addresses, live %d for %d", clock, name, total, len(got), liveTotal, len(live))
			}
		}
	}
}

// withoutParityReplies is msgs (Beast framing) with every address/parity
// reply (DF0/4/5/16/20/21) taken out.
func withoutParityReplies(msgs []*nats.Msg) []*nats.Msg {
	for _, m := range msgs {
		var body []byte
		_ = bus.EachBeast(m.Data, func(typ byte, ts uint64, sig byte, data []byte) error {
			switch data[0] >> 3 {
			case 0, 4, 5, 16, 20, 21:
				if typ != bus.BeastModeAC {
					return nil
				}
			}
			body = bus.AppendBeast(body, typ, ts, sig, data)
			return nil
		})
		m.Data = body
	}
	return msgs
}

// TestFrameCountAllocatesNothing: counting a raw message's frames, each
// timed by its receiver's clock, allocates nothing once the addresses are
// known.
func TestFrameCountAllocatesNothing(t *testing.T) {
	m, body := frameBatch()
	var c frameCounter
	c.add(m, 1)
	allocs := testing.AllocsPerRun(20, func() {
		testcapture.Advance(body, 512*12000)
		c.add(m, 1)
	})
	if allocs != 0 || c.totalMessages() < 512*20 {
		t.Fatalf("%v allocations a raw message (%d messages counted)", allocs, c.totalMessages())
	}
}
