package sensors

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/ingest/sensors/droneclaim"
)

// MaxSensors bounds the registry: per-peer sensor names come from the
// network, and a flood of spoofed peers must not grow memory without end.
const MaxSensors = 1024

// DefaultExpect is how long a sensor may be silent before it counts as
// down, unless configured otherwise: the feeds send drones as they hear
// them and a WarDragon status every few seconds.
const DefaultExpect = 60 * time.Second

// Position is where a sensor is (events.SensorPosition: the registry's
// sensors are what the sensor events carry, issue 25).
type Position = events.SensorPosition

// Sensor is one sensor as the registry knows it (events.Sensor).
type Sensor = events.Sensor

// Registry is the set of sensors the inputs have heard or been told of.
// It is safe for concurrent use; a nil *Registry records nothing.
type Registry struct {
	mu     sync.Mutex
	m      map[string]*Sensor
	expect time.Duration
	now    func() time.Time

	// Issue 25, the registry on NATS (see Announcer): this instance's
	// name, the local sensors changed since they were last announced and
	// what was announced, and the sensors other instances announced.
	instance  string
	changed   map[string]bool
	announced map[string]announcement
	remote    map[string]map[string]remoteSensor // id → instance → state
	nRemote   int
}

// NewRegistry returns an empty registry whose sensors count as down after
// expect of silence (DefaultExpect when 0).
func NewRegistry(expect time.Duration) *Registry {
	if expect <= 0 {
		expect = DefaultExpect
	}
	return &Registry{m: map[string]*Sensor{}, expect: expect, now: time.Now,
		changed: map[string]bool{}, announced: map[string]announcement{}, remote: map[string]map[string]remoteSensor{}}
}

// Configure declares a sensor before it is heard, with its kind, when pos
// is not nil its surveyed position (which a reported position does not
// replace), and when expect is not 0 its own silence limit.
func (r *Registry) Configure(id, kind string, pos *Position, expect time.Duration) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.get(id, kind)
	if s == nil {
		return
	}
	if pos != nil {
		p := *pos
		p.Source = "configured"
		s.Position = &p
	}
	if expect > 0 {
		s.ExpectSeconds = expect.Seconds()
	}
	r.changed[id] = true
}

// get returns the sensor id, created when new and there is room; the
// caller holds mu.
func (r *Registry) get(id, kind string) *Sensor {
	if s := r.m[id]; s != nil {
		return s
	}
	if len(r.m) >= MaxSensors {
		return nil
	}
	s := &Sensor{ID: id, Kind: kind, ExpectSeconds: r.expect.Seconds()}
	r.m[id] = s
	r.changed[id] = true
	return s
}

func (r *Registry) touch(id, kind string, now int64) *Sensor {
	s := r.get(id, kind)
	if s == nil {
		return nil
	}
	t := time.Unix(0, now)
	if s.FirstSeen.IsZero() {
		s.FirstSeen = t
		r.changed[id] = true
	}
	s.LastHeard = t
	return s
}

// Heard records one message of sensor id from an input that does not go
// through an Intake (the live Wi-Fi capture).
func (r *Registry) Heard(id, kind string) {
	r.heard(id, kind, time.Now().UnixNano(), &droneclaim.Claim{})
}

func (r *Registry) heard(id, kind string, now int64, c *droneclaim.Claim) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.touch(id, kind, now); s != nil {
		s.Messages++
		if c.HasRSSI {
			v := c.RSSI
			s.LastRSSI = &v
		}
	}
}

func (r *Registry) rejected(id, kind string, now int64, reason string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.touch(id, kind, now); s != nil {
		if s.Rejected == nil {
			s.Rejected = map[string]uint64{}
		}
		if s.Rejected[reason] == 0 {
			r.changed[id] = true // a new kind of garbage, not every one
		}
		s.Rejected[reason]++
	}
}

func (r *Registry) status(id, kind string, now int64, st *droneclaim.Status) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.touch(id, kind, now)
	if s == nil {
		return
	}
	s.Messages++
	r.changed[id] = true // a status is news, and comes every few seconds
	fix := st.GPSFix
	s.GPSFix = &fix
	if st.HasCPU {
		v := st.CPUPercent
		s.CPUPercent = &v
	}
	if st.HasTemp {
		v := st.TempC
		s.TempC = &v
	}
	if st.HasPosition {
		setReported(s, Position{Lat: st.Lat, Lon: st.Lon, AltM: st.AltM, HasAlt: st.HasAlt})
	}
}

// setReported takes a position the sensor stated itself, unless one is
// configured: a configuration wins over a claim.
func setReported(s *Sensor, p Position) {
	if s.Position == nil || s.Position.Source != "configured" {
		p.Source = "reported"
		s.Position = &p
	}
}

// ReportPosition records the position a sensor states itself outside a
// status feed (a Mode S receiver's Cuas-Sensor-Position header, issue
// 31); a configured position is kept.
func (r *Registry) ReportPosition(id, kind string, p Position) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.get(id, kind); s != nil {
		setReported(s, p)
		r.changed[id] = true
	}
}

// HeardUntil records that sensor id was last heard at at, with messages
// accepted in all, from an input that counts them itself (a Mode S
// receiver's timestamped receptions, counted by multilateration, issue
// 31): its last_heard, and whether it is down, tell the truth on
// /readyz as on /v1/sensors.
func (r *Registry) HeardUntil(id, kind string, at time.Time, messages uint64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.touch(id, kind, at.UnixNano()); s != nil {
		s.Messages = messages
	}
}

// SetClock replaces the registry's clock (tests).
func (r *Registry) SetClock(now func() time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.now = now
}

// List returns every sensor, by id, with Down computed now.
func (r *Registry) List() []Sensor {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	r.expireRemote(now)
	out := make([]Sensor, 0, len(r.m)+len(r.remote))
	for id := range r.m {
		out = append(out, r.merged(id, now))
	}
	for id := range r.remote {
		if r.m[id] == nil {
			out = append(out, r.merged(id, now))
		}
	}
	slices.SortFunc(out, func(a, b Sensor) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Get returns one sensor.
func (r *Registry) Get(id string) (Sensor, bool) {
	if r == nil {
		return Sensor{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m[id] == nil && r.remote[id] == nil {
		return Sensor{}, false
	}
	return r.merged(id, r.now()), true
}

func (r *Registry) copyOf(s *Sensor, now time.Time) Sensor {
	c := *s
	if s.Position != nil {
		p := *s.Position
		c.Position = &p
	}
	if s.Rejected != nil {
		c.Rejected = make(map[string]uint64, len(s.Rejected))
		for k, v := range s.Rejected {
			c.Rejected[k] = v
		}
	}
	c.Down = s.LastHeard.IsZero() || now.Sub(s.LastHeard).Seconds() > s.ExpectSeconds
	c.Instance = r.instance
	return c
}
