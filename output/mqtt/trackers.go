package mqtt

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/cuasd/cuasd/events"
)

// Circle is a place and a radius: the aircraft inside it are shown on
// Home Assistant's map (Config.Aircraft).
type Circle struct {
	Lat, Lon float64
	RadiusM  float64
}

// contains reports whether lat, lon is within c (great-circle distance on
// a sphere of the Earth's mean radius: metres of error at the radii a
// map view uses).
func (c *Circle) contains(lat, lon float64) bool {
	const r = 6371008.8
	p1, p2 := c.Lat*math.Pi/180, lat*math.Pi/180
	dp, dl := p2-p1, (lon-c.Lon)*math.Pi/180
	a := math.Sin(dp/2)*math.Sin(dp/2) + math.Cos(p1)*math.Cos(p2)*math.Sin(dl/2)*math.Sin(dl/2)
	return 2*r*math.Asin(math.Min(1, math.Sqrt(a))) <= c.RadiusM
}

// trackers are the live tracks shown to Home Assistant as device_tracker
// entities (issue 34): every drone (a Remote ID or MAVLink track) with a
// position, and the aircraft (ADS-B) inside Config.Aircraft when set.
// Each has a retained discovery config and a retained attributes message
// (latitude, longitude, gps_accuracy: what HA's MQTT device tracker reads
// from json_attributes_topic); both are removed (empty retained messages)
// when the track ends, or when an aircraft leaves the circle. The event
// loop changes it while paho's connect handler reads it, hence mu.
type trackers struct {
	mu       sync.Mutex
	aircraft *Circle
	attrs    map[string][]byte // track id → its last attributes
}

func newTrackers(aircraft *Circle) *trackers {
	return &trackers{aircraft: aircraft, attrs: map[string][]byte{}}
}

// wants reports whether the output needs the track events of protocol
// (the subject's): drones always, aircraft only with a circle.
func (ts *trackers) wants(protocol string) bool {
	return protocol != "adsb" || ts.aircraft != nil
}

// trackerAttrs is the attributes message of one tracker.
type trackerAttrs struct {
	Latitude    float64  `json:"latitude"`
	Longitude   float64  `json:"longitude"`
	GPSAccuracy float64  `json:"gps_accuracy"`
	TrackID     string   `json:"track_id"`
	Protocols   []string `json:"protocols"`
	AltM        *float64 `json:"alt_m,omitempty"`
	AltKind     string   `json:"alt_kind,omitempty"`
	SpeedMps    *float64 `json:"speed_mps,omitempty"`
	HeadingDeg  *float64 `json:"heading_deg,omitempty"`
	Callsign    string   `json:"callsign,omitempty"`
	LastSeen    string   `json:"last_seen"`
}

// trackerChange is what one track event does to a tracker: show it (new
// says its discovery config must be sent first) or remove it.
type trackerChange struct {
	id      string
	drone   bool
	new     bool
	removed bool
	attrs   []byte
}

// apply reads a track event; it returns the change to publish, or nil.
func (ts *trackers) apply(t *events.TrackEvent, lost bool) *trackerChange {
	tr := &t.Track
	drone := slices.ContainsFunc(tr.Protocols, func(p string) bool { return p == "remoteid" || p == "mavlink" })
	show := !lost && tr.Lat != nil && tr.Lon != nil &&
		(drone || ts.aircraft != nil && slices.Contains(tr.Protocols, "adsb") && ts.aircraft.contains(*tr.Lat, *tr.Lon))
	ts.mu.Lock()
	defer ts.mu.Unlock()
	_, known := ts.attrs[tr.TrackID]
	if !show {
		if !known {
			return nil
		}
		delete(ts.attrs, tr.TrackID)
		return &trackerChange{id: tr.TrackID, removed: true}
	}
	a := trackerAttrs{Latitude: *tr.Lat, Longitude: *tr.Lon, TrackID: tr.TrackID, Protocols: tr.Protocols,
		AltM: tr.AltM, AltKind: tr.AltKind, SpeedMps: tr.SpeedMps, HeadingDeg: tr.HeadingDeg, Callsign: tr.Callsign,
		LastSeen: tr.LastSeen.UTC().Format("2006-01-02T15:04:05.000Z07:00")}
	if tr.HAccuracyM != nil {
		a.GPSAccuracy = *tr.HAccuracyM
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil // a non-finite measurement: keep the last position
	}
	ts.attrs[tr.TrackID] = b
	return &trackerChange{id: tr.TrackID, drone: drone, new: !known, attrs: b}
}

// all is every shown tracker, for announcing after a (re)connect.
func (ts *trackers) all() []trackerChange {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	out := make([]trackerChange, 0, len(ts.attrs))
	for id, b := range ts.attrs {
		var a trackerAttrs
		_ = json.Unmarshal(b, &a)
		drone := slices.ContainsFunc(a.Protocols, func(p string) bool { return p == "remoteid" || p == "mavlink" })
		out = append(out, trackerChange{id: id, drone: drone, new: true, attrs: b})
	}
	slices.SortFunc(out, func(a, b trackerChange) int { return strings.Compare(a.id, b.id) })
	return out
}

// trackerObject is a tracker's discovery object id.
func trackerObject(id string) string { return "track_" + topicToken(id) }

// publishTracker sends a tracker change: the discovery config when new,
// then its attributes; or, removed, empty retained messages for both.
func (o *Output) publishTracker(c paho.Client, ch *trackerChange) {
	attrsTopic := o.cfg.Prefix + "/tracker/" + topicToken(ch.id) + "/attributes"
	if ch.removed {
		if o.cfg.DiscoveryPrefix != "off" {
			c.Publish(fmt.Sprintf("%s/device_tracker/%s/%s/config", o.cfg.DiscoveryPrefix, topicToken(o.cfg.Node), trackerObject(ch.id)), 1, true, []byte{})
		}
		c.Publish(attrsTopic, 1, true, []byte{})
		return
	}
	if ch.new && o.cfg.DiscoveryPrefix != "off" {
		kind, icon := "Aircraft ", "mdi:airplane"
		if ch.drone {
			kind, icon = "Drone ", "mdi:quadcopter"
		}
		d := o.discovery("device_tracker", trackerObject(ch.id), map[string]any{"name": kind + ch.id,
			"json_attributes_topic": attrsTopic, "source_type": "gps", "icon": icon})
		c.Publish(d.topic, 1, true, d.payload)
	}
	c.Publish(attrsTopic, 1, true, ch.attrs)
}
