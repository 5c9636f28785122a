package gate

// Statement is what the API says about Λ wherever it serves a score.
const Statement = "Λ is a decision aid and a conjecture, not a proof of safety. It is a weighted mean of 13 " +
	"explained axes computed from broadcast claims that are unauthenticated and spoofable. Every decision, " +
	"including intercept-recommended, is decision support only and requires a human decision; the gate " +
	"never issues an engagement order."

// Doctrine is the doctrine version label of this rule set (docs/INTERFACE.md).
const Doctrine = "v11"

type axisDef struct {
	id, name, description string
	inputs                []string
	def                   float64 // value when the input is missing
	unknown               string  // evidence when the input is missing
}

// axisDefs documents every axis: GET /v1/lambda serves this table, and
// Evaluate takes its defaults from it, so the documentation cannot drift
// from the code.
var axisDefs = [NumAxes]axisDef{
	AxisProximity: {"proximity", "Proximity",
		"How close the track is to, or how deep it is inside, the protected volume. With d the distance to the volume " +
			"(horizontal distance to the edge, negative inside, combined with the gap to the altitude band when outside it) " +
			"and s the zone's size (radius, or centroid-to-corner distance) but at least the policy's min_proximity_scale_m: " +
			"0.8·exp(−d/s) outside, 0.8 + 0.2·(1 − exp(d/s)) inside. 0.8 on the boundary; never lower when the track moves closer.",
		[]string{"distance_to_boundary_m", "vertical_outside_m", "scale_m"}, 0.8, "unknown"},
	AxisClosure: {"closure", "Closure",
		"How soon the track reaches the zone: the time to breach t from the radial closing speed toward the zone's centre " +
			"(speed·cos(heading − bearing to centre)) and, outside the altitude band, the vertical rate; value 1/(1 + t/h) with h " +
			"the breach horizon (1 during a breach, 0.5 at the horizon); 0 when opening or hovering outside.",
		[]string{"speed_mps", "heading_deg", "vertical_rate_mps", "closing_speed_mps", "time_to_breach_s", "horizon_s"}, 0.5,
		"unknown: speed, heading or vertical rate not given for a track outside the zone; default 0.5"},
	AxisAltitude: {"altitude", "Altitude",
		"Whether the track flies where the zone is protected: 1 inside the zone's altitude band, 1/(1 + gap/50 m) outside it; " +
			"without a band, 1 up to 400 ft (122 m), the low-altitude drone profile, and 122 m/alt above it.",
		[]string{"alt_m", "floor_m", "ceiling_m", "vertical_outside_m"}, 0.5,
		"unknown: no altitude given; default 0.5 (the breach is judged horizontally)"},
	AxisSpeed: {"speed", "Speed",
		"Ground speed against the small-UAS limit of 14 CFR 107.51(a), 87 knots (44.8 m/s): speed/limit, capped at 1.",
		[]string{"speed_mps", "limit_mps"}, 0.5, "unknown: no speed given; default 0.5"},
	AxisClassification: {"classification", "Classification",
		"The drone-database side the caller matched from Remote ID UA type and serial prefix, ADS-B emitter category or " +
			"MAVLink vehicle type: adversary 1.0 > unknown 0.6 > dual-use 0.4 > allied and counter-uas 0.1.",
		[]string{"side"}, 0.6, "unknown: not classified against the drone database; scored as side unknown (0.6)"},
	AxisBehaviour: {"behaviour", "Behaviour",
		"The strongest pattern in the track's history, each in [0, 1]: loiter (1 − net/path displacement, or 1 when stationary, " +
			"scaled by duration up to 120 s), circling (net turn up to 720°), erratic (mean absolute turn rate up to 45°/s), " +
			"dwell (time inside or near the zone up to 300 s). Needs at least 3 positions.",
		[]string{"samples", "loiter", "circling", "erratic", "dwell"}, 0.5,
		"unknown: fewer than 3 positions of history; default 0.5"},
	AxisSwarm: {"swarm", "Swarm",
		"Membership of a coordinated group found by the swarm topology (union-find over the proximity graph), scaled by its " +
			"size n: 0 alone, 1 − 2/(n + 1) in a group (2 → 0.33, 3 → 0.5, 9 → 0.8).",
		[]string{"swarm_size"}, 0, "unknown: swarm membership not computed; default 0"},
	AxisZoneSensitivity: {"zone_sensitivity", "Zone sensitivity",
		"The geofence's configured sensitivity, or its class default: airport and military 1.0, critical-infrastructure 0.9, " +
			"prison 0.8, stadium and event 0.7, generic 0.5.",
		[]string{"class", "sensitivity"}, 0.5, "unknown: the geofence has no class or sensitivity; generic 0.5 assumed"},
	AxisIdentity: {"identity", "Identity",
		"How anonymous the track is: allow-listed 0; otherwise by the number of identity claims (Remote ID UAS id, ICAO " +
			"address, operator id): none 1.0, one 0.6, two or more 0.4. Claims are unauthenticated broadcasts.",
		[]string{"claims", "allow_list"}, 1, "unknown: no identity claims given; treated as anonymous (1.0)"},
	AxisCompliance: {"compliance", "Compliance",
		"Broadcast incompleteness and rule violations, summed and capped at 1: no Remote ID 0.5, no operator location 0.2, " +
			"above 400 ft AGL 0.2 (when the height above ground is known), emergency declared 0.1. 0 is fully compliant.",
		[]string{"remote_id", "operator_location", "height_agl_m", "emergency"}, 0.5,
		"unknown: broadcast compliance not given; default 0.5"},
	AxisSignalIntegrity: {"signal_integrity", "Signal integrity",
		"Trust in the signal: 1 minus the spoofing indicators found — decoder warnings 0.2 each (at most 0.6), position " +
			"jumps in the history 0.25 each (at most 0.5), implausible reported speed 0.4, cross-protocol position " +
			"disagreement 0.3, timestamp drift 0.2, a position claim contradicted by multilateration 0.5. High is trustworthy; " +
			"intercept-recommended needs it measured and high.",
		[]string{"decoder_warnings", "position_jumps", "speed_mps", "cross_protocol_disagreement_m", "clock_drift_s", "mlat_contradiction_m", "mlat_residual_m"}, 0.5,
		"unknown: no decoder checks or track history given; default 0.5"},
	AxisCorroboration: {"corroboration", "Corroboration",
		"Independent sources that agree: with k the number of sensors beyond the first plus protocols beyond the first, " +
			"1 − 0.5^k (one sensor and one protocol 0, two sources 0.5, three 0.75). A single unauthenticated source " +
			"never suffices for intercept-recommended.",
		[]string{"sensors", "protocols"}, 0, "unknown: sensor and protocol counts not given; default 0"},
	AxisFreshness: {"freshness", "Freshness",
		"Age of the newest evidence: 0.5^(age/half-life), with the policy's half-life (10 s by default).",
		[]string{"evidence_age_s", "half_life_s"}, 0.5, "unknown: evidence age not given; default 0.5"},
}

