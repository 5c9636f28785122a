package gate

// Side is the drone-database classification of a track, filled in by the
// caller from its own database match. The empty Side means the caller did
// not classify the track.
type Side string

// The classification sides, from most to least threatening. Counter-UAS
// systems are friendly interceptors and score like allied ones.
const (
	SideAdversary  Side = "adversary"
	SideUnknown    Side = "unknown"
	SideDualUse    Side = "dual-use"
	SideAllied     Side = "allied"
	SideCounterUAS Side = "counter-uas"
)

// Valid reports whether s is one of the five sides (the empty Side is not).
func (s Side) Valid() bool {
	switch s {
	case SideAdversary, SideUnknown, SideDualUse, SideAllied, SideCounterUAS:
		return true
	}
	return false
}

// Compliance holds what the broadcast says about rule compliance.
type Compliance struct {
	// RemoteID is true when the track broadcasts Remote ID.
	RemoteID bool `json:"remote_id"`
	// OperatorLocation is true when the broadcast includes the operator's
	// (pilot's) location.
	OperatorLocation bool `json:"operator_location"`
	// Emergency is true when the broadcast declares an emergency status.
	Emergency bool `json:"emergency"`
}

// Integrity holds the spoofing indicators that do not come from the
// track's own path (those come from Behaviour).
type Integrity struct {
	// Warnings are the decoders' plausibility findings for the track.
	Warnings []string `json:"warnings,omitempty"`
	// CrossProtocolDisagreementM is the largest distance between positions
	// claimed for the same object by different protocols at the same time;
	// 0 when they agree or only one protocol is heard.
	CrossProtocolDisagreementM float64 `json:"cross_protocol_disagreement_m"`
	// ClockDriftS is the difference between the transmitter's timestamp and
	// the receive time, when the protocol carries one.
	ClockDriftS float64 `json:"clock_drift_s"`
	// MLATContradictionM is how far from its claimed position the times
	// of arrival at several synchronised sensors put the transmitter, when
	// they contradict the claim (issue 31); 0 when the claim was verified,
	// could not be checked, or was never checked. MLATResidualM is the RMS
	// residual of those times at the claim.
	MLATContradictionM float64 `json:"mlat_contradiction_m,omitempty"`
	MLATResidualM      float64 `json:"mlat_residual_m,omitempty"`
}

// Input is everything Evaluate knows about one track. Position is
// required; every other group is optional and says so with its Has flag,
// so that a zero is never mistaken for a measurement. A missing group gives
// its axis the documented default and evidence that says "unknown".
type Input struct {
	// ID names the track; Evaluate does not read it.
	ID string

	// Position, degrees.
	Lat, Lon float64
	// AltM is the altitude in metres, in the datum of the geofences'
	// floor_m/ceiling_m; without a band it is read as height above the
	// protected site.
	AltM   float64
	HasAlt bool
	// HeightAGLM is the height above ground, for the 400 ft rule of the
	// compliance axis.
	HeightAGLM   float64
	HasHeightAGL bool

	// Kinematics: ground speed, true track and vertical rate (up positive).
	SpeedMps   float64
	HasSpeed   bool
	HeadingDeg float64
	HasHeading bool
	VRateMps   float64
	HasVRate   bool

	// Identity claims and the allow-list status of the caller's check.
	Identity    Identity
	HasIdentity bool
	Allow       AllowStatus

	// Side is the drone-database classification; empty when not classified.
	Side Side

	// Behaviour from the track's history (see Features and DwellNear).
	Behaviour    Behaviour
	HasBehaviour bool

	// SwarmSize is the size of the track's proximity component, itself
	// included (1 = alone).
	SwarmSize int
	HasSwarm  bool

	// Sensors and Protocols count the independent receivers and the
	// distinct protocols that reported the track.
	Sensors, Protocols int
	HasCorroboration   bool

	Compliance    Compliance
	HasCompliance bool

	Integrity    Integrity
	HasIntegrity bool

	// EvidenceAgeS is the time since the newest report of the track.
	EvidenceAgeS   float64
	HasEvidenceAge bool
}

// Position returns the track's position.
func (in *Input) Position() Point { return Point{Lat: in.Lat, Lon: in.Lon} }
