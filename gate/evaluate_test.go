package gate

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"testing/quick"

	"github.com/cuasd/cuasd/internal/cputime"
)

// heathrow is a 5 km airport zone up to 150 m.
func heathrow() Geofence {
	return Geofence{ID: "egll", Name: "Heathrow", Class: ClassAirport,
		Center: []float64{51.4700, -0.4543}, RadiusM: 5000, FloorM: ptr(0), CeilingM: ptr(150)}
}

// trusted fills the trust inputs with values that pass every cap.
func trusted(in Input) Input {
	in.HasIntegrity = true
	in.Sensors, in.Protocols, in.HasCorroboration = 2, 1, true
	in.EvidenceAgeS, in.HasEvidenceAge = 1, true
	return in
}

func TestAxesAlwaysPresentAndInOrder(t *testing.T) {
	f := func(seed int64) bool {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		in, zone := randomInput(rng), randomZone(rng)
		r := Evaluate(in, zone, Policy{})
		if len(r.Lambda.Axes) != 13 || !r.HumanDecisionRequired {
			return false
		}
		sum := 0.0
		for i, a := range r.Lambda.Axes {
			if a.ID != AxisID(i) || !(a.Value >= 0 && a.Value <= 1) || a.Evidence() == "" {
				t.Logf("axis %d: %+v", i, a)
				return false
			}
			if !a.Known && !strings.HasPrefix(a.Evidence(), "unknown") {
				t.Logf("axis %s falls back to its default but says %q", a.ID, a.Evidence())
				return false
			}
			// Every axis reports exactly the inputs its definition lists.
			var names []string
			for _, p := range a.Inputs() {
				names = append(names, p.Name)
			}
			if !reflect.DeepEqual(names, axisDefs[i].inputs) {
				t.Logf("axis %s inputs %v, defined %v", a.ID, names, axisDefs[i].inputs)
				return false
			}
			sum += a.Weight * a.Value
		}
		if math.Abs(sum-r.Lambda.Score) > 1e-12 || r.Lambda.Score < 0 || r.Lambda.Score > 1 {
			return false
		}
		b, err := json.Marshal(r)
		if err != nil {
			return false
		}
		var m struct {
			Lambda struct {
				Axes []map[string]any `json:"axes"`
			} `json:"lambda"`
		}
		if json.Unmarshal(b, &m) != nil || len(m.Lambda.Axes) != 13 {
			return false
		}
		for _, a := range m.Lambda.Axes {
			for _, k := range []string{"id", "name", "value", "weight", "inputs", "evidence"} {
				if _, ok := a[k]; !ok {
					return false
				}
			}
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 500}); err != nil {
		t.Fatal(err)
	}
}

// Moving a track closer to the zone never lowers proximity: we step from
// a random position toward the centre along the great circle.
func TestPropertyCloserNeverLowersProximity(t *testing.T) {
	f := func(seed int64) bool {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		zone := randomZone(rng)
		in := randomInput(rng)
		c := zone.Centre()
		p := in.Position()
		d := Distance(p, c)
		brg := Bearing(p, c)
		prev := -1.0
		prevDB := math.Inf(1)
		for _, frac := range []float64{0, 0.2, 0.4, 0.6, 0.8, 0.9, 0.99, 1} {
			q := Destination(p, d*frac, brg)
			in.Lat, in.Lon = q.Lat, q.Lon
			r := Evaluate(in, zone, Policy{})
			v := r.Lambda.Axes[AxisProximity].Value
			// "Closer" is measured by the distance to the boundary, which
			// is what proximity reads; for a circle, approaching the
			// centre always reduces it.
			if zone.IsCircle() && r.DistanceToBoundaryM > prevDB+1e-6 {
				t.Logf("approaching the centre increased the boundary distance %v → %v", prevDB, r.DistanceToBoundaryM)
				return false
			}
			if r.DistanceToBoundaryM <= prevDB && v < prev-1e-12 {
				t.Logf("zone %+v: proximity fell from %v to %v at frac %v", zone, prev, v, frac)
				return false
			}
			prev, prevDB = v, r.DistanceToBoundaryM
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 500}); err != nil {
		t.Fatal(err)
	}
}

