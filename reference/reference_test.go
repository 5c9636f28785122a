package reference

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/bluenviron/gomavlib/v3/pkg/dialects/minimal"
)

func mustDB(t testing.TB) *DB {
	t.Helper()
	db, err := Default()
	if err != nil {
		t.Fatalf("embedded database does not load: %v", err)
	}
	return db
}

// TestDatabaseComposition pins the shape of the database: the size the
// issue fixes, and the per-side and per-group counts, so that a record
// silently dropped or re-classified fails the build.
func TestDatabaseComposition(t *testing.T) {
	db := mustDB(t)
	if db.Len() != 53 {
		t.Fatalf("database holds %d records, want exactly 53", db.Len())
	}
	sides := map[Side]int{}
	groups := map[int]int{}
	for _, d := range db.Drones() {
		sides[d.Side]++
		if d.Group != nil {
			groups[*d.Group]++
		}
	}
	wantSides := map[Side]int{SideAllied: 29, SideDualUse: 5, SideAdversary: 8, SideCounterUAS: 11}
	for s, n := range wantSides {
		if sides[s] != n {
			t.Errorf("side %s: %d records, want %d", s, sides[s], n)
		}
	}
	wantGroups := map[int]int{1: 10, 2: 4, 3: 14, 4: 10, 5: 4}
	for g, n := range wantGroups {
		if groups[g] != n {
			t.Errorf("group %d: %d records, want %d", g, groups[g], n)
		}
	}
}

// TestRecordsAreSourced re-checks, independently of validate, the rules a
// reader relies on: an https source on every record, every figure traced.
func TestRecordsAreSourced(t *testing.T) {
	db := mustDB(t)
	for _, d := range db.Drones() {
		if len(d.Notes) == 0 {
			t.Errorf("%s: no sourced note", d.ID)
		}
		urls := map[string]bool{}
		for _, n := range d.Notes {
			if !strings.HasPrefix(n.Source.URL, "https://") || n.Source.Title == "" || n.Source.Publisher == "" {
				t.Errorf("%s: incomplete source %+v", d.ID, n.Source)
			}
			urls[n.Source.URL] = true
		}
		b, _ := json.Marshal(d.Specs)
		var specs map[string]*float64
		_ = json.Unmarshal(b, &specs)
		for k, v := range specs {
			if v != nil && !urls[d.SpecSources[k]] {
				t.Errorf("%s: figure %s=%v has no source among the notes", d.ID, k, *v)
			}
		}
		if d.Side == SideCounterUAS && (d.Group != nil || len(d.CountersGroups) == 0) {
			t.Errorf("%s: counter-UAS records carry counters_groups only", d.ID)
		}
	}
}

