package history

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cuasd/cuasd/events"
)

// trackEventRef is what the recorder read of a track event with
// encoding/json before it had its own decoder: the reference the
// hand-written decoder must agree with.
type trackEventRef struct {
	V     int    `json:"v"`
	Type  string `json:"type"`
	Track struct {
		TrackID    string         `json:"track_id"`
		Lat        *float64       `json:"lat"`
		Lon        *float64       `json:"lon"`
		AltM       *float64       `json:"alt_m"`
		AltKind    string         `json:"alt_kind"`
		SpeedMps   *float64       `json:"speed_mps"`
		HeadingDeg *float64       `json:"heading_deg"`
		VRateMps   *float64       `json:"vertical_rate_mps"`
		Sensors    []string       `json:"sensors"`
		LastSeen   time.Time      `json:"last_seen"`
		History    []events.Point `json:"history"`
	} `json:"track"`
	Assessment *struct {
		Decision string  `json:"decision"`
		Lambda   float64 `json:"lambda"`
	} `json:"assessment"`
}

// refOf is the hand decoder's result in the reference's shape.
func refOf(ev *events.TrackEvent) trackEventRef {
	var r trackEventRef
	r.V, r.Type = ev.V, ev.Type
	t := &ev.Track
	r.Track.TrackID, r.Track.Lat, r.Track.Lon, r.Track.AltM, r.Track.AltKind = t.TrackID, t.Lat, t.Lon, t.AltM, t.AltKind
	r.Track.SpeedMps, r.Track.HeadingDeg, r.Track.VRateMps = t.SpeedMps, t.HeadingDeg, t.VRateMps
	r.Track.Sensors, r.Track.LastSeen, r.Track.History = t.Sensors, t.LastSeen, t.History
	if a := ev.Assessment; a != nil {
		r.Assessment = &struct {
			Decision string  `json:"decision"`
			Lambda   float64 `json:"lambda"`
		}{a.Decision, a.Lambda}
	}
	return r
}

// checkDecodeMatches fails when the hand decoder and encoding/json
// disagree on data: one accepting what the other rejects, or different
// values (compared as their JSON encodings, which show nil against
// empty, every float bit and every time's instant and zone).
func checkDecodeMatches(t *testing.T, data []byte) {
	t.Helper()
	var want trackEventRef
	wantErr := json.Unmarshal(data, &want)
	got, err := decodeTrackEvent(data)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: hand decoder error %v, encoding/json error %v", data, err, wantErr)
	}
	if err != nil {
		return
	}
	a, errA := json.Marshal(refOf(got))
	b, errB := json.Marshal(want)
	if string(a) != string(b) || errA != nil || errB != nil {
		t.Fatalf("%q:\nhand decoder  %s (%v)\nencoding/json %s (%v)", data, a, errA, b, errB)
	}
}

var decodeSeeds = []string{
	`{"v":1,"type":"track.update","time":"2026-11-26T05:00:01Z","instance":"a","track":{"track_id":"adsb:4CA1FA","id":"adsb:4CA1FA","protocols":["adsb"],"lat":51.5,"lon":-0.1,"alt_m":10000,"alt_kind":"barometric","speed_mps":230,"heading_deg":90,"vertical_rate_mps":0,"sensors":["rx1","rx2"],"first_seen":"2026-11-26T04:00:00Z","last_seen":"2026-11-26T05:00:00.5Z","observations":100,"warnings":[],"air_data":{"x":[1,2,{"y":null}]},"history":[{"t":"2026-11-26T05:00:00Z","lat":51.5,"lon":-0.1,"alt_m":10000},{"t":"2026-11-26T05:00:00.123456789Z","lat":51.5,"lon":-0.099}]},"assessment":{"decision":"monitor","lambda":0.12,"human_decision_required":true,"breach":false,"caps":[]}}`,
	`{"v":1,"type":"track.update","track":{"track_id":"x","history":[{"t":"2026-11-26T05:00:00Z","lat":1,"lon":2},{"t":"2026-11-26T05:00:00Z","lat":1,"lon":3}]},"assessment":{"decision":"alert","lambda":0.5}}`,
	`{"v":1,"type":"track.lost","track":{}}`,
	`null`,
	` {"v":1,"track":null,"assessment":null} `,
	`{"V":1,"TYPE":"track.update","Track":{"Track_ID":"k","\u212aind":1,"la\u0074":1e2,"lon":-0,"LAST_SEEN":"2026-11-26T05:00:00+02:00","sensors":null,"history":null}}`,
	`{"v":1.0}`,
	`{"v":1,"track":{"lat":"51"}}`,
	`{"v":1,"track":{"last_seen":"2026-02-30T05:00:00Z"}}`,
	`{"v":1,"track":{"last_seen":"2026-11-26T05:00:00.1234567891Z"}}`,
	`{"v":1,"track":{"track_id":"caf\u00e9 \"q\" \ud83d\ude00","sensors":["a",null,"\u0000"],"history":[null,{"t":null,"lat":null}]}}`,
	`{"v":1,"track":{"lat":01}}`,
	`{"v":1,"track":{"lat":1.}}`,
	`{"v":1,"track":{"lat":.5}}`,
	`{"v":1,"track":{"lat":1e400}}`,
	`{"v":1,"x":[1,2,}`,
	`{"v":1,"x":tru}`,
	`{"v":1} x`,
	"{\"v\":1,\"type\":\"\xff\xfe\"}",
	"{\"v\":1,\"type\":\"a\tb\"}",
}

func TestDecodeTrackEventMatchesEncodingJSON(t *testing.T) {
	for _, s := range decodeSeeds {
		checkDecodeMatches(t, []byte(s))
	}
}

// FuzzDecodeTrackEventMatchesEncodingJSON: on any bytes the hand decoder
// accepts exactly what encoding/json accepts, with the same values.
func FuzzDecodeTrackEventMatchesEncodingJSON(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecodeMatches)
}