// Proximity is a non-increasing function of the signed distance to the
// boundary, sampled densely across it (inside, on, outside).
func TestProximityMonotoneAcrossBoundary(t *testing.T) {
	zone := circle(10, 10, 2000)
	prev := 2.0
	for d := -3000.0; d <= 20000; d += 50 {
		q := Destination(Point{10, 10}, math.Max(0, 2000+d), 90)
		r := Evaluate(Input{Lat: q.Lat, Lon: q.Lon}, zone, Policy{})
		v := r.Lambda.Axes[AxisProximity].Value
		if v > prev+1e-12 {
			t.Fatalf("proximity rose from %v to %v moving away (d=%v)", prev, v, d)
		}
		prev = v
	}
	onEdge := Destination(Point{10, 10}, 2000, 0)
	r := Evaluate(Input{Lat: onEdge.Lat, Lon: onEdge.Lon}, zone, Policy{})
	if v := r.Lambda.Axes[AxisProximity].Value; math.Abs(v-0.8) > 1e-6 {
		t.Errorf("proximity on the boundary = %v, want 0.8", v)
	}
}

// Allow-listing never raises Λ, and never raises the decision.
func TestPropertyAllowListingNeverRaisesLambda(t *testing.T) {
	f := func(seed int64) bool {
		rng := rand.New(rand.NewPCG(uint64(seed), 13))
		in, zone := randomInput(rng), randomZone(rng)
		for _, before := range []AllowStatus{AllowUnknown, AllowNotListed} {
			in.Allow = before
			a := Evaluate(in, zone, Policy{})
			in.Allow = AllowListed
			b := Evaluate(in, zone, Policy{})
			if b.Lambda.Score > a.Lambda.Score+1e-15 || b.Decision > a.Decision {
				t.Logf("allow-listing raised Λ %v → %v or decision %v → %v", a.Lambda.Score, b.Lambda.Score, a.Decision, b.Decision)
				return false
			}
			if b.Decision == InterceptRecommended || !b.Lambda.Caps.Has(CapAllowListed) {
				return false
			}
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 1000}); err != nil {
		t.Fatal(err)
	}
}

func TestDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		in, zone := randomInput(rng), randomZone(rng)
		a, _ := json.Marshal(Evaluate(in, zone, Policy{}))
		b, _ := json.Marshal(Evaluate(in, zone, Policy{}))
		if string(a) != string(b) {
			t.Fatalf("two evaluations differ:\n%s\n%s", a, b)
		}
	}
}