// TestLoadRejects proves the schema check can fail: each mutation of a
// valid file must be refused with an *Error naming the problem.
func TestLoadRejects(t *testing.T) {
	var base dronesFile
	if err := json.Unmarshal(dronesJSON, &base); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		mutate func(f *dronesFile)
		want   string
	}{
		{"52 records", func(f *dronesFile) { f.Drones = f.Drones[1:] }, "exactly 53"},
		{"no notes", func(f *dronesFile) { f.Drones[0].Notes = nil }, "sourced note"},
		{"http source", func(f *dronesFile) { f.Drones[0].Notes[0].Source.URL = "http://example.com/x" }, "https"},
		{"bad country", func(f *dronesFile) { f.Drones[0].Country.Code = "XX" }, "ISO 3166"},
		{"bad side", func(f *dronesFile) { f.Drones[0].Side = "friendly" }, "unknown side"},
		{"duplicate id", func(f *dronesFile) { f.Drones[1].ID = f.Drones[0].ID }, "duplicate"},
		{"bad slug", func(f *dronesFile) { f.Drones[0].ID = "Bad Slug" }, "slug"},
		{"unsourced figure", func(f *dronesFile) { v := 1.0; f.Drones[2].Specs.RangeKm = &v }, "without a source"},
		{"group vs specs", func(f *dronesFile) {
			for i := range f.Drones {
				if f.Drones[i].ID == "aerovironment-rq-11-raven" {
					w := 4000.0 // a stated Group 1 with a Group 4 weight
					f.Drones[i].Specs.MTOWKg = &w
				}
			}
		}, "contradicts"},
		{"derived group wrong", func(f *dronesFile) {
			for i := range f.Drones {
				if f.Drones[i].ID == "kronshtadt-orion" {
					g := 3
					f.Drones[i].Group = &g
				}
			}
		}, "derived group"},
		{"counter-uas with group", func(f *dronesFile) {
			for i := range f.Drones {
				if f.Drones[i].Side == SideCounterUAS {
					g := 1
					f.Drones[i].Group = &g
					return
				}
			}
		}, "counters_groups"},
		{"bad serial prefix", func(f *dronesFile) {
			for i := range f.Drones {
				if len(f.Drones[i].Classifier.SerialPrefixes) > 0 {
					f.Drones[i].Classifier.SerialPrefixes = []string{"15O1"}
					return
				}
			}
		}, "manufacturer code"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var f dronesFile
			_ = json.Unmarshal(dronesJSON, &f) // fresh copy: mutations must not leak
			tc.mutate(&f)
			b, _ := json.Marshal(f)
			_, err := Load(b)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Load accepted the mutated file (err=%v)", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

// TestGroupFor checks the rule against the thresholds of the DoD table
// (20/55/1,320 lb; 100/250 kt; FL180), converted by hand, not by the code.
func TestGroupFor(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		name string
		s    Specs
		want int
	}{
		{"unknown weight", Specs{}, 0},
		{"19.9 lb", Specs{MTOWKg: f(9.03)}, 1},
		{"20.1 lb", Specs{MTOWKg: f(9.12)}, 2},
		{"54.9 lb", Specs{MTOWKg: f(24.9)}, 2},
		{"55.2 lb", Specs{MTOWKg: f(25.04)}, 3},
		{"1,319 lb", Specs{MTOWKg: f(598.3)}, 3},
		{"1,322 lb", Specs{MTOWKg: f(599.7)}, 4},
		{"light but 101 kt", Specs{MTOWKg: f(1), MaxSpeedKmh: f(187.1)}, 2},
		{"light but 99 kt", Specs{MTOWKg: f(1), MaxSpeedKmh: f(183.3)}, 1},
		{"light but 251 kt", Specs{MTOWKg: f(1), MaxSpeedKmh: f(464.9)}, 4},
		{"heavy above FL180", Specs{MTOWKg: f(4760), OperatingAltM: f(7620)}, 5},
		{"heavy at FL180", Specs{MTOWKg: f(650), OperatingAltM: f(5486.4)}, 4},
		{"payload settles weight", Specs{PayloadKg: f(1350)}, 4},
		{"light payload settles nothing", Specs{PayloadKg: f(300)}, 0},
	}
	for _, tc := range cases {
		if got := GroupFor(tc.s); got != tc.want {
			t.Errorf("%s: GroupFor = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestAirframeTypes compares the MAV_TYPE mapping with gomavlib's generated
// enum (an independent copy of MAVLink's minimal.xml).
func TestAirframeTypes(t *testing.T) {
	want := map[string]minimal.MAV_TYPE{
		"fixed_wing": minimal.MAV_TYPE_FIXED_WING, "quadrotor": minimal.MAV_TYPE_QUADROTOR,
		"coaxial": minimal.MAV_TYPE_COAXIAL, "helicopter": minimal.MAV_TYPE_HELICOPTER,
		"hexarotor": minimal.MAV_TYPE_HEXAROTOR, "octorotor": minimal.MAV_TYPE_OCTOROTOR,
		"vtol_tiltrotor": minimal.MAV_TYPE_VTOL_TILTROTOR, "vtol_fixedrotor": minimal.MAV_TYPE_VTOL_FIXEDROTOR,
		"vtol_tailsitter": minimal.MAV_TYPE_VTOL_TAILSITTER,
	}
	for af, mt := range want {
		got, ok := airframeTypes[af]
		if !ok || got.mav != int(mt) || got.mavName != mt.String() {
			t.Errorf("%s: mapped to %d %q, want %d %q", af, got.mav, got.mavName, int(mt), mt.String())
		}
	}
	for _, af := range Airframes {
		if _, ok := airframeTypes[af]; !ok && af != "ground_system" {
			t.Errorf("airframe %s has no type mapping", af)
		}
	}
}

func TestSelect(t *testing.T) {
	db := mustDB(t)
	cases := []struct {
		f       Filter
		wantMin int
		check   func(Drone) bool
	}{
		{Filter{Side: "adversary"}, 8, func(d Drone) bool { return d.Side == SideAdversary }},
		{Filter{Side: "ADVERSARY", Group: "4"}, 4, func(d Drone) bool { return d.Side == SideAdversary && *d.Group == 4 }},
		{Filter{Country: "cn"}, 7, func(d Drone) bool { return d.Country.Code == "CN" }},
		{Filter{Country: "china"}, 7, func(d Drone) bool { return d.Country.Code == "CN" }},
		{Filter{Telemetry: "dji_droneid"}, 4, func(d Drone) bool { return hasSurface(d, "dji_droneid") }},
		{Filter{Role: "c_uas_rf_defeat"}, 3, func(d Drone) bool { return d.Role == "c_uas_rf_defeat" }},
		{Filter{Q: "reaper"}, 1, func(d Drone) bool { return strings.Contains(strings.ToLower(d.Name+fmt.Sprint(d.Notes)), "reaper") }},
	}
	for _, tc := range cases {
		got, err := db.Select(tc.f)
		if err != nil {
			t.Fatalf("%+v: %v", tc.f, err)
		}
		if len(got) < tc.wantMin {
			t.Errorf("%+v: %d records, want at least %d", tc.f, len(got), tc.wantMin)
		}
		for _, d := range got {
			if !tc.check(d) {
				t.Errorf("%+v: %s does not match", tc.f, d.ID)
			}
		}
	}
	for _, bad := range []Filter{{Side: "friendly"}, {Group: "6"}, {Role: "x"}, {Telemetry: "morse"}, {Country: "atlantis"}} {
		_, err := db.Select(bad)
		var e *Error
		if !errors.As(err, &e) || len(e.Allowed) == 0 {
			t.Errorf("%+v: want *Error listing allowed values, got %v", bad, err)
		}
	}
}

func TestLookup(t *testing.T) {
	db := mustDB(t)
	q := NewQuery()
	q.SerialNumber = "1581F4XFC224H00B6T7Q"
	m := db.Lookup(q)
	if m.Side != SideDualUse || m.Candidates.Len() == 0 {
		t.Fatalf("DJI serial: side %s, %d candidates", m.Side, m.Candidates.Len())
	}
	db.Each(m.Candidates, func(d Drone) bool {
		if d.Manufacturer != "DJI" || d.Side == SideCounterUAS {
			t.Errorf("DJI serial matched %s", d.ID)
		}
		return true
	})
	q.UAType = 1 // aeroplane: no DJI fixed-wing in the database
	if m := db.Lookup(q); m.Candidates.Len() != 0 || m.Side != SideUnknown {
		t.Errorf("DJI serial + aeroplane: %d candidates, side %s", m.Candidates.Len(), m.Side)
	}
	q = NewQuery()
	q.MAVType = int(minimal.MAV_TYPE_HELICOPTER)
	got := db.Candidates(db.Lookup(q))
	if len(got) != 1 || got[0].ID != "northrop-grumman-mq-8b-fire-scout" {
		t.Errorf("MAV_TYPE_HELICOPTER: %v", got)
	}
	if m := db.Lookup(NewQuery()); m.Matched != 0 || m.Candidates.Len() != 0 {
		t.Errorf("empty query matched %d", m.Candidates.Len())
	}
	q = NewQuery()
	q.SerialNumber = "1581F4XFC224H00B6T7Q"
	q.UAType = 2
	if n := testing.AllocsPerRun(100, func() { _ = db.Lookup(q) }); n != 0 {
		t.Errorf("Lookup allocates %v times per call, want 0", n)
	}
}

func TestResearchCorpus(t *testing.T) {
	docs, err := Research()
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, d := range docs {
		ids = append(ids, d.ID)
	}
	for _, want := range []string{"astm-f3411-22a", "icao-doc-9871", "mavlink-serialization", "faa-remote-id-final-rule",
		"14-cfr-part-107", "crs-if12797-uas-categories", "dsse-protocol", "in-toto-attestation-spec", "rfc6962", "rfc9162",
		"c2sp-tlog-checkpoint", "dod-c-suas-strategy-2021"} {
		if !slices.Contains(ids, want) {
			t.Errorf("research corpus lacks %s", want)
		}
	}
}

func FuzzLoad(f *testing.F) {
	f.Add(dronesJSON)
	f.Add([]byte(`{"version":1,"drones":[]}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, b []byte) {
		db, err := Load(b)
		if err == nil && db.Len() != DatabaseSize {
			t.Fatalf("Load accepted %d records", db.Len())
		}
		if err != nil && !bytes.Contains([]byte(err.Error()), []byte("")) {
			t.Fatal("unreachable")
		}
	})
}

func BenchmarkLookup(b *testing.B) {
	db := mustDB(b)
	q := NewQuery()
	q.SerialNumber = "1581F4XFC224H00B6T7Q"
	q.UAType = 2
	b.ReportAllocs()
	for b.Loop() {
		_ = db.Lookup(q)
	}
}

func BenchmarkSelect(b *testing.B) {
	db := mustDB(b)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = db.Select(Filter{Side: "allied", Group: "1"})
	}
}
