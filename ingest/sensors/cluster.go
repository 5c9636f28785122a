package sensors

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/lifecycle"
)

// The registry on NATS (issue 25). Each instance's inputs hear their own
// sensors; an Announcer publishes the local sensors' state as sensor
// events on cuas.sensor.{id} and merges what the other instances publish,
// so that on a cluster every instance's GET /v1/sensors lists every
// sensor, each marked with the instance that heard it.

// RemoteTTL is how long a sensor another instance announced is kept
// without a new announcement: long enough to show, as down, the sensors of
// an instance that stopped (its sensors' last_heard ages like any other),
// short enough that a sensor renamed or moved goes away.
const RemoteTTL = 10 * time.Minute

// announcement is what was last published of a local sensor.
type announcement struct {
	at   time.Time
	down bool
}

// remoteSensor is a sensor as another instance announced it.
type remoteSensor struct {
	s   Sensor
	got time.Time
}

// SetInstance names this instance in the sensors it lists (--instance).
func (r *Registry) SetInstance(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.instance = name
}

// due returns the local sensors to announce now: changed since their last
// announcement, down or up again, or not announced for repeat; it records
// them as announced.
func (r *Registry) due(repeat time.Duration) []Sensor {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	var out []Sensor
	for id, s := range r.m {
		c := r.copyOf(s, now)
		last, ok := r.announced[id]
		if !ok || r.changed[id] || last.down != c.Down || now.Sub(last.at) >= repeat {
			out = append(out, c)
			r.announced[id] = announcement{at: now, down: c.Down}
			delete(r.changed, id)
		}
	}
	return out
}

// mergeRemote keeps a sensor another instance announced. The number of
// remote entries is bounded like the local ones.
func (r *Registry) mergeRemote(instance string, s Sensor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	byInst := r.remote[s.ID]
	if _, known := byInst[instance]; !known {
		if r.nRemote >= MaxSensors {
			r.expireRemote(now)
			if r.nRemote >= MaxSensors {
				return
			}
		}
		if byInst == nil {
			byInst = map[string]remoteSensor{}
			r.remote[s.ID] = byInst
		}
		r.nRemote++
	}
	s.Instance, s.HeardBy = instance, nil
	byInst[instance] = remoteSensor{s: s, got: now}
}

// expireRemote forgets remote sensors not announced for RemoteTTL; the
// caller holds mu.
func (r *Registry) expireRemote(now time.Time) {
	for id, byInst := range r.remote {
		for inst, rs := range byInst {
			if now.Sub(rs.got) > RemoteTTL {
				delete(byInst, inst)
				r.nRemote--
			}
		}
		if len(byInst) == 0 {
			delete(r.remote, id)
		}
	}
}

// merged is sensor id as the cluster knows it: the state of the instance
// that heard it last (this one on a tie), with every instance that has
// heard it in HeardBy; the caller holds mu.
func (r *Registry) merged(id string, now time.Time) Sensor {
	var best Sensor
	found := false
	var heardBy []string
	if s := r.m[id]; s != nil {
		best, found = r.copyOf(s, now), true
		if !s.LastHeard.IsZero() && r.instance != "" { // "": no announcer, a registry of its own
			heardBy = append(heardBy, r.instance)
		}
	}
	for inst, rs := range r.remote[id] {
		c := rs.s
		c.Down = c.LastHeard.IsZero() || now.Sub(c.LastHeard).Seconds() > c.ExpectSeconds
		if !c.LastHeard.IsZero() {
			heardBy = append(heardBy, inst)
		}
		if !found || c.LastHeard.After(best.LastHeard) || (c.LastHeard.Equal(best.LastHeard) && best.Instance != r.instance && inst < best.Instance) {
			best, found = c, true
		}
	}
	slices.Sort(heardBy)
	best.HeardBy = heardBy
	return best
}

// LocalDown lists this instance's own sensors that are down: what its
// /readyz reports (another instance's sensor is that instance's concern).
func (r *Registry) LocalDown() []Sensor {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	var out []Sensor
	for _, s := range r.m {
		if c := r.copyOf(s, now); c.Down {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b Sensor) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Announcer publishes a registry's sensors on NATS and merges the other
// instances' (see the package's registry-on-NATS notes).
type Announcer struct {
	Registry *Registry
	Conn     *nats.Conn
	// Instance is this instance's name (--instance), in every event's
	// header; events of its own are not merged back.
	Instance string
	// Repeat is how often an unchanged sensor is announced again
	// (events.SensorRepeat when 0); Tick how often changes are looked for
	// (a second when 0).
	Repeat, Tick time.Duration
	Log          *slog.Logger
}

// Run announces until ctx ends. It reports Up once subscribed.
func (a *Announcer) Run(ctx context.Context, rep lifecycle.Reporter) error {
	if a.Registry == nil || a.Conn == nil {
		return errors.New("sensors: announcer without a registry or a NATS connection")
	}
	repeat, tick := a.Repeat, a.Tick
	if repeat <= 0 {
		repeat = events.SensorRepeat
	}
	if tick <= 0 {
		tick = time.Second
	}
	a.Registry.SetInstance(a.Instance)
	sub, err := a.Conn.Subscribe(bus.SensorPrefix+".>", a.receive)
	if err != nil {
		return err
	}
	defer func() { _ = sub.Unsubscribe() }()
	rep.Up()
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		a.publish(repeat)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// publish sends the sensors that are due. A failed publish is logged and
// retried at the next repeat: the registry itself is unaffected.
func (a *Announcer) publish(repeat time.Duration) {
	for _, s := range a.Registry.due(repeat) {
		s.HeardBy = nil
		ev := events.SensorEvent{Header: events.Header{V: events.Version, Type: events.TypeSensorState,
			Time: time.Now().UTC(), Instance: a.Instance}, Sensor: s}
		data, err := json.Marshal(ev)
		if err == nil {
			err = a.Conn.Publish(bus.SensorSubject(s.ID), data)
		}
		if err != nil && a.Log != nil {
			a.Log.Warn("sensor event not published", "sensor", s.ID, "err", err)
		}
	}
}

// receive merges another instance's sensor event; a malformed event or one
// of a version this build does not read is ignored (logged at debug).
func (a *Announcer) receive(m *nats.Msg) {
	h, err := events.Peek(m.Data)
	if err != nil || h.Type != events.TypeSensorState {
		a.debug("sensor event ignored", m.Subject, err)
		return
	}
	if h.Instance == a.Instance {
		return // our own
	}
	var ev events.SensorEvent
	if err := json.Unmarshal(m.Data, &ev); err != nil || ev.Sensor.ID == "" || len(ev.Sensor.ID) > 256 || h.Instance == "" {
		a.debug("sensor event ignored", m.Subject, err)
		return
	}
	a.Registry.mergeRemote(h.Instance, ev.Sensor)
}

func (a *Announcer) debug(msg, subject string, err error) {
	if a.Log != nil {
		a.Log.Debug(msg, "subject", subject, "err", err)
	}
}
