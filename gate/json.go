package gate

import (
	"encoding/json"
)

// The JSON forms below are the API's (see httpapi/openapi/gate.yaml). They
// are built only when marshalled, so Evaluate itself stays allocation-free.

// MarshalJSON encodes the axis as {id, name, value, weight, inputs,
// evidence}; inputs maps each input name to its value or null.
func (a Axis) MarshalJSON() ([]byte, error) {
	inputs := a.InputMap()
	return json.Marshal(struct {
		ID       string         `json:"id"`
		Name     string         `json:"name"`
		Value    float64        `json:"value"`
		Weight   float64        `json:"weight"`
		Known    bool           `json:"known"`
		Inputs   map[string]any `json:"inputs"`
		Evidence string         `json:"evidence"`
	}{a.ID.String(), a.ID.Name(), a.Value, a.Weight, a.Known, inputs, a.Evidence()})
}

// InputMap maps each input of the axis to its value, or nil when unknown.
func (a Axis) InputMap() map[string]any {
	inputs := make(map[string]any, a.n)
	for _, p := range a.params[:a.n] {
		inputs[p.Name] = p.Value()
	}
	return inputs
}

// AppliedCap is a cap in a Result: a rule whose condition held, and
// whether it lowered the decision.
type AppliedCap struct {
	ID          string   `json:"id"`
	Max         Decision `json:"max"`
	Binding     bool     `json:"binding"`
	Description string   `json:"description"`
}

// Applied lists the caps that held, in CapID order.
func (l *Lambda) Applied() []AppliedCap {
	out := []AppliedCap{}
	for c := CapID(0); c < NumCaps; c++ {
		if l.Caps.Has(c) {
			out = append(out, AppliedCap{ID: c.String(), Max: c.Max(), Binding: l.Binding.Has(c), Description: c.Description()})
		}
	}
	return out
}

// MarshalJSON encodes Λ as {score, band, axes[13], caps}.
func (l Lambda) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Score     float64       `json:"score"`
		Band      Decision      `json:"band"`
		Axes      [NumAxes]Axis `json:"axes"`
		Caps      []AppliedCap  `json:"caps"`
		Statement string        `json:"statement"`
	}{l.Score, l.Band, l.Axes, l.Applied(), Statement})
}

// MarshalJSON encodes the result with the field names of POST
// /v1/counter-uas/evaluate (without the receipt, which the caller adds).
func (r Result) MarshalJSON() ([]byte, error) {
	var ttb *float64
	if r.HasTimeToBreach {
		ttb = &r.TimeToBreachS
	}
	return json.Marshal(struct {
		Breach                bool     `json:"breach"`
		PredictedBreach       bool     `json:"predicted_breach"`
		TimeToBreachS         *float64 `json:"time_to_breach_s"`
		DistanceM             float64  `json:"distance_m"`
		DistanceToBoundaryM   float64  `json:"distance_to_boundary_m"`
		BearingDeg            float64  `json:"bearing_deg"`
		Lambda                Lambda   `json:"lambda"`
		Decision              Decision `json:"decision"`
		HumanDecisionRequired bool     `json:"human_decision_required"`
	}{r.Breach, r.PredictedBreach, ttb, r.DistanceM, r.DistanceToBoundaryM, r.BearingDeg, r.Lambda,
		r.Decision, r.HumanDecisionRequired})
}
