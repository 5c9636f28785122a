package lifecycle

import (
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// State is a component's state.
type State string

// The states a component reports.
const (
	Starting State = "starting"
	Up       State = "up"
	Retrying State = "retrying"
	// Restarting: the loop ended on an error and its supervisor (Retry)
	// runs it again after a back-off.
	Restarting State = "restarting"
	Stopped    State = "stopped"
)

// Kind says what a component is to readiness: a pipeline Stage that is not
// up makes the service not ready; an Input or Output that is not up makes
// it degraded (it still serves what it knows).
type Kind string

// The kinds of component.
const (
	Stage  Kind = "stage"
	Input  Kind = "input"
	Output Kind = "output"
)

// Reporter is how a long-running component says how it is doing.
type Reporter interface {
	// Up: working (connected, listening, consuming).
	Up()
	// Retrying: not working now, and trying again; err is why.
	Retrying(err error)
}

// restarter is the part of a Status reporter its supervisor uses: Retry
// reports a loop that ended through it, so that a restart is told apart
// from a reconnect the loop reports itself.
type restarter interface {
	Restarting(err error)
}

// ComponentStatus is one component's state, as /readyz shows it.
type ComponentStatus struct {
	Name      string    `json:"name"`
	Kind      Kind      `json:"kind"`
	State     State     `json:"state"`
	LastError string    `json:"last_error,omitempty"`
	Since     time.Time `json:"since"`
	// Retries counts the failures reported since the component started
	// (reconnects the component reported and restarts alike).
	Retries uint64 `json:"retries"`
	// Restarts counts the times its supervisor ran the loop again after
	// it ended on an error.
	Restarts uint64 `json:"restarts"`
}

// Status is the registry of component states. The zero value is not
// usable; use NewStatus.
type Status struct {
	mu       sync.Mutex
	comps    map[string]*ComponentStatus
	up       *prometheus.GaugeVec
	restarts *prometheus.CounterVec
	now      func() time.Time
}

// NewStatus returns a registry exporting cuasd_component_up{component}
// (1 up, 0 otherwise) and cuasd_component_restarts_total{component} on reg
// (nil: unregistered).
func NewStatus(reg prometheus.Registerer) *Status {
	s := &Status{
		comps: map[string]*ComponentStatus{},
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "cuasd_component_up",
			Help: "Whether a long-running component (input adapter, output, pipeline stage) is working: 1 up, 0 starting, retrying or stopped.",
		}, []string{"component"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuasd_component_restarts_total",
			Help: "Times a long-running component's loop ended on an error and its supervisor started it again.",
		}, []string{"component"}),
		now: time.Now,
	}
	if reg != nil {
		reg.MustRegister(s.up, s.restarts)
	}
	return s
}

// Reporter registers a component (state starting, gauge 0) and returns its
// reporter. Registering a name twice returns a reporter for the same entry.
func (s *Status) Reporter(name string, kind Kind) Reporter {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.comps[name]; !ok {
		s.comps[name] = &ComponentStatus{Name: name, Kind: kind, State: Starting, Since: s.now().UTC()}
		s.up.WithLabelValues(name).Set(0)
		s.restarts.WithLabelValues(name) // at 0 from the start
	}
	return &reporter{s: s, name: name}
}

// Set records a component's state; err is kept as the last error when
// state is Retrying.
func (s *Status) set(name string, st State, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.comps[name]
	if c == nil {
		return
	}
	if c.State != st {
		c.State, c.Since = st, s.now().UTC()
	}
	if st == Restarting {
		c.Restarts++
		s.restarts.WithLabelValues(name).Inc()
	}
	if st == Retrying || st == Restarting {
		c.Retries++
		if err != nil {
			c.LastError = err.Error()
		}
	}
	v := 0.0
	if st == Up {
		v = 1
	}
	s.up.WithLabelValues(name).Set(v)
}

// Stopped marks a component stopped (after its Run returned).
func (s *Status) Stopped(name string) { s.set(name, Stopped, nil) }

// Snapshot returns every component's state, sorted by name.
func (s *Status) Snapshot() []ComponentStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ComponentStatus, 0, len(s.comps))
	for _, c := range s.comps {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// NotUp describes the components of the given kinds (all when none is
// given) that are not up ("beast-connect radar:30005: retrying: dial tcp
// ...: connection refused").
func (s *Status) NotUp(kinds ...Kind) []string {
	var out []string
	for _, c := range s.Snapshot() {
		if c.State == Up || (len(kinds) > 0 && !slices.Contains(kinds, c.Kind)) {
			continue
		}
		d := c.Name + ": " + string(c.State)
		if (c.State == Retrying || c.State == Restarting) && c.LastError != "" {
			d += ": " + c.LastError
		}
		out = append(out, d)
	}
	return out
}

// Starting reports whether a component of the given kinds (all when none
// is given) has not yet reported up or retrying.
func (s *Status) Starting(kinds ...Kind) bool {
	for _, c := range s.Snapshot() {
		if c.State == Starting && (len(kinds) == 0 || slices.Contains(kinds, c.Kind)) {
			return true
		}
	}
	return false
}

type reporter struct {
	s    *Status
	name string
}

func (r *reporter) Up()                { r.s.set(r.name, Up, nil) }
func (r *reporter) Retrying(err error) { r.s.set(r.name, Retrying, err) }

// Restarting implements restarter.
func (r *reporter) Restarting(err error) { r.s.set(r.name, Restarting, err) }

// Discard is a Reporter that records nothing (tests, one-shot commands).
var Discard Reporter = discard{}

type discard struct{}

func (discard) Up()            {}
func (discard) Retrying(error) {}