func TestEvaluateAllocatesNothing(t *testing.T) {
	zone := heathrow()
	poly := vTriangle(54.5)
	in := trusted(Input{Lat: 51.48, Lon: -0.45, AltM: 80, HasAlt: true, SpeedMps: 12, HasSpeed: true,
		HeadingDeg: 180, HasHeading: true, Side: SideUnknown, HasIdentity: true,
		Identity: Identity{UASID: "1581F5FJD239C00DW22E"}, Allow: AllowNotListed,
		Behaviour: Behaviour{Samples: 20, DurationS: 60, PathM: 300, NetM: 50}, HasBehaviour: true,
		SwarmSize: 3, HasSwarm: true, Compliance: Compliance{RemoteID: true}, HasCompliance: true})
	var r Result
	pol := Policy{}
	if n := testing.AllocsPerRun(100, func() { EvaluateInto(&r, &in, &zone, &pol) }); n != 0 {
		t.Errorf("EvaluateInto on a circle allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { EvaluateInto(&r, &in, &poly, &pol) }); n != 0 {
		t.Errorf("EvaluateInto on a polygon allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { r = Evaluate(in, zone, pol) }); n != 0 {
		t.Errorf("Evaluate allocates %v times", n)
	}
}

// A breaching, fast, anonymous adversary near an airport, seen by two
// sensors with clean signals and fresh evidence, is the one case that
// reaches intercept-recommended; each governance rule then caps it.
func TestDecisionAndCaps(t *testing.T) {
	base := trusted(Input{Lat: 51.4700, Lon: -0.4543, AltM: 60, HasAlt: true,
		SpeedMps: 20, HasSpeed: true, HeadingDeg: 90, HasHeading: true,
		Side: SideAdversary, HasIdentity: true, Allow: AllowNotListed,
		Compliance: Compliance{}, HasCompliance: true})
	r := Evaluate(base, heathrow(), Policy{})
	if r.Decision != InterceptRecommended || !r.Breach || r.Lambda.Caps != 0 {
		t.Fatalf("base case: decision %v breach %v Λ %.3f caps %v", r.Decision, r.Breach, r.Lambda.Score, r.Lambda.Applied())
	}
	tests := []struct {
		name   string
		change func(*Input)
		cap    CapID
	}{
		{"allow-listed", func(in *Input) { in.Allow = AllowListed }, CapAllowListed},
		{"allied", func(in *Input) { in.Side = SideAllied }, CapFriendly},
		{"counter-uas", func(in *Input) { in.Side = SideCounterUAS }, CapFriendly},
		{"integrity unknown", func(in *Input) { in.HasIntegrity = false }, CapSignalIntegrity},
		{"decoder warnings", func(in *Input) { in.Integrity.Warnings = []string{"crc", "range"} }, CapSignalIntegrity},
		{"single sensor", func(in *Input) { in.Sensors = 1 }, CapCorroboration},
		{"corroboration unknown", func(in *Input) { in.HasCorroboration = false }, CapCorroboration},
		{"stale", func(in *Input) { in.EvidenceAgeS = 30 }, CapFreshness},
		{"age unknown", func(in *Input) { in.HasEvidenceAge = false }, CapFreshness},
		{"far away and opening", func(in *Input) { in.Lat, in.Lon, in.HeadingDeg = 51.60, -0.4543, 0 }, CapNoBreach},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := base
			tc.change(&in)
			r := Evaluate(in, heathrow(), Policy{})
			if r.Decision == InterceptRecommended {
				t.Fatalf("not capped: Λ %.3f", r.Lambda.Score)
			}
			if !r.Lambda.Caps.Has(tc.cap) {
				t.Errorf("cap %s not applied; caps %+v", tc.cap, r.Lambda.Applied())
			}
			if r.Lambda.Band == InterceptRecommended && !r.Lambda.Binding.Has(tc.cap) {
				t.Errorf("cap %s held but is not marked binding", tc.cap)
			}
			if !r.HumanDecisionRequired {
				t.Error("human_decision_required must always be true")
			}
		})
	}
}

func TestPredictedBreachLiftsNoBreachCap(t *testing.T) {
	zone := circle(0, 0, 1000)
	start := Destination(Point{0, 0}, 1500, 90) // 500 m outside, east
	in := trusted(Input{Lat: start.Lat, Lon: start.Lon, SpeedMps: 10, HasSpeed: true, HeadingDeg: 270, HasHeading: true})
	r := Evaluate(in, zone, Policy{})
	if r.Breach || !r.PredictedBreach || !r.HasTimeToBreach || math.Abs(r.TimeToBreachS-50) > 0.01 {
		t.Fatalf("closing at 10 m/s from 500 m: breach %v predicted %v t %v", r.Breach, r.PredictedBreach, r.TimeToBreachS)
	}
	if r.Lambda.Caps.Has(CapNoBreach) {
		t.Error("a breach predicted within the horizon must not hold the no-breach cap")
	}
	if v := r.Lambda.Axes[AxisClosure].Value; math.Abs(v-1/(1+50.0/60)) > 1e-3 {
		t.Errorf("closure = %v, want 1/(1+50/60)", v)
	}
	in.SpeedMps = 5 // 100 s: beyond the 60 s horizon
	if r := Evaluate(in, zone, Policy{}); r.PredictedBreach || !r.Lambda.Caps.Has(CapNoBreach) {
		t.Error("a breach 100 s away is beyond the horizon")
	}
	in.HeadingDeg = 90 // opening
	if r := Evaluate(in, zone, Policy{}); r.HasTimeToBreach || r.Lambda.Axes[AxisClosure].Value != 0 {
		t.Error("an opening track has closure 0 and no time to breach")
	}
}

