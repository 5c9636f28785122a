package gate

import "time"

// The kinds of DecisionRecord.
const (
	// RecordEvaluate is a decision requested through POST
	// /v1/counter-uas/evaluate.
	RecordEvaluate = "counter-uas-evaluate"
	// RecordContinuous is a decision of the continuous gate over the live
	// tracks.
	RecordContinuous = "continuous_evaluation"
)

// DecisionRecord is the ledger record of one gate decision: one shape for
// an evaluation requested through the API and one the continuous gate made,
// so that a verifier reads one format. Track, History and Geofence are the
// inputs the decision rested on, as the caller states them (a request's
// track, or the live track's claims; the zone itself or a reference to a
// stored version).
type DecisionRecord struct {
	Kind string `json:"kind"`
	// Reason and PreviousDecision say why the continuous gate recorded the
	// decision (decision_changed, breach_started, ...); empty for a
	// requested evaluation.
	Reason           string `json:"reason,omitempty"`
	PreviousDecision string `json:"previous_decision,omitempty"`

	Doctrine       string `json:"doctrine"`
	ServiceVersion string `json:"service_version"`
	Time           string `json:"time"`

	Track      any     `json:"track"`
	History    any     `json:"history,omitempty"`
	Geofence   any     `json:"geofence"`
	GeofenceID *string `json:"geofence_id,omitempty"`

	AllowList           string       `json:"allow_list"`
	Breach              bool         `json:"breach"`
	PredictedBreach     bool         `json:"predicted_breach"`
	TimeToBreachS       *float64     `json:"time_to_breach_s"`
	DistanceM           float64      `json:"distance_m"`
	DistanceToBoundaryM float64      `json:"distance_to_boundary_m"`
	BearingDeg          float64      `json:"bearing_deg"`
	Lambda              float64      `json:"lambda"`
	Band                Decision     `json:"band"`
	Axes                []RecordAxis `json:"axes"`
	Caps                []string     `json:"caps"`
	Decision            Decision     `json:"decision"`
	// RawDecision and RawBreach are, for the continuous gate, the
	// evaluation's own decision and breach, and HeldSince when the held
	// Decision was entered: the continuous gate's Decision and Breach are
	// held (Held, issue 33), so an auditor sees both what Λ said at that
	// moment and what the operator was shown. Absent for a requested
	// evaluation, which holds nothing.
	RawDecision *Decision `json:"raw_decision,omitempty"`
	RawBreach   *bool     `json:"raw_breach,omitempty"`
	HeldSince   string    `json:"held_since,omitempty"`
	// Class is what the continuous gate took the track to be: aircraft,
	// drone or unknown (TrackClass).
	Class string `json:"class,omitempty"`
	// HumanDecisionRequired is always true: decision support only.
	HumanDecisionRequired bool   `json:"human_decision_required"`
	Statement             string `json:"statement"`
}

// RecordAxis is one of the 13 axes in a DecisionRecord.
type RecordAxis struct {
	ID     string  `json:"id"`
	Value  float64 `json:"value"`
	Weight float64 `json:"weight"`
	Known  bool    `json:"known"`
}

// NewDecisionRecord is the record of kind for result res, made by service
// version at time at; the caller sets the inputs (Track, Geofence, ...).
func NewDecisionRecord(kind string, res *Result, version string, at time.Time) DecisionRecord {
	r := DecisionRecord{
		Kind: kind, Doctrine: Doctrine, ServiceVersion: version, Time: at.UTC().Format(time.RFC3339Nano),
		AllowList: "unknown", Breach: res.Breach, PredictedBreach: res.PredictedBreach,
		DistanceM: res.DistanceM, DistanceToBoundaryM: res.DistanceToBoundaryM, BearingDeg: res.BearingDeg,
		Lambda: res.Lambda.Score, Band: res.Lambda.Band, Decision: res.Decision,
		HumanDecisionRequired: res.HumanDecisionRequired, Statement: Statement,
		Axes: make([]RecordAxis, 0, NumAxes), Caps: []string{},
	}
	if p, ok := res.Lambda.Axes[AxisIdentity].Input("allow_list"); ok {
		r.AllowList = p.Str
	}
	if res.HasTimeToBreach {
		t := res.TimeToBreachS
		r.TimeToBreachS = &t
	}
	for _, a := range res.Lambda.Axes {
		r.Axes = append(r.Axes, RecordAxis{a.ID.String(), a.Value, a.Weight, a.Known})
	}
	for _, c := range res.Lambda.Applied() {
		r.Caps = append(r.Caps, c.ID)
	}
	return r
}
