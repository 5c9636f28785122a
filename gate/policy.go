package gate

import (
	"fmt"
	"math"
)

// Policy holds the tunable constants of the gate: the axis weights, the
// band thresholds and the governance thresholds. The zero value of any
// field means its default, so Policy{} is DefaultPolicy().
type Policy struct {
	// Weights of the 13 axes, in AxisID order. All zero means the defaults;
	// otherwise they must be non-negative with a positive sum (they are
	// normalised).
	Weights [NumAxes]float64 `json:"weights" yaml:"weights"`
	// AlertAt and InterceptAt are the Λ thresholds of the alert and
	// intercept-recommended bands; below AlertAt the band is monitor.
	AlertAt     float64 `json:"alert_at" yaml:"alert_at"`
	InterceptAt float64 `json:"intercept_at" yaml:"intercept_at"`
	// BreachHorizonS is how soon a predicted breach counts as a breach for
	// the no-breach cap, and the time scale of the closure axis.
	BreachHorizonS float64 `json:"breach_horizon_s" yaml:"breach_horizon_s"`
	// MinIntegrity, MinCorroboration and MinFreshness are the lowest values
	// of those axes that still allow intercept-recommended.
	MinIntegrity     float64 `json:"min_integrity" yaml:"min_integrity"`
	MinCorroboration float64 `json:"min_corroboration" yaml:"min_corroboration"`
	MinFreshness     float64 `json:"min_freshness" yaml:"min_freshness"`
	// FreshnessHalfLifeS is the evidence age at which freshness is 0.5.
	FreshnessHalfLifeS float64 `json:"freshness_half_life_s" yaml:"freshness_half_life_s"`
	// MinProximityScaleM is the shortest length over which proximity
	// decays outside a zone, so small zones still see approaching tracks.
	MinProximityScaleM float64 `json:"min_proximity_scale_m" yaml:"min_proximity_scale_m"`
	// MaxPlausibleSpeedMps is the reported speed above which a track's
	// kinematics are a spoofing indicator.
	MaxPlausibleSpeedMps float64 `json:"max_plausible_speed_mps" yaml:"max_plausible_speed_mps"`
	// CrossProtocolToleranceM and ClockDriftToleranceS are the largest
	// disagreements that are not spoofing indicators.
	CrossProtocolToleranceM float64 `json:"cross_protocol_tolerance_m" yaml:"cross_protocol_tolerance_m"`
	ClockDriftToleranceS    float64 `json:"clock_drift_tolerance_s" yaml:"clock_drift_tolerance_s"`

	// Hysteresis and dwell (issue 33; see Held). A decision rises as soon
	// as Λ reaches its band's threshold, but falls only once Λ is below
	// the threshold minus the band's margin (AlertFallMargin below
	// AlertAt, InterceptFallMargin below InterceptAt), or a cap lowers
	// it, and has stayed so for MinHoldS: a track whose Λ wavers around a
	// threshold keeps one decision instead of paging at every crossing.
	// A breach is held the same MinHoldS after the track leaves the zone.
	// A tiny positive value (1e-9) turns a margin or the dwell off: zero
	// means the default.
	AlertFallMargin     float64 `json:"alert_fall_margin" yaml:"alert_fall_margin"`
	InterceptFallMargin float64 `json:"intercept_fall_margin" yaml:"intercept_fall_margin"`
	MinHoldS            float64 `json:"min_hold_s" yaml:"min_hold_s"`
}

// defaultWeights put the geometry of the intrusion and the classification
// first, the context and identity next, and give the trust axes a smaller
// share: they mostly act through the caps. They sum to 1.
var defaultWeights = [NumAxes]float64{
	AxisProximity:       0.16,
	AxisClosure:         0.10,
	AxisAltitude:        0.07,
	AxisSpeed:           0.05,
	AxisClassification:  0.12,
	AxisBehaviour:       0.07,
	AxisSwarm:           0.06,
	AxisZoneSensitivity: 0.08,
	AxisIdentity:        0.08,
	AxisCompliance:      0.06,
	AxisSignalIntegrity: 0.05,
	AxisCorroboration:   0.05,
	AxisFreshness:       0.05,
}