// Each axis moves as its definition says.
func TestAxesMoveAsDocumented(t *testing.T) {
	zone := heathrow()
	at := func(in Input, id AxisID) float64 {
		return Evaluate(in, zone, Policy{}).Lambda.Axes[id].Value
	}
	in := Input{Lat: 51.47, Lon: -0.4543}
	close := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

	// altitude: inside the band 1, 50 m above the ceiling 0.5, unknown 0.5.
	if v := at(Input{Lat: 51.47, Lon: -0.4543, AltM: 100, HasAlt: true}, AxisAltitude); v != 1 {
		t.Errorf("altitude in band = %v", v)
	}
	if v := at(Input{Lat: 51.47, Lon: -0.4543, AltM: 200, HasAlt: true}, AxisAltitude); !close(v, 0.5) {
		t.Errorf("altitude 50 m above = %v", v)
	}
	noBand := circle(51.47, -0.4543, 5000)
	if v := Evaluate(Input{Lat: 51.47, Lon: -0.4543, AltM: 243.84, HasAlt: true}, noBand, Policy{}).Lambda.Axes[AxisAltitude].Value; !close(v, 0.5) {
		t.Errorf("altitude 800 ft without a band = %v, want 0.5", v)
	}

	// speed: 87 kt is 1, half of it 0.5.
	if v := at(Input{Lat: 51.47, Lon: -0.4543, SpeedMps: 87 * 1852.0 / 3600, HasSpeed: true}, AxisSpeed); !close(v, 1) {
		t.Errorf("speed at 87 kt = %v", v)
	}
	if v := at(Input{Lat: 51.47, Lon: -0.4543, SpeedMps: 87 * 1852.0 / 7200, HasSpeed: true}, AxisSpeed); !close(v, 0.5) {
		t.Errorf("speed at 43.5 kt = %v", v)
	}

	// classification order: adversary > unknown > dual-use > allied.
	var prev = 2.0
	for _, s := range []Side{SideAdversary, SideUnknown, SideDualUse, SideAllied} {
		v := at(Input{Lat: 51.47, Lon: -0.4543, Side: s}, AxisClassification)
		if v >= prev {
			t.Errorf("classification %s = %v, not below the previous side", s, v)
		}
		prev = v
	}

	// swarm grows with the group.
	prev = -1
	for _, n := range []int{1, 2, 3, 5, 9, 50} {
		v := at(Input{Lat: 51.47, Lon: -0.4543, SwarmSize: n, HasSwarm: true}, AxisSwarm)
		if v <= prev && n > 1 {
			t.Errorf("swarm %d = %v, not above %v", n, v, prev)
		}
		prev = v
	}
	if v := at(Input{Lat: 51.47, Lon: -0.4543, SwarmSize: 3, HasSwarm: true}, AxisSwarm); !close(v, 0.5) {
		t.Errorf("swarm of 3 = %v, want 0.5", v)
	}

	// zone sensitivity: class default, explicit override.
	z := zone
	z.Sensitivity = ptr(0.3)
	if v := Evaluate(in, z, Policy{}).Lambda.Axes[AxisZoneSensitivity].Value; v != 0.3 {
		t.Errorf("configured sensitivity = %v", v)
	}
	if v := at(in, AxisZoneSensitivity); v != 1 {
		t.Errorf("airport sensitivity = %v", v)
	}

	// identity: anonymous > identified > allow-listed.
	anon := at(Input{Lat: 51.47, Lon: -0.4543, HasIdentity: true}, AxisIdentity)
	one := at(Input{Lat: 51.47, Lon: -0.4543, HasIdentity: true, Identity: Identity{ICAO: "4CA2D1"}}, AxisIdentity)
	two := at(Input{Lat: 51.47, Lon: -0.4543, HasIdentity: true, Identity: Identity{UASID: "X", OperatorID: "Y"}}, AxisIdentity)
	listed := at(Input{Lat: 51.47, Lon: -0.4543, HasIdentity: true, Identity: Identity{ICAO: "4CA2D1"}, Allow: AllowListed}, AxisIdentity)
	if !(anon > one && one > two && two > listed && listed == 0) {
		t.Errorf("identity: anonymous %v, one claim %v, two %v, listed %v", anon, one, two, listed)
	}

	// compliance: full broadcast 0, nothing 0.7, plus emergency and height.
	comp := func(c Compliance, h float64) float64 {
		return at(Input{Lat: 51.47, Lon: -0.4543, Compliance: c, HasCompliance: true, HeightAGLM: h, HasHeightAGL: h > 0}, AxisCompliance)
	}
	if v := comp(Compliance{RemoteID: true, OperatorLocation: true}, 0); v != 0 {
		t.Errorf("compliant = %v", v)
	}
	if v := comp(Compliance{}, 0); !close(v, 0.7) {
		t.Errorf("no Remote ID, no operator = %v", v)
	}
	if v := comp(Compliance{Emergency: true}, 200); !close(v, 1) {
		t.Errorf("everything wrong = %v", v)
	}

	// signal integrity: clean 1, each indicator lowers it.
	clean := Input{Lat: 51.47, Lon: -0.4543, HasIntegrity: true}
	if v := at(clean, AxisSignalIntegrity); v != 1 {
		t.Errorf("clean integrity = %v", v)
	}
	for name, change := range map[string]func(*Input){
		"warning":   func(in *Input) { in.Integrity.Warnings = []string{"w"} },
		"jump":      func(in *Input) { in.Behaviour, in.HasBehaviour = Behaviour{Samples: 5, Jumps: 1}, true },
		"speed":     func(in *Input) { in.SpeedMps, in.HasSpeed = 500, true },
		"disagree":  func(in *Input) { in.Integrity.CrossProtocolDisagreementM = 800 },
		"clockdrft": func(in *Input) { in.Integrity.ClockDriftS = -5 },
		"mlat":      func(in *Input) { in.Integrity.MLATContradictionM, in.Integrity.MLATResidualM = 1200, 380 },
	} {
		t.Run(name, func(t *testing.T) {
			x := clean
			change(&x)
			r := Evaluate(x, zone, Policy{})
			a := r.Lambda.Axes[AxisSignalIntegrity]
			if a.Value >= 1 || strings.Contains(a.Evidence(), "no spoofing") {
				t.Errorf("%s: integrity %v (%s)", name, a.Value, a.Evidence())
			}
		})
	}

	// a claim contradicted by multilateration: 0.5, with the distance and
	// residual in the evidence (issue 31).
	x := clean
	x.Integrity.MLATContradictionM, x.Integrity.MLATResidualM = 1234.5, 400
	if a := Evaluate(x, zone, Policy{}).Lambda.Axes[AxisSignalIntegrity]; !close(a.Value, 0.5) ||
		!strings.Contains(a.Evidence(), "multilateration puts the transmitter 1234.5 m from its claimed position (residual 400.0 m") {
		t.Errorf("mlat contradiction: integrity %v (%s)", a.Value, a.Evidence())
	}

	// corroboration: 1 source 0, 2 sources 0.5, 3 sources 0.75.
	for _, tc := range []struct {
		s, p int
		want float64
	}{{1, 1, 0}, {2, 1, 0.5}, {1, 2, 0.5}, {2, 2, 0.75}, {3, 1, 0.75}} {
		t.Run(fmt.Sprintf("%d sensors %d protocols", tc.s, tc.p), func(t *testing.T) {
			if v := at(Input{Lat: 51.47, Lon: -0.4543, Sensors: tc.s, Protocols: tc.p, HasCorroboration: true}, AxisCorroboration); !close(v, tc.want) {
				t.Errorf("corroboration %d sensors %d protocols = %v, want %v", tc.s, tc.p, v, tc.want)
			}
		})
	}

	// freshness halves every half-life.
	for _, tc := range []struct{ age, want float64 }{{0, 1}, {10, 0.5}, {20, 0.25}, {-3, 1}} {
		t.Run(fmt.Sprintf("age %gs", tc.age), func(t *testing.T) {
			if v := at(Input{Lat: 51.47, Lon: -0.4543, EvidenceAgeS: tc.age, HasEvidenceAge: true}, AxisFreshness); !close(v, tc.want) {
				t.Errorf("freshness at %v s = %v, want %v", tc.age, v, tc.want)
			}
		})
	}
}

