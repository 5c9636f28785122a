package gate

import "math"

// Decision is the gate's recommendation. Every decision is decision
// support for a human; none is an engagement order.
type Decision uint8

// The decision bands, in increasing order of escalation.
const (
	Monitor Decision = iota
	Alert
	InterceptRecommended
)

// String returns "monitor", "alert" or "intercept-recommended".
func (d Decision) String() string {
	switch d {
	case Monitor:
		return "monitor"
	case Alert:
		return "alert"
	case InterceptRecommended:
		return "intercept-recommended"
	}
	return "decision(?)"
}

// MarshalText encodes the decision as its String.
func (d Decision) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Result is the outcome of Evaluate: the geometry of the track against the
// zone, Λ with its 13 axes and the caps, and the decision.
type Result struct {
	// Breach is true when the track is inside the zone horizontally (on
	// the boundary counts) and inside its altitude band, or the band cannot
	// be checked because the altitude is unknown.
	Breach bool
	// PredictedBreach is Breach, or a breach predicted within the policy's
	// BreachHorizonS from the current velocity.
	PredictedBreach bool
	// TimeToBreachS is 0 during a breach and the predicted time otherwise;
	// HasTimeToBreach is false when no breach is predicted at all.
	TimeToBreachS   float64
	HasTimeToBreach bool
	// DistanceM is the great-circle distance from the zone's centre (the
	// polygon's centroid) to the track.
	DistanceM float64
	// DistanceToBoundaryM is the horizontal distance to the edge, negative
	// inside.
	DistanceToBoundaryM float64
	// BearingDeg is the initial bearing from the zone's centre to the
	// track: where to look from the protected site.
	BearingDeg float64
	// Lambda is the score with its axes and caps.
	Lambda Lambda
	// Decision is the band of Λ lowered by every cap that applies.
	Decision Decision
	// Sustained is the highest decision this result keeps under the
	// policy's hysteresis (issue 33): the band of Λ with each threshold
	// lowered by its fall margin, lowered by every cap that holds. It is
	// never below Decision. A held decision (Held) at or below it does not
	// start to fall.
	Sustained Decision
	// HumanDecisionRequired is always true.
	HumanDecisionRequired bool
}

// Lambda is Λ: the weighted mean of the 13 axis values, in [0, 1], with the
// band it falls in and the governance caps that apply.
type Lambda struct {
	Score float64
	// Band is the decision Λ alone would give, before caps.
	Band Decision
	Axes [NumAxes]Axis
	// Caps holds every cap whose condition held; Binding those that
	// lowered the decision below Band.
	Caps    CapSet
	Binding CapSet
}

// Evaluate scores one track against one geofence under a policy. It is a
// deterministic function of its arguments and does not allocate. The
// geofence must be valid (see Geofence.Validate); the zero Policy means
// DefaultPolicy.
func Evaluate(in Input, zone Geofence, policy Policy) Result {
	var r Result
	EvaluateInto(&r, &in, &zone, &policy)
	return r
}

// EvaluateInto is Evaluate writing into r, for callers that keep a Result
// per track and want to avoid copying it.
func EvaluateInto(r *Result, in *Input, zone *Geofence, policy *Policy) {
	pol := policy.withDefaults()
	*r = Result{HumanDecisionRequired: true}
	p := in.Position()
	c, scale := geometry(r, zone, p)
	db := r.DistanceToBoundaryM

	// Vertical position against the band: known when there is no band
	// (nothing to be outside of) or the altitude is given.
	vOut, vKnown := 0.0, true
	if zone.HasBand() {
		if in.HasAlt {
			vOut = zone.VerticalOutsideM(in.AltM)
		} else {
			vKnown = false
		}
	}
	r.Breach = db <= 0 && vOut == 0

	axes := &r.Lambda.Axes
	for i := range axes {
		axes[i] = Axis{ID: AxisID(i), Weight: pol.Weights[i]}
	}
	proximity(&axes[AxisProximity], db, vOut, vKnown, scale, &pol)
	closure(r, &axes[AxisClosure], in, zone, c, p, db, vOut, &pol)
	altitude(&axes[AxisAltitude], in, zone, vOut)
	speed(&axes[AxisSpeed], in)
	classification(&axes[AxisClassification], in.Side)
	behaviour(&axes[AxisBehaviour], in)
	swarm(&axes[AxisSwarm], in)
	zoneSensitivity(&axes[AxisZoneSensitivity], zone)
	identity(&axes[AxisIdentity], in)
	compliance(&axes[AxisCompliance], in)
	integrity(&axes[AxisSignalIntegrity], in, &pol)
	corroboration(&axes[AxisCorroboration], in)
	freshness(&axes[AxisFreshness], in, &pol)
	score(r, &pol)
	applyCaps(r, in, &pol)
}

