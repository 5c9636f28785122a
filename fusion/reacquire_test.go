package fusion

import (
	"testing"
	"time"

	"github.com/cuasd/cuasd/decode"
	"github.com/cuasd/cuasd/decode/sensorclock"
)

// timedFix is a position timed by a receiver's free-running clock: the
// sensor's own ns on clock epoch, mapped to recv.
func timedFix(lat, lon float64, epoch uint32, sensorNs, recv int64) decode.Observation {
	o := ridObs("X", lat, lon, recv)
	o.SensorNs, o.SensorClock, o.TimeSource = sensorNs, epoch, sensorclock.FromReceiver
	return o
}

// TestReceiverClockResetReacquires: across a reset of a receiver's
// free-running clock (a receiver restart in a replayed recording, or a
// reconnecting feeder re-sending its buffer), the time between the last
// position of the old epoch and the first of the new is not known: the
// model anchors the new epoch at an arrival, and in a burst or a replay
// the arrivals are milliseconds apart however long the receiver was
// down. Two positions that agree by the new epoch's own clock are taken,
// so the track follows the aircraft; before, every position after a
// 20-second gap was refused as a jump and the track froze at the old
// one for the rest of the burst. A single wild position after the
// reset, and a jump on the epoch of the last accepted position, are
// still refused.
func TestReceiverClockResetReacquires(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	t0 := c.t.UnixNano()
	const step = 0.0022 // degrees of latitude a second: about 245 m/s
	lat := func(sec int) float64 { return 52 + step*float64(sec) }
	arrive := t0 // a burst: a microsecond apart
	apply := func(o decode.Observation) {
		arrive += 1000
		s.Apply(&o)
	}
	for sec := 0; sec < 20; sec++ { // epoch 1, clock at 7,000 s
		apply(timedFix(lat(sec), 4, 1, int64(7000+sec)*1e9, arrive))
	}
	// The receiver was down 20 s and restarted: epoch 2, clock from 1 s.
	// Its first position is a garbled one, 50 km off.
	apply(timedFix(lat(40)+0.45, 4, 2, 1e9, arrive))
	for sec := 41; sec < 60; sec++ {
		apply(timedFix(lat(sec), 4, 2, int64(sec-40+1)*1e9, arrive))
	}
	tr, _ := s.Get("rid:X")
	if tr.Lat != lat(59) {
		t.Fatalf("track at %.4f after the reset, want the last position %.4f (frozen at %.4f?); %d rejected",
			tr.Lat, lat(59), lat(19), tr.RejectedPositions)
	}
	if tr.RejectedPositions != 2 { // the garbled one, and the first after it
		t.Errorf("%d positions rejected, want 2", tr.RejectedPositions)
	}
	// A jump on the epoch of the last accepted position is refused, even
	// when a second position agrees with it.
	apply(timedFix(lat(60)+0.45, 4, 2, 21e9, arrive))
	apply(timedFix(lat(61)+0.45, 4, 2, 22e9, arrive))
	if tr, _ = s.Get("rid:X"); tr.Lat != lat(59) {
		t.Errorf("a jump on the receiver's running clock was taken: at %.4f", tr.Lat)
	}
}

// TestReacquireOnlyAcrossTheSameReceiversReset: positions heard by a
// second receiver (its own clock epoch) are no reset of the clock of the
// receiver that holds the track: two of them that agree with each other
// and jump 50 km from the track (a spoofer sending faster than the
// aircraft, heard by the second receiver) stay refused.
func TestReacquireOnlyAcrossTheSameReceiversReset(t *testing.T) {
	c := &clock{time.Unix(1_700_000_000, 0)}
	s := newTestStore(c)
	arrive := c.t.UnixNano()
	apply := func(o decode.Observation, sensor string) {
		arrive += 1000
		o.Sensor = sensor
		s.Apply(&o)
	}
	for sec := 0; sec < 10; sec++ {
		apply(timedFix(52+0.0022*float64(sec), 4, 1, int64(7000+sec)*1e9, arrive), "rx1")
	}
	for k := 0; k < 5; k++ { // the spoofer's, each a second later on rx2's clock
		apply(timedFix(52.45, 4+0.001*float64(k), 7, int64(500+k)*1e9, arrive), "rx2")
	}
	if tr, _ := s.Get("rid:X"); tr.Lat != 52+0.0022*9 || tr.RejectedPositions != 5 {
		t.Fatalf("track at %.4f with %d rejected, want still at %.4f with the 5 of the second receiver rejected",
			tr.Lat, tr.RejectedPositions, 52+0.0022*9)
	}
}
