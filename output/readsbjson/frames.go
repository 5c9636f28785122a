package readsbjson

import (
	"math"
	"strconv"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/output/beastout"
)

// frameStats is what readsb counts per address from the frames
// themselves: every CRC-checked Mode S message (all-call replies too, which
// change no track) and the signal level of the last 8.
type frameStats struct {
	messages uint64
	power    [8]float64 // amplitude², 0..1
	nPower   int
	heard    int64 // Unix ns
}

// frameCounter counts the raw Mode S frames per address, as readsb's
// "messages" and "rssi" do; the track events cannot, since a track counts
// only the messages that changed it.
type frameCounter struct {
	mu     sync.Mutex
	filter beastout.Filter
	by     map[uint32]*frameStats
	total  uint64
}

// add counts the frames of one raw message received at now (Unix ns).
func (c *frameCounter) add(m *nats.Msg, now int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by == nil {
		c.by = map[uint32]*frameStats{}
	}
	framing := m.Header.Get(bus.HeaderFraming)
	if framing == bus.FramingBeast {
		_ = bus.EachBeast(m.Data, func(typ byte, _ uint64, sig byte, data []byte) error {
			if typ != bus.BeastModeAC {
				c.frame(data, sig, true, now)
			}
			return nil
		})
		return
	}
	_, _ = bus.EachFrame(framing, m.Data, nil, func(_ int, data []byte) error {
		c.frame(data, 0, false, now)
		return nil
	})
}

func (c *frameCounter) frame(data []byte, sig byte, hasSig bool, now int64) {
	addr, ok := c.filter.Address(data, now)
	if !ok {
		return
	}
	s := c.by[addr]
	if s == nil {
		s = &frameStats{}
		c.by[addr] = s
	}
	s.messages++
	s.heard = now
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

// sweep forgets addresses not heard for forgetFrames before now (Unix ns).
func (c *frameCounter) sweep(now int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for a, s := range c.by {
		if now-s.heard > forgetFrames {
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
