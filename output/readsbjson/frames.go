package readsbjson

import (
	"math"
	"strconv"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/output"
	"github.com/cuasd/cuasd/output/beastout"
)

// frameStats is what readsb counts per address from the frames
// themselves: every CRC-checked Mode S message (all-call replies too, which
// change no track) and the signal level of the last 8.
type frameStats struct {
	messages uint64
	power    [8]float64 // amplitude², 0..1
	nPower   int
	heard    sensorclock.Time
}

// frameCounter counts the raw Mode S frames per address, as readsb's
// "messages" and "rssi" do; the track events cannot, since a track counts
// only the messages that changed it. Each frame is judged at its
// receiver's time (output.FrameClock, as Beast out's relay rule and SBS
// judge it) and counts are forgotten on the frames' clock: a burst or a
// replay counts what live frames count. Exact duplicates (same receiver,
// timestamp and bytes) are counted, as readsb and dump1090 count every
// message they receive (8,922 on the shared capture, its 4,464 repeats
// included: cmd/cuasd's TestReadsbOutputsAgainstDump1090 compares them).
type frameCounter struct {
	mu     sync.Mutex
	clock  output.FrameClock
	filter beastout.Filter
	by     map[uint32]*frameStats
	total  uint64
}

// add counts the frames of one raw message received at now (Unix ns; its
// Cuas-Recv-Ns header says so when it has one).
func (c *frameCounter) add(m *nats.Msg, now int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by == nil {
		c.by = map[uint32]*frameStats{}
	}
	c.clock.Begin(m, now)
	framing := m.Header.Get(bus.HeaderFraming)
	if framing == bus.FramingBeast {
		_ = bus.EachBeast(m.Data, func(typ byte, ts uint64, sig byte, data []byte) error {
			if typ != bus.BeastModeAC {
				c.frame(data, ts, sig, true)
			}
			return nil
		})
		return
	}
	_, _ = bus.EachFrameTS(framing, m.Data, nil, func(_ int, ts uint64, data []byte) error {
		c.frame(data, ts, 0, false)
		return nil
	})
}

// frame counts one frame whose own timestamp is ts (0: none).
func (c *frameCounter) frame(data []byte, ts uint64, sig byte, hasSig bool) {
	at, _ := c.clock.Frame(ts, data)
	addr, ok := c.filter.Address(data, at)
	if !ok {
		return
	}
	s := c.by[addr]
	if s == nil {
		s = &frameStats{}
		c.by[addr] = s
	}
	s.messages++
	s.heard = sensorclock.Newer(s.heard, at)
	c.total++
	if hasSig {
		a := float64(sig) / 255
		s.power[s.nPower%len(s.power)] = a * a
		s.nPower++
	}
}

// lookup returns the counts of an ICAO address given as 6 hex digits.
func (c *frameCounter) lookup(icao string) (messages uint64, rssi float64, hasRSSI, ok bool) {
	a, err := strconv.ParseUint(icao, 16, 32)
	if err != nil || len(icao) != 6 {
		return 0, 0, false, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.by[uint32(a)]
	if s == nil {
		return 0, 0, false, false
	}
	n := min(s.nPower, len(s.power))
	if n == 0 {
		return s.messages, 0, false, true
	}
	sum := 0.0
	for _, p := range s.power[:n] {
		sum += p
	}
	// dump1090's rssi: the mean power of the last 8 messages, in dBFS.
	return s.messages, math.Round(10*math.Log10(math.Max(sum/float64(n), 1.125e-5))*10) / 10, true, true
}

// forgetFrames is how long an address's counts outlive its last frame.
const forgetFrames = 5 * 60e9

// sweep forgets addresses not heard for forgetFrames before the newest
// frame's time: on the frames' clock, not the wall's, so that a capture
// replayed long after keeps its counts as it did live.
func (c *frameCounter) sweep() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Latest
	for a, s := range c.by {
		if sensorclock.Since(s.heard, now) > forgetFrames {
			delete(c.by, a)
		}
	}
	c.filter.Expire(now)
}

// totalMessages is the number of Mode S messages counted so far.
func (c *frameCounter) totalMessages() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}