// CapID names a governance cap: a rule that limits how far the decision
// may go whatever Λ says.
type CapID uint8

// The governance caps.
const (
	CapNoBreach CapID = iota
	CapAllowListed
	CapFriendly
	CapSignalIntegrity
	CapCorroboration
	CapFreshness
	// NumCaps is the number of caps.
	NumCaps
)

// CapSet is a set of caps.
type CapSet uint8

// Has reports whether c is in the set.
func (s CapSet) Has(c CapID) bool { return s&(1<<c) != 0 }

type capDef struct {
	id          string
	max         Decision
	description string
}

var capDefs = [NumCaps]capDef{
	CapNoBreach: {"no-breach", Alert,
		"The track neither breaches the zone nor is predicted to within the breach horizon."},
	CapAllowListed: {"allow-listed", Alert,
		"The track's identity claim is on the allow-list (a claim, so the track is still shown)."},
	CapFriendly: {"friendly-classification", Alert,
		"The drone database classifies the track as allied or counter-uas."},
	CapSignalIntegrity: {"signal-integrity", Alert,
		"Signal integrity is unknown or below the policy's min_integrity: the track may be spoofed."},
	CapCorroboration: {"corroboration", Alert,
		"Corroboration is unknown or below the policy's min_corroboration: no independent source confirms the track."},
	CapFreshness: {"freshness", Alert,
		"Freshness is unknown or below the policy's min_freshness: the evidence is stale."},
}

