package reference

import (
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

//go:embed data/drones.json
var dronesJSON []byte

//go:embed data/iso3166.tab
var iso3166Tab string

// DatabaseSize is the number of records the drone database holds; the
// issue that defines the database fixes it, and Load refuses any other.
const DatabaseSize = 53

// DB is the loaded, validated and indexed drone database. It is immutable
// after Load and safe for concurrent use.
type DB struct {
	// Version is the data file's version number.
	Version int
	drones  []Drone
	byID    map[string]int

	// Lookup indexes: bitsets of record positions.
	bySerial   map[string]Set
	byUAType   map[int]Set
	byMAVType  map[int]Set
	byEmitter  map[string]Set
	all        Set
	sideOfSet  map[Side]Set
	allowedCty []string
	// products indexes the product names (issue 25, see MatchProduct).
	products map[string]ProductMatch
}

type dronesFile struct {
	Version     int     `json:"version"`
	Description string  `json:"description"`
	Drones      []Drone `json:"drones"`
}

var (
	defaultOnce sync.Once
	defaultDB   *DB
	defaultErr  error
)

// Default returns the database embedded in the binary, loading and
// validating it on first use. An error here means the embedded data file is
// broken, which the package's tests prevent from being committed.
func Default() (*DB, error) {
	defaultOnce.Do(func() { defaultDB, defaultErr = Load(dronesJSON) })
	return defaultDB, defaultErr
}

// Load parses and validates a drone database file. It fills in the derived
// classifier fields and builds the lookup indexes.
func Load(data []byte) (*DB, error) {
	var f dronesFile
	if err := strictJSON("drone database: ", data, &f); err != nil {
		return nil, err
	}
	if len(f.Drones) != DatabaseSize {
		return nil, &Error{Field: "drones", Msg: fmt.Sprintf("the database must hold exactly %d records, it holds %d", DatabaseSize, len(f.Drones))}
	}
	if len(f.Drones) > setCapacity {
		return nil, &Error{Field: "drones", Msg: "too many records for the lookup bitset"}
	}
	db := &DB{
		Version:   f.Version,
		drones:    f.Drones,
		byID:      make(map[string]int, len(f.Drones)),
		bySerial:  map[string]Set{},
		byUAType:  map[int]Set{},
		byMAVType: map[int]Set{},
		byEmitter: map[string]Set{},
		sideOfSet: map[Side]Set{},
	}
	codes := isoCodes()
	for i := range db.drones {
		d := &db.drones[i]
		derive(d)
		if err := validate(d, codes); err != nil {
			return nil, err
		}
		if _, dup := db.byID[d.ID]; dup {
			return nil, &Error{Field: "id", Value: d.ID, Msg: "duplicate id"}
		}
		db.byID[d.ID] = i
		db.all.add(i)
		db.sideOfSet[d.Side] = db.sideOfSet[d.Side].with(i)
		for _, p := range d.Classifier.SerialPrefixes {
			db.bySerial[p] = db.bySerial[p].with(i)
		}
		if t := d.Classifier.RemoteIDUAType; t != nil {
			db.byUAType[*t] = db.byUAType[*t].with(i)
		}
		if t := d.Classifier.MAVType; t != nil {
			db.byMAVType[*t] = db.byMAVType[*t].with(i)
		}
		if c := d.Classifier.ADSBEmitterCategory; c != nil {
			db.byEmitter[*c] = db.byEmitter[*c].with(i)
		}
		if !slices.Contains(db.allowedCty, d.Country.Code) {
			db.allowedCty = append(db.allowedCty, d.Country.Code)
		}
	}
	slices.Sort(db.allowedCty)
	db.indexProducts()
	return db, nil
}

// airframeTypes maps an airframe to the ASTM F3411 UA type and the MAVLink
// MAV_TYPE a conforming transmitter on it reports.
var airframeTypes = map[string]struct {
	ua      int
	mav     int
	mavName string
}{
	"fixed_wing":      {1, 1, "MAV_TYPE_FIXED_WING"},
	"quadrotor":       {2, 2, "MAV_TYPE_QUADROTOR"},
	"coaxial":         {2, 3, "MAV_TYPE_COAXIAL"},
	"helicopter":      {2, 4, "MAV_TYPE_HELICOPTER"},
	"hexarotor":       {2, 13, "MAV_TYPE_HEXAROTOR"},
	"octorotor":       {2, 14, "MAV_TYPE_OCTOROTOR"},
	"vtol_tiltrotor":  {4, 21, "MAV_TYPE_VTOL_TILTROTOR"},
	"vtol_fixedrotor": {4, 22, "MAV_TYPE_VTOL_FIXEDROTOR"},
	"vtol_tailsitter": {4, 23, "MAV_TYPE_VTOL_TAILSITTER"},
}

// derive fills the classifier fields that follow from the airframe, so the
// data file cannot contradict itself.
func derive(d *Drone) {
	if t, ok := airframeTypes[d.Airframe]; ok {
		ua, mav := t.ua, t.mav
		d.Classifier.RemoteIDUAType = &ua
		d.Classifier.MAVType = &mav
		d.Classifier.MAVTypeName = t.mavName
	} else {
		d.Classifier.RemoteIDUAType = nil
		d.Classifier.MAVType = nil
		d.Classifier.MAVTypeName = ""
	}
	if d.Classifier.SerialPrefixes == nil {
		d.Classifier.SerialPrefixes = []string{}
	}
	if d.CountersGroups == nil {
		d.CountersGroups = []int{}
	}
	if d.SpecSources == nil {
		d.SpecSources = map[string]string{}
	}
}

// isoCodes parses the embedded ISO 3166-1 alpha-2 table (tzdata's
// iso3166.tab: "CC<TAB>name" lines, '#' comments).
func isoCodes() map[string]string {
	m := make(map[string]string, 250)
	for line := range strings.SplitSeq(iso3166Tab, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		code, name, ok := strings.Cut(line, "\t")
		if ok {
			m[code] = name
		}
	}
	return m
}

// Drones returns every record, in file order. The records are shared: the
// caller must not modify them.
func (db *DB) Drones() []Drone { return db.drones }

// Len returns the number of records.
func (db *DB) Len() int { return len(db.drones) }

// Drone returns the record with the given id.
func (db *DB) Drone(id string) (Drone, bool) {
	i, ok := db.byID[id]
	if !ok {
		return Drone{}, false
	}
	return db.drones[i], true
}

// Countries returns the ISO codes present in the database, sorted.
func (db *DB) Countries() []string { return db.allowedCty }

// Filter selects records. Every non-empty field must match (AND); an empty
// field does not constrain. Values are matched case-insensitively.
type Filter struct {
	// Side is one of Sides.
	Side string
	// Group is "1".."5" and matches Drone.Group.
	Group string
	// Country is an ISO 3166-1 alpha-2 code or a country name as stored.
	Country string
	// Role is one of Roles.
	Role string
	// Telemetry is one of TelemetryKinds and matches any surface's kind.
	Telemetry string
	// Q is free text, matched as a substring of the id, name,
	// manufacturer, country name, role and note texts.
	Q string
}

// GroupValues are the allowed values of Filter.Group.
var GroupValues = []string{"1", "2", "3", "4", "5"}

// Select returns the records matching f, in file order. An unknown filter
// value is an *Error naming the field and listing the allowed values.
func (db *DB) Select(f Filter) ([]Drone, error) {
	m, err := db.matcher(f)
	if err != nil {
		return nil, err
	}
	out := []Drone{}
	for _, d := range db.drones {
		if m.match(&d) {
			out = append(out, d)
		}
	}
	return out, nil
}

// matcher is a checked Filter.
type matcher struct {
	side, role, tele, country, q string
	group                        int
}

// matcher checks every value of f against the allowed ones.
func (db *DB) matcher(f Filter) (matcher, error) {
	var m matcher
	var group string
	var err error
	for _, c := range []struct {
		field, value string
		allowed      []string
		dst          *string
	}{
		{"side", f.Side, sideStrings(), &m.side},
		{"group", f.Group, GroupValues, &group},
		{"role", f.Role, Roles, &m.role},
		{"telemetry", f.Telemetry, TelemetryKinds, &m.tele},
	} {
		if *c.dst, err = oneOf(c.field, c.value, c.allowed); err != nil {
			return m, err
		}
	}
	m.country = strings.TrimSpace(f.Country)
	if m.country != "" && !db.knownCountry(m.country) {
		return m, &Error{Field: "country", Value: f.Country, Msg: "no record has this country",
			Allowed: db.countryValues()}
	}
	m.q = strings.ToLower(strings.TrimSpace(f.Q))
	if group != "" {
		m.group, _ = strconv.Atoi(group)
	}
	return m, nil
}

// match reports whether d passes every filter that is set.
func (m *matcher) match(d *Drone) bool {
	switch {
	case m.side != "" && string(d.Side) != m.side:
	case m.group != 0 && (d.Group == nil || *d.Group != m.group):
	case m.role != "" && d.Role != m.role:
	case m.tele != "" && !hasSurface(*d, m.tele):
	case m.country != "" && !strings.EqualFold(d.Country.Code, m.country) && !strings.EqualFold(d.Country.Name, m.country):
	case m.q != "" && !matchText(*d, m.q):
	default:
		return true
	}
	return false
}

func (db *DB) knownCountry(c string) bool {
	for _, d := range db.drones {
		if strings.EqualFold(d.Country.Code, c) || strings.EqualFold(d.Country.Name, c) {
			return true
		}
	}
	return false
}

// countryValues lists "CODE (Name)" for the countries in the database.
func (db *DB) countryValues() []string {
	out := make([]string, 0, len(db.allowedCty))
	for _, code := range db.allowedCty {
		for _, d := range db.drones {
			if d.Country.Code == code {
				out = append(out, code+" ("+d.Country.Name+")")
				break
			}
		}
	}
	return out
}

func sideStrings() []string {
	s := make([]string, len(Sides))
	for i, v := range Sides {
		s[i] = string(v)
	}
	return s
}

// oneOf returns the canonical spelling of v among allowed (case-insensitive),
// "" for an empty v, or an *Error listing the allowed values.
func oneOf(field, v string, allowed []string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil
	}
	for _, a := range allowed {
		if strings.EqualFold(a, v) {
			return a, nil
		}
	}
	return "", &Error{Field: field, Value: v, Msg: "unknown value", Allowed: allowed}
}

func hasSurface(d Drone, kind string) bool {
	for _, s := range d.TelemetrySurfaces {
		if s.Kind == kind {
			return true
		}
	}
	return false
}

func matchText(d Drone, q string) bool {
	fields := []string{d.ID, d.Name, d.Manufacturer, d.Country.Name, d.Country.Code, d.Role}
	for _, f := range fields {
		if strings.Contains(strings.ToLower(f), q) {
			return true
		}
	}
	for _, n := range d.Notes {
		if strings.Contains(strings.ToLower(n.Text), q) {
			return true
		}
	}
	return false
}