// geometry sets the distances and bearing of position p to zone in r, and
// returns the zone's centre (a polygon's centroid) and its proximity scale.
func geometry(r *Result, zone *Geofence, p Point) (c Point, scale float64) {
	if zone.IsCircle() {
		c, scale = zone.Centre(), zone.RadiusM
		r.DistanceM = Distance(c, p)
		r.DistanceToBoundaryM = snap(r.DistanceM - zone.RadiusM)
	} else {
		cv := zone.centroid()
		c = Point{Lat: math.Atan2(cv.z, math.Hypot(cv.x, cv.y)) * rad, Lon: math.Atan2(cv.y, cv.x) * rad}
		scale = zone.ScaleM()
		r.DistanceM = Distance(c, p)
		r.DistanceToBoundaryM = snap(zone.polygonSignedDistance(p))
	}
	r.BearingDeg = Bearing(c, p)
	return c, scale
}

// score is Λ, the weighted sum of the axes, and its band.
func score(r *Result, pol *Policy) {
	sum := 0.0
	for i := range r.Lambda.Axes {
		sum += r.Lambda.Axes[i].Weight * r.Lambda.Axes[i].Value
	}
	r.Lambda.Score = clamp01(sum)
	r.Lambda.Band = band(r.Lambda.Score, pol.AlertAt, pol.InterceptAt)
	r.Sustained = band(r.Lambda.Score, pol.AlertAt-pol.AlertFallMargin, pol.InterceptAt-pol.InterceptFallMargin)
}

// band is the decision of score s with the thresholds alertAt and
// interceptAt.
func band(s, alertAt, interceptAt float64) Decision {
	switch {
	case s >= interceptAt:
		return InterceptRecommended
	case s >= alertAt:
		return Alert
	}
	return Monitor
}

// applyCaps records every governance rule whose condition holds and lowers
// the decision to the strictest of them.
func applyCaps(r *Result, in *Input, pol *Policy) {
	ax := &r.Lambda.Axes
	hold := func(c CapID, cond bool) {
		if cond {
			r.Lambda.Caps |= 1 << c
		}
	}
	hold(CapNoBreach, !r.PredictedBreach)
	hold(CapAllowListed, in.Allow == AllowListed)
	hold(CapFriendly, in.Side == SideAllied || in.Side == SideCounterUAS)
	hold(CapSignalIntegrity, !ax[AxisSignalIntegrity].Known || ax[AxisSignalIntegrity].Value < pol.MinIntegrity)
	hold(CapCorroboration, !ax[AxisCorroboration].Known || ax[AxisCorroboration].Value < pol.MinCorroboration)
	hold(CapFreshness, !ax[AxisFreshness].Known || ax[AxisFreshness].Value < pol.MinFreshness)
	r.Decision = r.Lambda.Band
	for c := CapID(0); c < NumCaps; c++ {
		if !r.Lambda.Caps.Has(c) {
			continue
		}
		if capDefs[c].max < r.Lambda.Band {
			r.Lambda.Binding |= 1 << c
			r.Decision = min(r.Decision, capDefs[c].max)
		}
		r.Sustained = min(r.Sustained, capDefs[c].max)
	}
	r.Sustained = max(r.Sustained, r.Decision)
}

// Axis scales and limits.
const (
	knot            = 1852.0 / 3600 // m/s
	part107LimitMps = 87 * knot     // 14 CFR 107.51(a): 87 knots groundspeed
	lowAltitudeM    = 121.92        // 400 ft, 14 CFR 107.51(b)
	bandDecayM      = 50.0          // altitude axis halves 50 m outside the band
)

