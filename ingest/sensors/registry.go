package sensors

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cuasd/cuasd/ingest/sensors/droneclaim"
)

// MaxSensors bounds the registry: per-peer sensor names come from the
// network, and a flood of spoofed peers must not grow memory without end.
const MaxSensors = 1024

// DefaultExpect is how long a sensor may be silent before it counts as
// down, unless configured otherwise: the feeds send drones as they hear
// them and a WarDragon status every few seconds.
const DefaultExpect = 60 * time.Second

// Position is where a sensor is.
type Position struct {
	Lat    float64 `json:"lat"`
	Lon    float64 `json:"lon"`
	AltM   float64 `json:"alt_m,omitempty"`
	HasAlt bool    `json:"-"`
	// Source is "configured" (from the command line) or "reported" (the
	// sensor's own status feed, an unauthenticated claim like any other).
	Source string `json:"source"`
}

// Sensor is one sensor as the registry knows it.
type Sensor struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// Position is nil until configured or reported.
	Position  *Position `json:"position,omitempty"`
	FirstSeen time.Time `json:"first_seen,omitzero"`
	LastHeard time.Time `json:"last_heard,omitzero"`
	// Messages counts the drone claims and statuses accepted; Rejected the
	// messages refused, by reason.
	Messages uint64            `json:"messages"`
	Rejected map[string]uint64 `json:"rejected,omitempty"`
	// Down is true when the sensor has been silent longer than
	// ExpectSeconds (or was never heard).
	Down          bool    `json:"down"`
	ExpectSeconds float64 `json:"expect_seconds"`
	// GPSFix, CPUPercent and TempC come from a WarDragon status.
	GPSFix     *bool    `json:"gps_fix,omitempty"`
	CPUPercent *float64 `json:"cpu_percent,omitempty"`
	TempC      *float64 `json:"temperature_c,omitempty"`
	// LastRSSI is the signal strength of the last drone claim, in dBm.
	LastRSSI *float64 `json:"last_rssi_dbm,omitempty"`
}

// Registry is the set of sensors the inputs have heard or been told of.
// It is safe for concurrent use; a nil *Registry records nothing.
type Registry struct {
	mu     sync.Mutex
	m      map[string]*Sensor
	expect time.Duration
	now    func() time.Time
}

// NewRegistry returns an empty registry whose sensors count as down after
// expect of silence (DefaultExpect when 0).
func NewRegistry(expect time.Duration) *Registry {
	if expect <= 0 {
		expect = DefaultExpect
	}
	return &Registry{m: map[string]*Sensor{}, expect: expect, now: time.Now}
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
	if st.HasPosition && (s.Position == nil || s.Position.Source != "configured") {
		s.Position = &Position{Lat: st.Lat, Lon: st.Lon, AltM: st.AltM, HasAlt: st.HasAlt, Source: "reported"}
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
	out := make([]Sensor, 0, len(r.m))
	for _, s := range r.m {
		out = append(out, r.copyOf(s, now))
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
	s := r.m[id]
	if s == nil {
		return Sensor{}, false
	}
	return r.copyOf(s, r.now()), true
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
	return c
}