func TestMissingInputsGiveDocumentedDefaults(t *testing.T) {
	r := Evaluate(Input{Lat: 51.6, Lon: -0.4543}, circle(51.47, -0.4543, 5000), Policy{})
	for _, id := range []AxisID{AxisClosure, AxisAltitude, AxisSpeed, AxisClassification, AxisBehaviour,
		AxisSwarm, AxisZoneSensitivity, AxisIdentity, AxisCompliance, AxisSignalIntegrity, AxisCorroboration, AxisFreshness} {
		a := r.Lambda.Axes[id]
		if a.Known {
			t.Errorf("%s: known without its input", id)
		}
		if a.Value != axisDefs[id].def {
			t.Errorf("%s: value %v, documented default %v", id, a.Value, axisDefs[id].def)
		}
		if !strings.HasPrefix(a.Evidence(), "unknown") {
			t.Errorf("%s: evidence %q does not say unknown", id, a.Evidence())
		}
		for _, p := range a.Inputs() {
			if p.Name == "speed_mps" || p.Name == "alt_m" || p.Name == "side" {
				if p.Kind != ParamMissing {
					t.Errorf("%s: input %s should be null", id, p.Name)
				}
			}
		}
	}
	if !r.Lambda.Axes[AxisProximity].Known {
		t.Error("proximity needs only the position")
	}
}

