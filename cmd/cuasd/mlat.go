package main

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cuasd/cuasd/bus"
	"github.com/cuasd/cuasd/decode/sensorclock"
	"github.com/cuasd/cuasd/decode/worker"
	"github.com/cuasd/cuasd/events"
	"github.com/cuasd/cuasd/fusion/mlat"
	"github.com/cuasd/cuasd/fusion/mlatstage"
	"github.com/cuasd/cuasd/ingest"
	"github.com/cuasd/cuasd/ingest/sensors"
	"gopkg.in/yaml.v3"
)

// MLATSensor is one entry of the sensors block of --config: a Mode S
// receiver's name (the sensor of its raw subjects, e.g.
// beast-in-192-0-2-7 for a receiver pushing to --beast-listen), its
// antenna's position and what its Beast timestamps are (issue 31).
type MLATSensor struct {
	Name string `yaml:"name"`
	// Lat and Lon in degrees, Alt metres above the WGS-84 ellipsoid.
	Lat   float64 `yaml:"lat"`
	Lon   float64 `yaml:"lon"`
	Alt   float64 `yaml:"alt"`
	Clock string  `yaml:"clock"`
	// hasAlt says alt was given: a missing height is refused rather
	// than taken as 0 m, hundreds of metres off for most antennas.
	hasAlt bool
	// from is the flag that placed the receiver, empty for the sensors
	// block: an error names where the operator wrote the mistake.
	from string
}

// mlatSensorKeys are the keys of a sensors block entry.
var mlatSensorKeys = []string{"name", "lat", "lon", "alt", "clock"}

// UnmarshalYAML reads one sensors block entry, noting whether alt was
// given. It refuses unknown keys itself: a node decoded here no longer
// has the file decoder's KnownFields check.
func (s *MLATSensor) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if !slices.Contains(mlatSensorKeys, k) {
				return fmt.Errorf("line %d: field %s not found in type main.MLATSensor (%s)", n.Content[i].Line, k, strings.Join(mlatSensorKeys, ", "))
			}
			s.hasAlt = s.hasAlt || k == "alt"
		}
	}
	type plain MLATSensor // without this method
	return n.Decode((*plain)(s))
}

// connectSensor reads the receiver options of --beast-connect:
// HOST:PORT[?sensor=NAME&lat=..&lon=..&alt=..&clock=gps|12mhz]. It returns
// the address with only its clock option (what the Beast client takes),
// the sensor's name (empty: the default, named after the address) and,
// when lat and lon are given, the receiver as a multilateration sensor.
func connectSensor(spec string) (clockSpec, name string, sensor *MLATSensor, err error) {
	addr, query, _ := strings.Cut(spec, "?")
	q, err := receiverOptions(spec, query)
	if err != nil {
		return "", "", nil, err
	}
	clockSpec, name = addr, q.Get("sensor")
	if q.Has("clock") {
		clockSpec += "?clock=" + q.Get("clock")
	}
	if !q.Has("lat") && !q.Has("lon") {
		return clockSpec, name, nil, nil
	}
	m := MLATSensor{Name: name, Clock: q.Get("clock"), hasAlt: q.Has("alt")}
	if m.Name == "" {
		// the name the Beast client gives its frames' sensor
		m.Name = bus.SensorName(addr)
	}
	var e1, e2, e3 error
	m.Lat, e1 = strconv.ParseFloat(q.Get("lat"), 64)
	m.Lon, e2 = strconv.ParseFloat(q.Get("lon"), 64)
	if m.hasAlt {
		m.Alt, e3 = strconv.ParseFloat(q.Get("alt"), 64)
	}
	if e1 != nil || e2 != nil || e3 != nil {
		return "", "", nil, fmt.Errorf("%q: lat and lon (degrees) must both be given, alt in metres above the WGS-84 ellipsoid", spec)
	}
	return clockSpec, name, &m, nil
}

// receiverOptions parses the options after a receiver flag's '?'
// (ingest.SpecOptions: known names, each at most once), a sensor name
// that is a subject token as given (one the subject would change names
// another sensor than configured), and a clock spelled out.
func receiverOptions(spec, query string) (url.Values, error) {
	q, err := ingest.SpecOptions(spec, query, "sensor", "lat", "lon", "alt", "clock")
	if err != nil {
		return nil, err
	}
	if name := q.Get("sensor"); name != "" && !bus.ValidSensor(name) {
		return nil, fmt.Errorf("%q: sensor must be %s, got %q", spec, bus.SensorRule, name)
	}
	if c := q.Get("clock"); q.Has("clock") && c != "gps" && c != "12mhz" {
		return nil, fmt.Errorf("%q: clock must be gps or 12mhz, got %q", spec, c)
	}
	return q, nil
}