// DefaultPolicy returns the policy of the doctrine (v11) that the API
// documents at GET /v1/lambda.
func DefaultPolicy() Policy {
	return Policy{
		Weights:                 defaultWeights,
		AlertAt:                 0.45,
		InterceptAt:             0.65,
		BreachHorizonS:          60,
		MinIntegrity:            0.7,
		MinCorroboration:        0.5,
		MinFreshness:            0.5,
		FreshnessHalfLifeS:      10,
		MinProximityScaleM:      500,
		MaxPlausibleSpeedMps:    JumpSpeedMps,
		CrossProtocolToleranceM: 100,
		ClockDriftToleranceS:    2,
		// Chosen from the false-alarm scenarios (sim.FalseAlarmSet; the
		// figures and the reasoning are in docs/design/gate.md, "Hysteresis").
		AlertFallMargin:     0.05,
		InterceptFallMargin: 0.05,
		MinHoldS:            30,
	}
}

// withDefaults replaces every zero field by its default and normalises the
// weights to sum to 1.
func (p Policy) withDefaults() Policy {
	d := DefaultPolicy()
	if p.Weights == ([NumAxes]float64{}) {
		p.Weights = d.Weights
	}
	sum := 0.0
	for _, w := range p.Weights {
		sum += w
	}
	if sum > 0 && math.Abs(sum-1) > 1e-9 { // the defaults sum to 1 up to rounding: keep them exact
		for i := range p.Weights {
			p.Weights[i] /= sum
		}
	}
	def := func(v *float64, dv float64) {
		if *v == 0 {
			*v = dv
		}
	}
	def(&p.AlertAt, d.AlertAt)
	def(&p.InterceptAt, d.InterceptAt)
	def(&p.BreachHorizonS, d.BreachHorizonS)
	def(&p.MinIntegrity, d.MinIntegrity)
	def(&p.MinCorroboration, d.MinCorroboration)
	def(&p.MinFreshness, d.MinFreshness)
	def(&p.FreshnessHalfLifeS, d.FreshnessHalfLifeS)
	def(&p.MinProximityScaleM, d.MinProximityScaleM)
	def(&p.MaxPlausibleSpeedMps, d.MaxPlausibleSpeedMps)
	def(&p.CrossProtocolToleranceM, d.CrossProtocolToleranceM)
	def(&p.ClockDriftToleranceS, d.ClockDriftToleranceS)
	def(&p.AlertFallMargin, d.AlertFallMargin)
	def(&p.InterceptFallMargin, d.InterceptFallMargin)
	def(&p.MinHoldS, d.MinHoldS)
	return p
}

// Validate checks a configured policy and returns an *Error naming every
// invalid field, or nil. Zero fields are valid (they mean the default).
func (p *Policy) Validate() error {
	var e Error
	sum := 0.0
	for i, w := range p.Weights {
		if !finite(w) || w < 0 {
			e.add("weights", fmt.Sprintf("[%d]", i), "must be a non-negative number")
		}
		sum += w
	}
	if p.Weights != ([NumAxes]float64{}) && !(sum > 0) {
		e.add("", "weights", "must have a positive sum")
	}
	for _, f := range []struct {
		name string
		v    float64
		max  float64
	}{
		{"alert_at", p.AlertAt, 1}, {"intercept_at", p.InterceptAt, 1},
		{"min_integrity", p.MinIntegrity, 1}, {"min_corroboration", p.MinCorroboration, 1},
		{"min_freshness", p.MinFreshness, 1},
		{"breach_horizon_s", p.BreachHorizonS, math.Inf(1)},
		{"freshness_half_life_s", p.FreshnessHalfLifeS, math.Inf(1)},
		{"min_proximity_scale_m", p.MinProximityScaleM, math.Inf(1)},
		{"max_plausible_speed_mps", p.MaxPlausibleSpeedMps, math.Inf(1)},
		{"cross_protocol_tolerance_m", p.CrossProtocolToleranceM, math.Inf(1)},
		{"clock_drift_tolerance_s", p.ClockDriftToleranceS, math.Inf(1)},
		{"alert_fall_margin", p.AlertFallMargin, 1}, {"intercept_fall_margin", p.InterceptFallMargin, 1},
		{"min_hold_s", p.MinHoldS, 24 * 3600},
	} {
		if !finite(f.v) || f.v < 0 || f.v > f.max {
			e.add("", f.name, fmt.Sprintf("must be a number in [0, %g]", f.max))
		}
	}
	q := p.withDefaults()
	if q.AlertAt >= q.InterceptAt {
		e.add("", "intercept_at", "must be above alert_at")
	} else if q.InterceptFallMargin > q.InterceptAt-q.AlertAt {
		e.add("", "intercept_fall_margin", "must not exceed intercept_at - alert_at (the alert band's width)")
	}
	if q.AlertFallMargin > q.AlertAt {
		e.add("", "alert_fall_margin", "must not exceed alert_at")
	}
	return e.orNil()
}
