package cot

import (
	"testing"

	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/gate"
)

func TestDocUID(t *testing.T) {
	var e Encoder
	evil := droneAlert()
	evil.Track.UASID = `x" type="t-x-d-d"`
	track, _ := e.AppendTrack(nil, evil)
	del, _ := e.AppendZone(nil, &events.ZoneEvent{Header: hdr(events.TypeZoneDeleted), Zone: gate.Geofence{ID: "z1"}})
	zone, _ := e.AppendZone(nil, circleZone())
	for _, c := range []struct {
		doc  []byte
		want string
	}{
		{track, "cuasd.site1.rid-1581F5BKD223Q00A0123"},
		{del, "cuasd.site1.zone-z1"},
		{zone, "cuasd.site1.zone-demo-site"},
		{[]byte("no event"), ""},
	} {
		if got := docUID(c.doc); got != c.want {
			t.Errorf("docUID = %q, want %q in %s", got, c.want, c.doc)
		}
	}
}