func TestBehaviourFeatures(t *testing.T) {
	// A track flying two full circles of 100 m radius in 120 s.
	var s []Sample
	c := Point{47, 8}
	for i := 0; i <= 72; i++ {
		q := Destination(c, 100, float64(i)*10)
		s = append(s, Sample{UnixNano: int64(i) * 1_666_666_667, Lat: q.Lat, Lon: q.Lon})
	}
	b := Features(s)
	if math.Abs(b.NetTurnDeg-720) > 15 {
		t.Errorf("two circles: net turn %v, want about 720", b.NetTurnDeg)
	}
	if math.Abs(b.GyrationM-100) > 1 {
		t.Errorf("gyration %v, want 100", b.GyrationM)
	}
	if b.Jumps != 0 {
		t.Errorf("jumps %d", b.Jumps)
	}
	in := Input{Lat: 47, Lon: 8, Behaviour: b, HasBehaviour: true}
	r := Evaluate(in, circle(47, 8, 1000), Policy{})
	if v := r.Lambda.Axes[AxisBehaviour].Value; v < 0.95 {
		t.Errorf("circling behaviour = %v (%s)", v, r.Lambda.Axes[AxisBehaviour].Evidence())
	}

	// A straight line at 20 m/s: no pattern.
	s = s[:0]
	for i := 0; i < 30; i++ {
		q := Destination(c, float64(i)*20, 45)
		s = append(s, Sample{UnixNano: int64(i) * 1e9, Lat: q.Lat, Lon: q.Lon})
	}
	b = Features(s)
	if math.Abs(b.PathM-580) > 0.01 || math.Abs(b.NetM-580) > 0.01 || math.Abs(b.MaxImpliedSpeedMps-20) > 1e-6 {
		t.Errorf("straight line: %+v", b)
	}
	in.Behaviour = b
	if v := Evaluate(in, circle(47, 8, 1000), Policy{}).Lambda.Axes[AxisBehaviour].Value; v > 0.01 {
		t.Errorf("straight behaviour = %v", v)
	}

	// A 10 km jump in one second.
	s = append(s, Sample{UnixNano: 30e9, Lat: 47.1, Lon: 8})
	if b := Features(s); b.Jumps != 1 || b.MaxImpliedSpeedMps < 1000 {
		t.Errorf("jump not found: %+v", b)
	}
	// A stationary hover for 3 minutes loiters.
	s = s[:0]
	for i := 0; i < 90; i++ {
		s = append(s, Sample{UnixNano: int64(i) * 2e9, Lat: 47, Lon: 8})
	}
	b = Features(s)
	if b.loiter() != 1 {
		t.Errorf("hover loiter = %v", b.loiter())
	}
	if got := DwellNear(s, &Geofence{Center: []float64{47, 8}, RadiusM: 10}, 0); got != 178 {
		t.Errorf("dwell = %v, want 178", got)
	}
	if n := testing.AllocsPerRun(10, func() { Features(s) }); n != 0 {
		t.Errorf("Features allocates %v", n)
	}
	if b := Features(s[:1]); b.Samples != 1 || b.PathM != 0 {
		t.Errorf("one sample: %+v", b)
	}
}

