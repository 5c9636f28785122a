package mqtt

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/gate"
	"github.com/cuasd/cuasd/output/alert"
)

// picture is the part of the threat picture the Home Assistant sensors
// show, kept from threat, zone and track-lost events. The event loop
// changes it while paho's connect handler reads it, hence mu.
type picture struct {
	mu      sync.Mutex
	tracks  map[string]threatState
	zoneMap map[string]string
	last    map[string]string
}

type threatState struct {
	zone   string
	breach bool
	alert  bool
	lambda float64
}

func newPicture() *picture {
	return &picture{tracks: map[string]threatState{}, zoneMap: map[string]string{}, last: map[string]string{}}
}

// zone notes a zone; it reports whether it is new or renamed (its
// discovery config must be sent).
func (p *picture) zone(id, name string) (changed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old, ok := p.zoneMap[id]
	p.zoneMap[id] = name
	return !ok || old != name
}

// dropZone forgets a deleted zone; it reports whether it was known.
func (p *picture) dropZone(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.zoneMap[id]
	delete(p.zoneMap, id)
	delete(p.last, "zone/"+topicToken(id)+"/breach")
	return ok
}

// zoneChange is a zone whose discovery config must be sent or removed.
type zoneChange struct {
	Zone
	deleted bool
}

func (p *picture) zones() []Zone {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Zone, 0, len(p.zoneMap))
	for id, n := range p.zoneMap {
		out = append(out, Zone{ID: id, Name: n})
	}
	slices.SortFunc(out, func(a, b Zone) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// apply reads one event; it returns a zone added, renamed or deleted, and
// the state publications whose payload changed.
func (p *picture) apply(b []byte) (*zoneChange, []publication) {
	h, err := events.Peek(b)
	if err != nil {
		return nil, nil
	}
	var zc *zoneChange
	switch h.Type {
	case events.TypeThreat:
		var t events.ThreatEvent
		if json.Unmarshal(b, &t) != nil {
			return nil, nil
		}
		d, _ := alert.ParseDecision(t.Threat.Decision)
		p.mu.Lock()
		// A zone's breach sensor is about drones (issue 33): an airliner
		// crossing an airport's zone on its approach does not switch it
		// on; a drone or a track of unknown class does.
		aircraft := t.Threat.Class == string(gate.TrackAircraft)
		p.tracks[t.Threat.TrackID] = threatState{zone: t.Threat.Geofence, breach: t.Threat.Breach && !aircraft, alert: d >= gate.Alert, lambda: t.Threat.Lambda}
		p.mu.Unlock()
	case events.TypeTrackLost:
		var t events.TrackEvent
		if json.Unmarshal(b, &t) != nil {
			return nil, nil
		}
		p.mu.Lock()
		delete(p.tracks, t.Track.TrackID)
		p.mu.Unlock()
	case events.TypeZoneUpsert:
		var z events.ZoneEvent
		if json.Unmarshal(b, &z) != nil || z.Zone.ID == "" {
			return nil, nil
		}
		if p.zone(z.Zone.ID, z.Zone.Name) {
			zc = &zoneChange{Zone: Zone{ID: z.Zone.ID, Name: z.Zone.Name}}
		}
	case events.TypeZoneDeleted:
		var z events.ZoneEvent
		if json.Unmarshal(b, &z) == nil && p.dropZone(z.Zone.ID) {
			zc = &zoneChange{Zone: Zone{ID: z.Zone.ID}, deleted: true}
		}
	}
	return zc, p.changed()
}

// all is every state publication.
func (p *picture) all() []publication {
	p.mu.Lock()
	defer p.mu.Unlock()
	pubs := p.states()
	for _, q := range pubs {
		p.last[q.topic] = string(q.payload)
	}
	return pubs
}

// changed is the state publications that differ from the last ones.
func (p *picture) changed() []publication {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []publication
	for _, q := range p.states() {
		if p.last[q.topic] != string(q.payload) {
			p.last[q.topic] = string(q.payload)
			out = append(out, q)
		}
	}
	return out
}

// states computes every sensor's state; p.mu is held.
func (p *picture) states() []publication {
	breach := map[string]bool{}
	for id := range p.zoneMap {
		breach[id] = false
	}
	active, maxL := 0, 0.0
	for _, t := range p.tracks {
		if t.breach && t.zone != "" {
			breach[t.zone] = true
		}
		if t.alert {
			active++
		}
		maxL = max(maxL, t.lambda)
	}
	out := []publication{
		{"threats/active", []byte(strconv.Itoa(active))},
		{"threats/max_lambda", []byte(strconv.FormatFloat(maxL, 'f', 3, 64))},
	}
	ids := make([]string, 0, len(breach))
	for id := range breach {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		v := "OFF"
		if breach[id] {
			v = "ON"
		}
		out = append(out, publication{"zone/" + topicToken(id) + "/breach", []byte(v)})
	}
	return out
}
