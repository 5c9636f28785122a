package history

import (
	"testing"
	"time"
)

// FuzzParseCursor: any string is a cursor or an error, never a panic, and
// a cursor read back encodes to one that reads back the same.
func FuzzParseCursor(f *testing.F) {
	f.Add(Cursor{TrackID: "adsb:4CA1FA", Time: t0}.String())
	f.Add("")
	f.Add("MTIzfA")
	f.Add("LTF8eA")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCursor(s)
		if err != nil {
			return
		}
		again, err := ParseCursor(c.String())
		if err != nil || again.TrackID != c.TrackID || !again.Time.Equal(c.Time) {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, c, c.String(), again, err)
		}
	})
}

// FuzzTrackEvent: any bytes on cuas.track.> give points or nothing, never
// a panic, and every point belongs to the event's track with times in
// strictly increasing order.
func FuzzTrackEvent(f *testing.F) {
	f.Add([]byte(`{"v":1,"type":"track.update","track":{"track_id":"adsb:4CA1FA","lat":51,"lon":-1,"last_seen":"2026-11-26T05:00:00Z"}}`))
	f.Add([]byte(`{"v":1,"type":"track.update","track":{"track_id":"x","history":[{"t":"2026-11-26T05:00:00Z","lat":1,"lon":2},{"t":"2026-11-26T05:00:00Z","lat":1,"lon":3}]},"assessment":{"decision":"alert","lambda":0.5}}`))
	f.Add([]byte(`{"v":1,"type":"track.lost","track":{}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := decodeTrackEvent(data)
		if err != nil {
			return
		}
		pts := pointsOf(ev, "adsb", nil, nil)
		var last time.Time
		for i, p := range pts {
			if p.TrackID != ev.Track.TrackID || (i > 0 && !p.Time.After(last)) {
				t.Fatalf("point %d %+v after %s", i, p, last)
			}
			last = p.Time
		}
	})
}