func TestPolicyValidate(t *testing.T) {
	if err := (&Policy{}).Validate(); err != nil {
		t.Errorf("zero policy: %v", err)
	}
	d := DefaultPolicy()
	if err := d.Validate(); err != nil {
		t.Errorf("default policy: %v", err)
	}
	sum := 0.0
	for _, w := range d.Weights {
		sum += w
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("default weights sum to %v", sum)
	}
	bad := Policy{AlertAt: 0.9, InterceptAt: 0.5, MinIntegrity: 2}
	bad.Weights[0], bad.Weights[1] = -1, 5
	err := bad.Validate()
	if err == nil || len(err.(*Error).Fields) != 3 {
		t.Errorf("bad policy: %v", err)
	}
	// Weights are normalised: doubling them all changes nothing.
	var w2 Policy
	for i := range w2.Weights {
		w2.Weights[i] = 2 * d.Weights[i]
	}
	in := Input{Lat: 51.47, Lon: -0.45}
	a, b := Evaluate(in, heathrow(), Policy{}), Evaluate(in, heathrow(), w2)
	if math.Abs(a.Lambda.Score-b.Lambda.Score) > 1e-12 {
		t.Errorf("normalisation: %v vs %v", a.Lambda.Score, b.Lambda.Score)
	}
}

func TestDefinitions(t *testing.T) {
	d := Define(Policy{})
	if len(d.Axes) != 13 || len(d.Caps) != int(NumCaps) || len(d.Bands) != 3 {
		t.Fatalf("definitions: %d axes, %d caps, %d bands", len(d.Axes), len(d.Caps), len(d.Bands))
	}
	want := []string{"proximity", "closure", "altitude", "speed", "classification", "behaviour", "swarm",
		"zone_sensitivity", "identity", "compliance", "signal_integrity", "corroboration", "freshness"}
	for i, a := range d.Axes {
		if a.ID != want[i] || a.Name == "" || a.Description == "" || len(a.Inputs) == 0 || a.Weight <= 0 {
			t.Errorf("axis %d: %+v", i, a)
		}
	}
	for _, s := range []string{"conjecture", "decision aid", "not a proof of safety", "human decision"} {
		if !strings.Contains(d.Statement, s) {
			t.Errorf("statement lacks %q", s)
		}
	}
	b, err := json.Marshal(d)
	if err != nil || !strings.Contains(string(b), `"decision":"intercept-recommended"`) {
		t.Errorf("JSON: %v %s", err, b)
	}
}

// randomInput draws a track near the equator-to-mid-latitudes with every
// optional group present or absent at random.
func randomInput(rng *rand.Rand) Input {
	in := Input{Lat: rng.Float64()*120 - 60, Lon: rng.Float64()*360 - 180}
	coin := func() bool { return rng.IntN(2) == 0 }
	if coin() {
		in.AltM, in.HasAlt = rng.Float64()*2000-100, true
	}
	if coin() {
		in.SpeedMps, in.HasSpeed = rng.Float64()*400, true
	}
	if coin() {
		in.HeadingDeg, in.HasHeading = rng.Float64()*360, true
	}
	if coin() {
		in.VRateMps, in.HasVRate = rng.Float64()*20-10, true
	}
	if coin() {
		in.HasIdentity = true
		if coin() {
			in.Identity.UASID = "ABC"
		}
		if coin() {
			in.Identity.ICAO = "ABCDEF"
		}
	}
	in.Allow = AllowStatus(rng.IntN(3))
	in.Side = []Side{"", SideAdversary, SideUnknown, SideDualUse, SideAllied, SideCounterUAS}[rng.IntN(6)]
	if coin() {
		in.HasBehaviour = true
		in.Behaviour = Behaviour{Samples: rng.IntN(50), DurationS: rng.Float64() * 600, PathM: rng.Float64() * 5000,
			NetTurnDeg: rng.Float64()*2000 - 1000, AbsTurnRateDegS: rng.Float64() * 90, Jumps: rng.IntN(3),
			DwellNearS: rng.Float64() * 600}
		in.Behaviour.NetM = in.Behaviour.PathM * rng.Float64()
	}
	if coin() {
		in.SwarmSize, in.HasSwarm = rng.IntN(20), true
	}
	if coin() {
		in.Sensors, in.Protocols, in.HasCorroboration = rng.IntN(5), rng.IntN(4), true
	}
	if coin() {
		in.HasCompliance = true
		in.Compliance = Compliance{RemoteID: coin(), OperatorLocation: coin(), Emergency: coin()}
	}
	if coin() {
		in.HasIntegrity = true
		if coin() {
			in.Integrity.Warnings = []string{"w"}
		}
		in.Integrity.CrossProtocolDisagreementM = rng.Float64() * 300
		in.Integrity.ClockDriftS = rng.Float64()*6 - 3
	}
	if coin() {
		in.EvidenceAgeS, in.HasEvidenceAge = rng.Float64()*60, true
	}
	return in
}