// listenSensor reads the receiver options of --beast-listen and
// --avr-listen, as connectSensor does, except that a port placed for
// multilateration is one receiver's and must name it (?sensor=NAME):
// otherwise each connection is named after its peer.
func listenSensor(spec string) (clockSpec, name string, sensor *MLATSensor, err error) {
	clockSpec, name, sensor, err = connectSensor(spec)
	if err == nil && sensor != nil && name == "" {
		err = fmt.Errorf("%q: a listener placed with lat and lon is one receiver's port: name it with ?sensor=NAME", spec)
	}
	return clockSpec, name, sensor, err
}

// avrListenSensor is listenSensor for --avr-listen, whose timestamps
// are always a 12 MHz counter.
func avrListenSensor(spec string) (string, string, *MLATSensor, error) {
	clockSpec, name, sensor, err := listenSensor(spec)
	if err == nil {
		if _, clock, cerr := ingest.SplitClock(clockSpec); cerr == nil && clock != sensorclock.MHz12 {
			err = fmt.Errorf("%q: AVR timestamps are 12 MHz: ?clock=gps is for Beast", spec)
		}
	}
	return clockSpec, name, sensor, err
}

// receiverFlag is a Mode S receiver flag that takes
// ?sensor=&lat=&lon=&alt=, its value and how it reads them, and the
// source it makes (a listener or a client, of which format).
type receiverFlag struct {
	flag, spec string
	parse      func(string) (string, string, *MLATSensor, error)
	listen     bool
	format     ingest.ModeSFormat
}

// receiverFlags are the Mode S receiver flags that take
// ?sensor=&lat=&lon=&alt=, one per value given (each is repeatable).
func (c *config) receiverFlags() []receiverFlag {
	var out []receiverFlag
	for _, f := range []struct {
		flag   string
		specs  []string
		parse  func(string) (string, string, *MLATSensor, error)
		listen bool
		format ingest.ModeSFormat
	}{
		{"--beast-listen", c.BeastListen.vals, listenSensor, true, ingest.Beast},
		{"--avr-listen", c.AVRListen.vals, avrListenSensor, true, ingest.AVR},
		{"--beast-connect", c.BeastConnect.vals, connectSensor, false, ingest.Beast},
	} {
		for _, spec := range f.specs {
			out = append(out, receiverFlag{f.flag, spec, f.parse, f.listen, f.format})
		}
	}
	return out
}

// mlatSensors lists every receiver taking part in multilateration: the
// sensors block and the receiver flags given a position.
func (c *config) mlatSensors() []MLATSensor {
	list := append([]MLATSensor(nil), c.Sensors...)
	for _, r := range c.receiverFlags() {
		if r.spec == "" {
			continue
		}
		if _, _, m, err := r.parse(r.spec); err == nil && m != nil {
			m.from = r.flag
			list = append(list, *m)
		}
	}
	return list
}

// validateMLAT checks the sensors block and the receiver flags' options.
func (c *config) validateMLAT(errs []error) []error {
	named := map[string]bool{}
	for _, r := range c.receiverFlags() {
		_, name, _, err := r.parse(r.spec)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", r.flag, err))
		case name != "" && named[name]:
			// two ports or connections of one name would be one sensor
			// with two receivers' clocks
			errs = append(errs, fmt.Errorf("%s: sensor %q is the name of two receiver flags: each port or connection is one receiver", r.flag, name))
		}
		named[name] = true
	}
	seen := map[string]string{} // name: where it was configured
	for i, s := range c.mlatSensors() {
		at := s.where(i)
		switch {
		case s.Name == "":
			errs = append(errs, fmt.Errorf("%s: name is required (the receiver's sensor name, e.g. beast-in-192-0-2-7)", at))
		case !bus.ValidSensor(s.Name):
			errs = append(errs, fmt.Errorf("%s: name must be %s (the sensor of its subjects), got %q", at, bus.SensorRule, s.Name))
		case seen[s.Name] != "":
			errs = append(errs, fmt.Errorf("%s: sensor %q is configured twice (also in %s): place it once", at, s.Name, seen[s.Name]))
		}
		if s.from == "" {
			seen[s.Name] = "the sensors block"
		} else {
			seen[s.Name] = s.from
		}
		errs = s.validate(at, errs)
	}
	return c.validateClocks(errs)
}

