package mlat

// Reason says why a group gave no position or no verdict. It is the
// package's one error type: a small integer, so returning it as an error
// allocates nothing, and callers count refusals by it (Reason.String is a
// metric label).
type Reason uint8

// Why a group gave no position or no verdict.
const (
	// ReasonNone is not an error; it indexes "no reason" in counters.
	ReasonNone Reason = iota
	// ReasonTooFew: fewer usable receptions than the solve needs (four,
	// or three with an altitude), after unusable sensors were dropped.
	ReasonTooFew
	// ReasonNoSensorPosition: a reception came from a sensor whose
	// position is unknown.
	ReasonNoSensorPosition
	// ReasonUnsynced: a free-running sensor's clock has no good sync to
	// the group's reference clock.
	ReasonUnsynced
	// ReasonClockJump: the receptions' times cannot all be true (two
	// sensors disagree by more than the light-time between them), so a
	// clock jumped or the group mixes two transmissions.
	ReasonClockJump
	// ReasonBadGeometry: the sensors' geometry cannot locate the
	// transmitter (GDOP or the error estimate over the limit, or a
	// singular fit).
	ReasonBadGeometry
	// ReasonNoConvergence: the least-squares fit did not converge, or
	// converged somewhere no aircraft can be.
	ReasonNoConvergence
	// ReasonResidual: the receptions disagree with every position by more
	// than their noise, even with the worst one left out.
	ReasonResidual
	// ReasonFilterGate: the fix disagrees with the aircraft's track
	// beyond the filter's gate (counted, the fix dropped).
	ReasonFilterGate
	// ReasonInsensitive: the geometry cannot tell the claimed position
	// from one a kilometre away, so no verdict is given.
	ReasonInsensitive
	// ReasonAmbiguous: the times fit two positions kilometres apart about
	// equally well (one on each side of the sensors), so neither is given.
	ReasonAmbiguous
	// ReasonOneReception: the claim disagrees with one reception only
	// (the others fit it), so no verdict: a reflection or a late
	// detection at one sensor must not call an honest claim false.
	ReasonOneReception
	// ReasonImprecise: a position was solved, but its geometry dilutes
	// the timing noise horizontally more than SolverConfig.MaxHDOP
	// allows, so it is not reported (a claim may still be verified
	// against it).
	ReasonImprecise
	numReasons
)

var reasonNames = [numReasons]string{
	"none", "too_few", "no_sensor_position", "unsynced", "clock_jump",
	"bad_geometry", "no_convergence", "residual", "filter_gate", "insensitive", "ambiguous", "one_reception", "imprecise",
}

// String returns the reason's metric label.
func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return "unknown"
}

func (r Reason) Error() string { return "mlat: " + r.String() }

// Reasons lists every reason but ReasonNone, for pre-registering metric
// labels.
func Reasons() []Reason {
	out := make([]Reason, 0, numReasons-1)
	for r := ReasonNone + 1; r < numReasons; r++ {
		out = append(out, r)
	}
	return out
}