// randomZone draws a circle or a polygon near a random centre, sometimes
// with an altitude band, class and sensitivity.
func randomZone(rng *rand.Rand) Geofence {
	c := Point{rng.Float64()*120 - 60, rng.Float64()*360 - 180}
	var g Geofence
	if rng.IntN(2) == 0 {
		g = Geofence{Center: []float64{c.Lat, c.Lon}, RadiusM: 10 + rng.Float64()*50000}
	} else {
		n := 3 + rng.IntN(8)
		ring := make([][]float64, 0, n+1)
		r := 100 + rng.Float64()*20000
		for i := range n {
			q := Destination(c, r*(0.5+rng.Float64()/2), float64(i)*360/float64(n))
			ring = append(ring, []float64{q.Lon, q.Lat})
		}
		ring = append(ring, ring[0])
		g = Geofence{Polygon: &Polygon{Type: "Polygon", Coordinates: [][][]float64{ring}}}
	}
	if rng.IntN(2) == 0 {
		g.FloorM, g.CeilingM = ptr(rng.Float64()*100), ptr(150+rng.Float64()*500)
	}
	g.Class = Classes[rng.IntN(len(Classes))]
	if rng.IntN(3) == 0 {
		g.Sensitivity = ptr(rng.Float64())
	}
	return g
}

func BenchmarkEvaluateCircle(b *testing.B) {
	zone := heathrow()
	in := trusted(Input{Lat: 51.48, Lon: -0.45, AltM: 80, HasAlt: true, SpeedMps: 12, HasSpeed: true,
		HeadingDeg: 180, HasHeading: true, Side: SideUnknown, HasIdentity: true, Allow: AllowNotListed})
	var r Result
	pol := Policy{}
	b.ReportAllocs()
	c0 := cputime.Process()
	for b.Loop() {
		EvaluateInto(&r, &in, &zone, &pol)
	}
	b.ReportMetric(float64(cputime.Process()-c0)/float64(b.N), "cpu-ns/op")
}

func BenchmarkEvaluatePolygon16(b *testing.B) {
	ring := make([][]float64, 0, 17)
	for i := range 16 {
		q := Destination(Point{51.47, -0.45}, 3000, float64(i)*22.5)
		ring = append(ring, []float64{q.Lon, q.Lat})
	}
	ring = append(ring, ring[0])
	zone := Geofence{Polygon: &Polygon{Type: "Polygon", Coordinates: [][][]float64{ring}}}
	in := trusted(Input{Lat: 51.48, Lon: -0.45, SpeedMps: 12, HasSpeed: true, HeadingDeg: 180, HasHeading: true})
	var r Result
	pol := Policy{}
	b.ReportAllocs()
	c0 := cputime.Process()
	for b.Loop() {
		EvaluateInto(&r, &in, &zone, &pol)
	}
	b.ReportMetric(float64(cputime.Process()-c0)/float64(b.N), "cpu-ns/op")
}

func BenchmarkFeatures60(b *testing.B) {
	s := make([]Sample, 60)
	for i := range s {
		q := Destination(Point{47, 8}, 100, float64(i)*12)
		s[i] = Sample{UnixNano: int64(i) * 1e9, Lat: q.Lat, Lon: q.Lon}
	}
	b.ReportAllocs()
	c0 := cputime.Process()
	for b.Loop() {
		Features(s)
	}
	b.ReportMetric(float64(cputime.Process()-c0)/float64(b.N), "cpu-ns/op")
}