// where names the entry for an error: its flag, or its index in the
// sensors block.
func (s MLATSensor) where(i int) string {
	if s.from != "" {
		return fmt.Sprintf("%s ?sensor=%s", s.from, s.Name)
	}
	return fmt.Sprintf("sensors[%d]", i)
}

// validate checks one receiver's place and clock; at names it. The
// comparisons are written to fail for NaN too (lat=NaN passed them, and
// /v1/sensors could then not be encoded).
func (s MLATSensor) validate(at string, errs []error) []error {
	if !(s.Lat >= -90 && s.Lat <= 90 && s.Lon >= -180 && s.Lon <= 180) || (s.Lat == 0 && s.Lon == 0) {
		errs = append(errs, fmt.Errorf("%s: lat and lon (degrees) are required and must be in range", at))
	}
	switch {
	case !s.hasAlt:
		errs = append(errs, fmt.Errorf("%s: alt is required: the antenna's height above the WGS-84 ellipsoid in metres (a GPS receiver's HAE)", at))
	case !(s.Alt >= bus.MinSensorAltM && s.Alt <= bus.MaxSensorAltM): // the range a receiver may state (Cuas-Sensor-Position)
		errs = append(errs, fmt.Errorf("%s: alt is the antenna's height above the WGS-84 ellipsoid in metres (%d to %d)", at, bus.MinSensorAltM, bus.MaxSensorAltM))
	}
	if _, ok := mlat.ParseClock(s.Clock); !ok {
		errs = append(errs, fmt.Errorf("%s: clock must be gps or 12mhz, got %q", at, s.Clock))
	}
	return errs
}

// validateClocks refuses a sensors block entry whose clock contradicts
// the receiver flag its frames come through: the flag's clock decodes
// the timestamps, the entry's is what multilateration believes, and a
// GPS receiver read as a 12 MHz counter (or the reverse) gives times
// that are wrong without any error.
func (c *config) validateClocks(errs []error) []error {
	for _, r := range c.receiverFlags() {
		if r.spec == "" {
			continue
		}
		spec, name, _, err := r.parse(r.spec)
		if err != nil {
			continue
		}
		addr, clock, err := ingest.SplitClock(spec)
		if err != nil {
			continue
		}
		for i, s := range c.Sensors {
			if !r.names(name, addr, s.Name) {
				continue
			}
			if k, _ := mlat.ParseClock(s.Clock); (k == mlat.ClockGPS) != (clock == sensorclock.GPS) {
				errs = append(errs, fmt.Errorf("%s: sensor %q is clock=%s in the sensors block (sensors[%d]) but read as clock=%s here: give the flag ?clock=%s, or correct the block",
					r.flag, s.Name, clockName(s.Clock), i, clock, clockName(s.Clock)))
			}
		}
	}
	return errs
}

// names reports whether the receiver flag's frames come from sensor:
// the name it was given, else the names it gives its connections (a
// listener's "beast-in-<peer>") or its address.
func (r receiverFlag) names(name, addr, sensor string) bool {
	switch {
	case name != "":
		return sensor == name
	case r.listen:
		return strings.HasPrefix(sensor, string(r.format)+"-in-")
	default:
		return sensor == bus.SensorName(addr)
	}
}

// clockName is a sensors block clock as an operator writes it.
func clockName(c string) string {
	if c == "" {
		return "12mhz"
	}
	return c
}

