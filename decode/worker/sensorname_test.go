package worker

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuasd/cuasd/bus"
)

// TestSensorNameRuleOnRawPath (issue 32, item 4): HTTP refused a sensor
// named `=HYPERLINK("x")` while a raw publisher on NATS could use it (in
// its subject or Cuas-Sensor header), and it reached the history's CSV
// export. The raw path now applies the same rule (bus.ValidSensor): such
// a message is a dead letter with reason "sensor", and a valid name
// decodes.
func TestSensorNameRuleOnRawPath(t *testing.T) {
	frame := []byte{0x8D, 0x40, 0x6B, 0x90, 0x20, 0x15, 0xA6, 0x78, 0xD4, 0xD2, 0x20, 0xAA, 0x4B, 0xDA}
	m := NewMetrics(nil)
	now := time.Now().UnixNano()
	for sensor, valid := range map[string]bool{
		"rx1": true, "beast-in-192-0-2-7": true, "RX_2": true,
		`=HYPERLINK("x")`: false, "+1": false, "@SUM(A1)": false, "rx.1": false, "rx 1": false,
		"<b>": false, "": false, strings.Repeat("a", 65): false,
	} {
		d := msgDecoder{dec: &ADSB{}}
		d.decodeMessage("", frame, Meta{Sensor: sensor, RecvUnixNano: now, StoredUnixNano: now}, m)
		if valid {
			if len(d.obs) != 1 || len(d.dead) != 0 {
				t.Errorf("sensor %q: %d observations, %d dead letters; want it decoded", sensor, len(d.obs), len(d.dead))
			}
			continue
		}
		if len(d.obs) != 0 || len(d.dead) != 1 || d.dead[0].reason != "sensor" {
			t.Errorf("sensor %q: %d observations, dead %+v; want one dead letter for the name", sensor, len(d.obs), d.dead)
		}
	}
}

// TestDeadLettersAreCut: a dead letter keeps at most MaxDeadLetterBytes of
// its frame and says how long the whole was.
func TestDeadLettersAreCut(t *testing.T) {
	for _, n := range []int{10, MaxDeadLetterBytes, MaxDeadLetterBytes + 1, bus.MaxBatchBytes} {
		msg := deadMsg("adsb", 7, Meta{Sensor: "rx1"}, deadLetter{idx: -1, frame: make([]byte, n), reason: "framing"})
		want, cut := n, ""
		if n > MaxDeadLetterBytes {
			want, cut = MaxDeadLetterBytes, strconv.Itoa(n)
		}
		if len(msg.Data) != want || msg.Header.Get(bus.HeaderTruncated) != cut {
			t.Errorf("%d bytes: dead letter of %d bytes, %s %q", n, len(msg.Data), bus.HeaderTruncated, msg.Header.Get(bus.HeaderTruncated))
		}
	}
}