// String returns the cap's JSON id, e.g. "no-breach".
func (c CapID) String() string {
	if c < NumCaps {
		return capDefs[c].id
	}
	return "cap(?)"
}

// Max returns the highest decision the cap allows.
func (c CapID) Max() Decision { return capDefs[c].max }

// Description says when the cap applies.
func (c CapID) Description() string { return capDefs[c].description }

// AxisDefinition documents one axis for GET /v1/lambda.
type AxisDefinition struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Weight      float64  `json:"weight"`
	Inputs      []string `json:"inputs"`
	Default     Default  `json:"default"`
}

// Default is what an axis reports when its input is missing.
type Default struct {
	Value    float64 `json:"value"`
	Evidence string  `json:"evidence"`
}

// BandDefinition is one decision band: Λ in [Min, Max) gives Decision.
type BandDefinition struct {
	Decision Decision `json:"decision"`
	Min      float64  `json:"min"`
	Max      float64  `json:"max"`
	// FallBelow is the Λ below which the continuous gate lets a track held
	// at this decision fall, after the policy's MinHoldS (Held); nil for
	// monitor.
	FallBelow *float64 `json:"fall_below,omitempty"`
}

// CapDefinition documents one governance cap.
type CapDefinition struct {
	ID          string   `json:"id"`
	Max         Decision `json:"max"`
	Description string   `json:"description"`
}

// Definitions is the body of GET /v1/lambda.
type Definitions struct {
	// MinHoldS is the continuous gate's dwell (Held).
	MinHoldS  float64          `json:"min_hold_s"`
	Axes      []AxisDefinition `json:"axes"`
	Bands     []BandDefinition `json:"bands"`
	Caps      []CapDefinition  `json:"caps"`
	Statement string           `json:"statement"`
	Doctrine  string           `json:"doctrine"`
}

// Define returns the definitions of the 13 axes, the bands and the caps
// under a policy (the zero Policy means DefaultPolicy).
func Define(policy Policy) Definitions {
	p := policy.withDefaults()
	d := Definitions{Statement: Statement, Doctrine: Doctrine}
	for i, a := range axisDefs {
		d.Axes = append(d.Axes, AxisDefinition{
			ID: a.id, Name: a.name, Description: a.description, Weight: p.Weights[i],
			Inputs: append([]string(nil), a.inputs...), Default: Default{Value: a.def, Evidence: a.unknown},
		})
	}
	d.MinHoldS = p.MinHoldS
	alertFall, interceptFall := p.AlertAt-p.AlertFallMargin, p.InterceptAt-p.InterceptFallMargin
	d.Bands = []BandDefinition{
		{Decision: Monitor, Min: 0, Max: p.AlertAt},
		{Decision: Alert, Min: p.AlertAt, Max: p.InterceptAt, FallBelow: &alertFall},
		{Decision: InterceptRecommended, Min: p.InterceptAt, Max: 1, FallBelow: &interceptFall},
	}
	for c := CapID(0); c < NumCaps; c++ {
		d.Caps = append(d.Caps, CapDefinition{ID: capDefs[c].id, Max: capDefs[c].max, Description: capDefs[c].description})
	}
	return d
}