func proximity(a *Axis, db, vOut float64, vKnown bool, scale float64, pol *Policy) {
	s := math.Max(scale, pol.MinProximityScaleM)
	// Distance to the protected volume: horizontal, combined with the
	// vertical gap when the track is above or below the band.
	d := db
	if vOut > 0 {
		if db <= 0 {
			d = vOut
		} else {
			d = math.Hypot(db, vOut)
		}
	}
	if d <= 0 {
		a.Value = 0.8 + 0.2*(1-math.Exp(d/s))
	} else {
		a.Value = 0.8 * math.Exp(-d/s)
	}
	a.Known = true
	a.num("distance_to_boundary_m", db)
	a.numIf("vertical_outside_m", vOut, vKnown)
	a.num("scale_m", s)
}

// The states of a track's approach to a zone, horizontally and vertically.
const (
	approachUnknown = iota
	approachConverging
	approachDiverging
)

func closure(r *Result, a *Axis, in *Input, zone *Geofence, c, p Point, db, vOut float64, pol *Policy) {
	a.numIf("speed_mps", in.SpeedMps, in.HasSpeed)
	a.numIf("heading_deg", in.HeadingDeg, in.HasHeading)
	a.numIf("vertical_rate_mps", in.VRateMps, in.HasVRate)
	hState, th, vc, hasVC := horizontalApproach(in, c, p, db)
	vState, tv := verticalApproach(in, zone, vOut)
	a.numIf("closing_speed_mps", vc, hasVC)
	switch {
	case hState == approachDiverging || vState == approachDiverging:
		a.Known, a.Value = true, 0
		if vState == approachDiverging {
			a.flags |= closVertDiverging
		}
		a.missing("time_to_breach_s")
	case hState == approachUnknown || vState == approachUnknown:
		a.Value = axisDefs[AxisClosure].def
		a.missing("time_to_breach_s")
	default:
		t := math.Max(th, tv)
		a.Known, a.Value = true, 1/(1+t/pol.BreachHorizonS)
		r.TimeToBreachS, r.HasTimeToBreach = t, true
		r.PredictedBreach = r.Breach || t <= pol.BreachHorizonS
		a.num("time_to_breach_s", t)
	}
	if r.Breach {
		r.PredictedBreach = true
	}
	a.num("horizon_s", pol.BreachHorizonS)
}

// horizontalApproach is the time to reach the zone's edge (db away) along
// the radial closing speed vc toward its centre c (the centroid of a
// polygon, an approximation), from position p.
func horizontalApproach(in *Input, c, p Point, db float64) (state int, t, vc float64, hasVC bool) {
	if in.HasSpeed && in.HasHeading {
		vc = in.SpeedMps * math.Cos((in.HeadingDeg-Bearing(p, c))*deg)
		hasVC = true
	}
	switch {
	case db <= 0:
		return approachConverging, 0, vc, hasVC
	case hasVC && vc > 0:
		return approachConverging, db / vc, vc, hasVC
	case hasVC:
		return approachDiverging, 0, vc, hasVC
	}
	return approachUnknown, 0, vc, hasVC
}

// verticalApproach is the time to reach the zone's altitude band, vOut
// metres away (0: inside it).
func verticalApproach(in *Input, zone *Geofence, vOut float64) (state int, t float64) {
	if vOut <= 0 {
		return approachConverging, 0
	}
	switch {
	case !in.HasVRate:
		return approachUnknown, 0
	case zone.FloorM != nil && in.AltM < *zone.FloorM && in.VRateMps > 0:
		return approachConverging, vOut / in.VRateMps
	case zone.CeilingM != nil && in.AltM > *zone.CeilingM && in.VRateMps < 0:
		return approachConverging, vOut / -in.VRateMps
	}
	return approachDiverging, 0
}

