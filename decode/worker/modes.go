package worker

import (
	"sync"
	"sync/atomic"

	"github.com/cuasd/cuasd/decode/adsb"
	"github.com/cuasd/cuasd/decode/sensorclock"
)

// ModeSFrame is one Mode S message a Feed decoded: its CRC held, or its
// address came from its parity (adsb.CRCAddressParity; whether that
// address is an aircraft's is the consumer's to judge).
type ModeSFrame struct {
	// At is the frame's time as fusion judges it: its sensor's timestamp
	// mapped by the sensor's clock model, the arrival when it had none.
	At  sensorclock.Time
	Msg adsb.Message
}

// ModeSBatch is the Mode S messages of one raw message, in order, as a
// ModeSTap hands them on.
type ModeSBatch struct {
	// Meta is what the raw message's headers said (sensor, simulated,
	// storage time).
	Meta *Meta
	// Seq is the raw message's sequence in CUAS_RAW (0: unknown). With
	// Meta.StoredUnixNano it tells a message handed again, when the feed
	// starts over and replays the stream, from a new one.
	Seq    uint64
	Frames []ModeSFrame
}

// ModeSTap hands the Mode S messages a Feed decodes to consumers in the
// same process (issue 30: per-message SBS), so that a consumer writing a
// line per message neither hears every raw frame again on NATS nor
// decodes it a second time. Exact duplicates and frames over a sensor's
// rate limit are left out, as fusion leaves them out. The zero value is
// ready; it is safe for concurrent use.
type ModeSTap struct {
	mu   sync.Mutex
	next uint64
	fns  []modeSConsumer
	// n is len(fns), read without the lock on every raw message: with no
	// consumer the feed does not gather the messages at all.
	n atomic.Int32
}

type modeSConsumer struct {
	id uint64
	fn func(*ModeSBatch)
}

// Tap calls fn with the Mode S messages of every raw message the feed
// decodes, on the feed's goroutine, until stop is called. fn must not
// block, and must not keep the batch or anything it points to: both are
// reused for the next message.
func (t *ModeSTap) Tap(fn func(b *ModeSBatch)) (stop func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	id := t.next
	t.fns = append(t.fns, modeSConsumer{id, fn})
	t.n.Store(int32(len(t.fns)))
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		for i, c := range t.fns {
			if c.id == id {
				t.fns = append(t.fns[:i:i], t.fns[i+1:]...)
				break
			}
		}
		t.n.Store(int32(len(t.fns)))
	}
}

// active reports whether anyone listens (nil: no tap).
func (t *ModeSTap) active() bool { return t != nil && t.n.Load() > 0 }

// hand gives b to every consumer.
func (t *ModeSTap) hand(b *ModeSBatch) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.fns {
		c.fn(b)
	}
}

// decodedModeS is implemented by the ADSB FrameDecoder: the Mode S
// message its last Decode produced, nil when it produced none (an error,
// a CRC that is neither good nor an address, an SBS line).
type decodedModeS interface {
	lastModeS() *adsb.Message
}

// gatherModeS keeps the Mode S message the frame just decoded was, for
// the tap.
func (d *msgDecoder) gatherModeS(at sensorclock.Time) {
	if m := d.decodedS.lastModeS(); m != nil {
		d.modeSBatch.Frames = append(d.modeSBatch.Frames, ModeSFrame{At: at, Msg: *m})
	}
}
