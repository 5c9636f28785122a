package output

import (
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/sensorclock"
)

// FrameClock times the frames of raw messages (cuas.raw.>) by their
// receiver's clock, as the decoder times them for fusion (issue 30): one
// sensorclock.Model per sensor, each frame's own timestamp (a Beast
// record's, or an lpt frame's) read as the message's Cuas-Clock says,
// else the message's Cuas-Sensor-Ns, else its arrival (Cuas-Recv-Ns). The
// outputs that read raw frames (per-message SBS, Beast out's relay rule,
// aircraft.json's message counts) judge each frame on that time and
// forget on Latest, the frames' clock (each on the receiver's own clock
// where two times share one, as fusion does: in a burst the mapped UTC
// times bunch up at the arrival), so that a burst, a reconnect or a
// replay of old frames gives what the same frames paced live give. It is
// not safe for concurrent use; its zero value is ready.
type FrameClock struct {
	clocks sensorclock.Clocks
	model  *sensorclock.Model
	stamp  sensorclock.Stamp
	last   sensorclock.Time // the last time Frame gave
	// Latest is the newest frame time given (sensorclock.Newer): the
	// frames' clock, on which outputs forget.
	Latest sensorclock.Time
}

// Begin reads the headers of raw message m, which arrived at now (Unix ns:
// the arrival when m has no Cuas-Recv-Ns header), for the Frame calls of
// its frames that follow. It returns the message's sensor (its
// Cuas-Sensor header, else the subject's last token). An unknown
// Cuas-Clock reads as the default, 12mhz.
func (c *FrameClock) Begin(m *nats.Msg, now int64) (sensor string) {
	sensor = m.Header.Get(bus.HeaderSensor)
	if sensor == "" {
		_, sensor, _ = bus.SplitSubject(bus.RawPrefix, m.Subject)
	}
	s := sensorclock.Stamp{Ns: m.Header.Get(bus.HeaderFraming) == bus.FramingLPT, Arrival: now}
	if v := positive(m.Header.Get(bus.HeaderRecvTime)); v > 0 {
		s.Arrival = v
	}
	s.Kind, _ = sensorclock.ParseKind(m.Header.Get(bus.HeaderClock))
	s.SensorNs = positive(m.Header.Get(bus.HeaderSensorTime))
	c.model, c.stamp = c.clocks.Sensor(sensor), s
	return sensor
}

// positive reads a header's decimal nanoseconds, 0 when absent or not a
// positive number (an absent header is not parsed: strconv's error
// allocates, and this runs once per raw message).
func positive(v string) int64 {
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// Frame returns the time of the next frame of the message begun, whose own
// timestamp is ts (0: none), and advances Latest. dup reports an exact
// duplicate of a recent frame of the same sensor (same timestamp, same
// bytes: a re-sent frame) or a frame the clock model judges re-sent (a
// reconnecting feeder repeating more than the duplicate check remembers),
// both of which the decoder drops before decoding. A duplicate is not
// given to the clock model (its old timestamp, often seconds back, would
// look like a receiver restart): its time, and a re-sent frame's, is the
// last one Frame gave.
func (c *FrameClock) Frame(ts uint64, frame []byte) (t sensorclock.Time, dup bool) {
	if c.model == nil {
		c.model = c.clocks.Sensor("") // Frame before Begin: no headers
	}
	if c.model.Duplicate(c.stamp.Key(ts), frame) {
		return c.last, true
	}
	if t, dup = c.model.Judge(ts, c.stamp); dup {
		return c.last, true
	}
	c.Advance(t)
	c.last = t
	return t, false
}

// Advance moves Latest on to t, a frame time given elsewhere (fusion's
// feed, which times the frames it decodes with the same mapping).
func (c *FrameClock) Advance(t sensorclock.Time) {
	c.Latest = sensorclock.Newer(c.Latest, t)
}
