package cot_test

import (
	"fmt"
	"time"

	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/output/cot"
)

// A Remote ID drone the gate put on alert, as ATAK receives it.
func ExampleEncoder_AppendTrack() {
	lat, lon, alt, speed := 52.31, 4.76, 120.5, 12.0
	ev := &events.TrackEvent{
		Header: events.Header{V: 1, Type: events.TypeTrackUpdate, Instance: "default",
			Time: time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)},
		Track: events.Track{TrackID: "rid:1581F5BKD223Q00A0123", Protocols: []string{"remoteid"},
			UASID: "1581F5BKD223Q00A0123", Category: "helicopter_or_multirotor",
			Lat: &lat, Lon: &lon, AltM: &alt, AltKind: "geo", SpeedMps: &speed},
		Assessment: &events.Assessment{Decision: "alert", Lambda: 0.62},
	}
	var e cot.Encoder
	doc, _ := e.AppendTrack(nil, ev)
	fmt.Println(cot.UID(ev.Instance, ev.Track.TrackID))
	fmt.Println(cot.Type(&ev.Track, ev.Assessment))
	fmt.Println(len(doc) < cot.MaxDatagram)
	// Output:
	// cuasd.default.rid-1581F5BKD223Q00A0123
	// a-s-A-M-H-Q
	// true
}