// mlatStage builds the multilateration stage over the configured
// receivers, listed in the sensor registry, and any receiver that states
// its own position on NATS (Cuas-Sensor-Position), told to the registry
// as it reports (issue 31). It is built with no receiver configured: a
// receiver publishing straight to NATS needs no configuration.
func (s *service) mlatStage() *mlatstage.Stage {
	var list []mlatstage.Sensor
	for _, c := range s.cfg.mlatSensors() {
		clock, _ := mlat.ParseClock(c.Clock)
		list = append(list, mlatstage.Sensor{Name: c.Name, Lat: c.Lat, Lon: c.Lon, AltM: c.Alt, Clock: clock})
		s.sensorReg.Configure(c.Name, "modes", &sensors.Position{Lat: c.Lat, Lon: c.Lon, AltM: c.Alt, HasAlt: true}, 0)
	}
	reg := s.sensorReg
	return mlatstage.New(mlatstage.Config{Sensors: list, Log: s.log,
		OnPosition: func(name string, p mlatstage.Position) {
			reg.ReportPosition(name, "modes", sensors.Position{Lat: p.Lat, Lon: p.Lon, AltM: p.AltM, HasAlt: true})
		},
		OnHeard: func(name string, at time.Time, n uint64) { reg.HeardUntil(name, "modes", at, n) },
	}, s.store, s.reg)
}

// offerTimed is the decoder feed's Timed hook: every Mode S frame with a
// Beast timestamp goes to the multilateration stage, which sheds rather
// than waits. The hook is handed a message's frames together, so a
// sensor the stage cannot place is refused by one look-up for all of
// them (most frames, in a network without placed receivers: issue 30's
// speed).
func offerTimed(st *mlatstage.Stage) func(meta *worker.Meta, frames []worker.TimedFrame) {
	return func(meta *worker.Meta, frames []worker.TimedFrame) {
		if meta.Clock == sensorclock.Receiver {
			return // nanoseconds of a free-running clock, not a Beast count
		}
		if !st.Placed(meta.Sensor, meta.HasPosition) {
			n := 0
			for i := range frames {
				if mlatstage.UsefulDF(frames[i].Msg[0] >> 3) {
					n++
				}
			}
			st.Unplaced(n)
			return
		}
		r := mlatstage.Rx{Sensor: meta.Sensor, Clock: meta.Clock, Arrival: meta.RecvUnixNano,
			HasPos: meta.HasPosition, Pos: mlatstage.Position{Lat: meta.Position.Lat, Lon: meta.Position.Lon, AltM: meta.Position.AltM}}
		for i := range frames {
			f := &frames[i]
			r.Ticks, r.Len, r.Msg = f.TS, f.Len, f.Msg
			st.Offer(&r)
		}
	}
}

// mlatSensors is the sensor registry as GET /v1/sensors shows it, with
// each Mode S receiver's clock and multilateration state.
// The service is read when asked: the stage is made when fusion starts,
// after the HTTP handlers.
type mlatSensors struct{ s *service }

// List implements httpapi.SensorRegistry.
func (m mlatSensors) List() []sensors.Sensor {
	if m.s.sensorReg == nil {
		return nil
	}
	list := m.s.sensorReg.List()
	if m.s.mlat == nil {
		return list
	}
	state := map[string]mlatstage.SensorState{}
	for _, st := range m.s.mlat.Sensors() {
		state[st.Name] = st
	}
	for i := range list {
		if st, ok := state[list[i].ID]; ok {
			decorate(&list[i], st)
		}
	}
	return list
}

// Get implements httpapi.SensorRegistry.
func (m mlatSensors) Get(id string) (sensors.Sensor, bool) {
	if m.s.sensorReg == nil {
		return sensors.Sensor{}, false
	}
	s, ok := m.s.sensorReg.Get(id)
	if !ok || m.s.mlat == nil {
		return s, ok
	}
	for _, st := range m.s.mlat.Sensors() {
		if st.Name == id {
			decorate(&s, st)
		}
	}
	return s, true
}

func decorate(s *events.Sensor, st mlatstage.SensorState) {
	s.Clock = st.Clock
	// The position multilateration uses, and whether it was configured
	// or is the receiver's own claim.
	s.Position = &events.SensorPosition{Lat: st.Position.Lat, Lon: st.Position.Lon, AltM: st.Position.AltM, HasAlt: true, Source: st.PositionSource}
	s.MLAT = &events.SensorMLAT{Receptions: st.Receptions, SyncPairs: st.Pairs, SyncGood: st.GoodPairs, PositionMoves: st.Moves}
	if st.HasDelay {
		d := st.DelayNS
		s.MLAT.DelayNS = &d
	}
	s.Messages = st.Receptions
	if !st.LastHeard.IsZero() {
		s.LastHeard = st.LastHeard
		s.Down = time.Since(st.LastHeard).Seconds() > s.ExpectSeconds
	}
}