func altitude(a *Axis, in *Input, zone *Geofence, vOut float64) {
	a.numIf("alt_m", in.AltM, in.HasAlt)
	a.numIf("floor_m", deref(zone.FloorM), zone.FloorM != nil)
	a.numIf("ceiling_m", deref(zone.CeilingM), zone.CeilingM != nil)
	a.numIf("vertical_outside_m", vOut, in.HasAlt)
	switch {
	case !in.HasAlt:
		a.Value = axisDefs[AxisAltitude].def
	case zone.HasBand():
		a.Known, a.Value = true, 1/(1+vOut/bandDecayM)
	case in.AltM <= lowAltitudeM:
		a.Known, a.Value = true, 1
	default:
		a.Known, a.Value = true, lowAltitudeM/in.AltM
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func speed(a *Axis, in *Input) {
	a.numIf("speed_mps", in.SpeedMps, in.HasSpeed)
	a.num("limit_mps", part107LimitMps)
	if !in.HasSpeed {
		a.Value = axisDefs[AxisSpeed].def
		return
	}
	a.Known, a.Value = true, clamp01(in.SpeedMps/part107LimitMps)
}

func sideValue(s Side) (float64, bool) {
	switch s {
	case SideAdversary:
		return 1.0, true
	case SideUnknown:
		return 0.6, true
	case SideDualUse:
		return 0.4, true
	case SideAllied, SideCounterUAS:
		return 0.1, true
	}
	return axisDefs[AxisClassification].def, false
}

func classification(a *Axis, s Side) {
	v, ok := sideValue(s)
	a.Value, a.Known = v, ok
	if ok {
		a.str("side", string(s))
	} else {
		a.missing("side")
	}
}

func behaviour(a *Axis, in *Input) {
	b := &in.Behaviour
	if !in.HasBehaviour || b.Samples < 3 {
		a.numIf("samples", float64(b.Samples), in.HasBehaviour)
		for _, n := range [...]string{"loiter", "circling", "erratic", "dwell"} {
			a.missing(n)
		}
		a.Value = axisDefs[AxisBehaviour].def
		return
	}
	l, c, e, d := b.loiter(), b.circling(), b.erratic(), b.dwell()
	a.num("samples", float64(b.Samples))
	a.num("loiter", l)
	a.num("circling", c)
	a.num("erratic", e)
	a.num("dwell", d)
	a.Known, a.Value = true, max(l, c, e, d)
}

func swarm(a *Axis, in *Input) {
	a.numIf("swarm_size", float64(in.SwarmSize), in.HasSwarm)
	switch {
	case !in.HasSwarm:
		a.Value = axisDefs[AxisSwarm].def
	case in.SwarmSize <= 1:
		a.Known, a.Value = true, 0
	default:
		// 2 → 0.33, 3 → 0.5, 5 → 0.67, 9 → 0.8: grows with the group and
		// saturates, so size matters most among small groups.
		a.Known, a.Value = true, 1-2/float64(in.SwarmSize+1)
	}
}

func zoneSensitivity(a *Axis, zone *Geofence) {
	class := zone.Class
	v, ok := classSensitivity(class)
	if !ok || class == "" {
		class, ok = ClassGeneric, false
	}
	a.str("class", string(class))
	if s := zone.Sensitivity; s != nil {
		a.num("sensitivity", *s)
		a.Known, a.Value = true, clamp01(*s)
		return
	}
	a.missing("sensitivity")
	a.Known, a.Value = ok, v
}

func identity(a *Axis, in *Input) {
	a.numIf("claims", float64(in.Identity.claims()), in.HasIdentity)
	a.str("allow_list", in.Allow.String())
	switch {
	case in.Allow == AllowListed:
		a.Known, a.Value = true, 0
	case !in.HasIdentity:
		a.Value = axisDefs[AxisIdentity].def
	default:
		a.Known = true
		switch in.Identity.claims() {
		case 0:
			a.Value = 1
		case 1:
			a.Value = 0.6
		default:
			a.Value = 0.4
		}
	}
}

func compliance(a *Axis, in *Input) {
	if !in.HasCompliance {
		for _, n := range [...]string{"remote_id", "operator_location"} {
			a.missing(n)
		}
		a.numIf("height_agl_m", in.HeightAGLM, in.HasHeightAGL)
		a.missing("emergency")
		a.Value = axisDefs[AxisCompliance].def
		return
	}
	c := in.Compliance
	a.flag("remote_id", c.RemoteID)
	a.flag("operator_location", c.OperatorLocation)
	a.numIf("height_agl_m", in.HeightAGLM, in.HasHeightAGL)
	a.flag("emergency", c.Emergency)
	v := 0.0
	if !c.RemoteID {
		v += 0.5
	}
	if !c.OperatorLocation {
		v += 0.2
	}
	if in.HasHeightAGL && in.HeightAGLM > lowAltitudeM {
		v += 0.2
	}
	if c.Emergency {
		v += 0.1
	}
	a.Known, a.Value = true, clamp01(v)
}

func integrity(a *Axis, in *Input, pol *Policy) {
	hist := in.HasBehaviour && in.Behaviour.Samples >= 2
	pen := 0.0
	a.numIf("decoder_warnings", float64(len(in.Integrity.Warnings)), in.HasIntegrity)
	a.numIf("position_jumps", float64(in.Behaviour.Jumps), hist)
	a.numIf("speed_mps", in.SpeedMps, in.HasSpeed)
	a.numIf("cross_protocol_disagreement_m", in.Integrity.CrossProtocolDisagreementM, in.HasIntegrity)
	a.numIf("clock_drift_s", in.Integrity.ClockDriftS, in.HasIntegrity)
	a.numIf("mlat_contradiction_m", in.Integrity.MLATContradictionM, in.HasIntegrity)
	a.numIf("mlat_residual_m", in.Integrity.MLATResidualM, in.HasIntegrity)
	if in.HasIntegrity && in.Integrity.MLATContradictionM > 0 {
		// Physics, not plausibility: the signal did not come from where
		// the transmitter says it is.
		pen += 0.5
		a.flags |= indMLAT
	}
	if in.HasIntegrity {
		if n := len(in.Integrity.Warnings); n > 0 {
			pen += math.Min(0.6, 0.2*float64(n))
			a.flags |= indWarnings
		}
		if in.Integrity.CrossProtocolDisagreementM > pol.CrossProtocolToleranceM {
			pen += 0.3
			a.flags |= indCross
		}
		if math.Abs(in.Integrity.ClockDriftS) > pol.ClockDriftToleranceS {
			pen += 0.2
			a.flags |= indDrift
		}
	}
	if hist && in.Behaviour.Jumps > 0 {
		pen += math.Min(0.5, 0.25*float64(in.Behaviour.Jumps))
		a.flags |= indJumps
	}
	implausible := in.HasSpeed && in.SpeedMps > pol.MaxPlausibleSpeedMps
	if implausible {
		pen += 0.4
		a.flags |= indSpeed
	}
	if !in.HasIntegrity && !hist && !implausible {
		a.Value = axisDefs[AxisSignalIntegrity].def
		return
	}
	a.Known, a.Value = true, clamp01(1-pen)
}

func corroboration(a *Axis, in *Input) {
	a.numIf("sensors", float64(in.Sensors), in.HasCorroboration)
	a.numIf("protocols", float64(in.Protocols), in.HasCorroboration)
	if !in.HasCorroboration {
		a.Value = axisDefs[AxisCorroboration].def
		return
	}
	// Each source beyond the first, whether another receiver or another
	// protocol, halves the remaining doubt: 1 → 0, 2 → 0.5, 3 → 0.75.
	k := max(0, in.Sensors-1) + max(0, in.Protocols-1)
	a.Known, a.Value = true, 1-math.Pow(0.5, float64(k))
}

func freshness(a *Axis, in *Input, pol *Policy) {
	a.numIf("evidence_age_s", in.EvidenceAgeS, in.HasEvidenceAge)
	a.num("half_life_s", pol.FreshnessHalfLifeS)
	if !in.HasEvidenceAge {
		a.Value = axisDefs[AxisFreshness].def
		return
	}
	age := math.Max(0, in.EvidenceAgeS) // a future timestamp is clock skew, not extra freshness
	a.Known, a.Value = true, math.Pow(0.5, age/pol.FreshnessHalfLifeS)
}
