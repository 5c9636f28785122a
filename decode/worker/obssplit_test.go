package worker

import (
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode"
)

// recordingDurable keeps what a Worker publishes.
type recordingDurable struct {
	Durable
	msgs []*nats.Msg
}

func (r *recordingDurable) PublishAsync(m *nats.Msg) (bus.PubAckFuture, error) {
	r.msgs = append(r.msgs, m)
	return bus.PubAckFuture{}, nil
}

// TestObservationBatchesFitAMessage (issue 32): the observations of one
// raw message in one partition are published in messages that fit NATS's
// limit (bus.MaxMessageBytes, now 1 MiB on the embedded server too), each
// with its own de-duplication id, and none is lost.
func TestObservationBatchesFitAMessage(t *testing.T) {
	js := &recordingDurable{}
	w := NewWorker(js, &ADSB{}, nil, nil)
	const n = 20000
	for range n {
		w.dec.obs = append(w.dec.obs, decode.Observation{Protocol: decode.ADSB, Key: "406B90", ICAO: "406B90",
			Callsign: "TEST1234", Sensor: strings.Repeat("s", 64), TimeUnixNano: 1})
	}
	if _, failed := w.publishObservations(7, nil); failed {
		t.Fatal("publish failed")
	}
	ids := map[string]bool{}
	got := 0
	for _, m := range js.msgs {
		if len(m.Data) > bus.MaxMessageBytes-4096 {
			t.Errorf("a batch of %d bytes", len(m.Data))
		}
		id := m.Header.Get(bus.HeaderMsgID)
		if ids[id] {
			t.Errorf("id %s twice", id)
		}
		ids[id] = true
		_ = decode.EachInBatch(m.Data, func(*decode.Observation) error { got++; return nil })
	}
	if got != n || len(js.msgs) < 2 {
		t.Errorf("%d observations in %d messages, want %d in several", got, len(js.msgs), n)
	}
}
