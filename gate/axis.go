package gate

import (
	"fmt"
	"strconv"
	"strings"
)

// AxisID identifies one of the 13 axes of Λ. The order is the API's:
// threat first, then the trust and governance axes.
type AxisID uint8

// The 13 axes.
const (
	AxisProximity AxisID = iota
	AxisClosure
	AxisAltitude
	AxisSpeed
	AxisClassification
	AxisBehaviour
	AxisSwarm
	AxisZoneSensitivity
	AxisIdentity
	AxisCompliance
	AxisSignalIntegrity
	AxisCorroboration
	AxisFreshness
	// NumAxes is the number of axes: always 13.
	NumAxes = 13
)

// String returns the axis id used in JSON, e.g. "zone_sensitivity".
func (a AxisID) String() string {
	if int(a) < NumAxes {
		return axisDefs[a].id
	}
	return "axis(" + strconv.Itoa(int(a)) + ")"
}

// Name returns the axis's human-readable name.
func (a AxisID) Name() string {
	if int(a) < NumAxes {
		return axisDefs[a].name
	}
	return a.String()
}

// ParamKind says what a Param holds.
type ParamKind uint8

// The kinds of Param. ParamMissing is an input that was not given; JSON
// shows it as null.
const (
	ParamMissing ParamKind = iota
	ParamNumber
	ParamBool
	ParamString
)

// Param is one named input of an axis, as the axis saw it.
type Param struct {
	Name string
	Kind ParamKind
	Num  float64
	Str  string
}

// Value returns the input as a JSON-ready value: float64, bool, string or
// nil.
func (p Param) Value() any {
	switch p.Kind {
	case ParamNumber:
		return p.Num
	case ParamBool:
		return p.Num != 0
	case ParamString:
		return p.Str
	}
	return nil
}

// maxParams is the most inputs any axis reports.
const maxParams = 7

// Axis is one scored axis: its value in [0, 1], its weight in Λ, the
// inputs it read and whether they were known. Evidence explains the value
// in words; it is built on demand so that Evaluate does not allocate.
type Axis struct {
	ID     AxisID
	Value  float64
	Weight float64
	// Known is false when a missing input made the axis fall back to its
	// documented default.
	Known  bool
	params [maxParams]Param
	n      uint8
	// flags records which conditions held, for Evidence (integrity
	// indicators).
	flags uint8
}

// Inputs returns the axis's named inputs. The slice aliases a; do not
// modify it.
func (a *Axis) Inputs() []Param { return a.params[:a.n] }

// Input returns the named input and whether the axis has it.
func (a *Axis) Input(name string) (Param, bool) {
	for _, p := range a.params[:a.n] {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

func (a *Axis) num(name string, v float64) {
	a.params[a.n] = Param{Name: name, Kind: ParamNumber, Num: v}
	a.n++
}

func (a *Axis) numIf(name string, v float64, ok bool) {
	if ok {
		a.num(name, v)
	} else {
		a.missing(name)
	}
}

func (a *Axis) flag(name string, v bool) {
	p := Param{Name: name, Kind: ParamBool}
	if v {
		p.Num = 1
	}
	a.params[a.n] = p
	a.n++
}

func (a *Axis) str(name, v string) {
	a.params[a.n] = Param{Name: name, Kind: ParamString, Str: v}
	a.n++
}

func (a *Axis) missing(name string) {
	a.params[a.n] = Param{Name: name}
	a.n++
}

// get returns an input's number and whether it is present.
func (a *Axis) get(name string) (float64, bool) {
	p, ok := a.Input(name)
	return p.Num, ok && p.Kind != ParamMissing
}

func (a *Axis) getStr(name string) string {
	p, _ := a.Input(name)
	return p.Str
}

// Evidence explains the axis value in one sentence. A value that stands
// for a missing input starts with "unknown".
func (a *Axis) Evidence() string {
	if !a.Known {
		return axisDefs[a.ID].unknown
	}
	if int(a.ID) < len(evidenceOf) && evidenceOf[a.ID] != nil {
		return evidenceOf[a.ID](a)
	}
	return ""
}

// evidenceOf is each axis's explanation of a known value.
var evidenceOf = [...]func(*Axis) string{
	AxisProximity:       (*Axis).proximityEvidence,
	AxisClosure:         (*Axis).closureEvidence,
	AxisAltitude:        (*Axis).altitudeEvidence,
	AxisSpeed:           (*Axis).speedEvidence,
	AxisClassification:  (*Axis).classificationEvidence,
	AxisBehaviour:       (*Axis).behaviourEvidence,
	AxisSwarm:           (*Axis).swarmEvidence,
	AxisZoneSensitivity: (*Axis).zoneSensitivityEvidence,
	AxisIdentity:        (*Axis).identityEvidence,
	AxisCompliance:      (*Axis).complianceEvidence,
	AxisSignalIntegrity: (*Axis).signalIntegrityEvidence,
	AxisCorroboration:   (*Axis).corroborationEvidence,
	AxisFreshness:       (*Axis).freshnessEvidence,
}

func oneDecimal(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func (a *Axis) proximityEvidence() string {
	d, _ := a.get("distance_to_boundary_m")
	var s string
	switch {
	case d < 0:
		s = "inside the zone, " + oneDecimal(-d) + " m from its edge"
	case d == 0:
		s = "on the zone's boundary (counts as inside)"
	default:
		s = oneDecimal(d) + " m outside the zone's edge"
	}
	if v, ok := a.get("vertical_outside_m"); ok && v > 0 {
		s += ", and " + oneDecimal(v) + " m outside its altitude band"
	}
	return s
}

func (a *Axis) closureEvidence() string {
	t, hasT := a.get("time_to_breach_s")
	c, hasC := a.get("closing_speed_mps")
	h, _ := a.get("horizon_s")
	switch {
	case hasT && t == 0:
		return "breach in progress: inside the protected volume"
	case hasT:
		return fmt.Sprintf("closing at %s m/s: breach predicted in %s s (horizon %s s)", oneDecimal(c), oneDecimal(t), oneDecimal(h))
	case a.flags&closVertDiverging != 0:
		return "outside the zone's altitude band and not converging on it: no breach predicted"
	case hasC:
		return "not closing (" + oneDecimal(c) + " m/s toward the zone): no breach predicted"
	}
	return "not closing: no breach predicted"
}

func (a *Axis) altitudeEvidence() string {
	alt, _ := a.get("alt_m")
	out, _ := a.get("vertical_outside_m")
	_, hasFloor := a.get("floor_m")
	_, hasCeil := a.get("ceiling_m")
	if hasFloor || hasCeil {
		if out == 0 {
			return "at " + oneDecimal(alt) + " m, inside the zone's altitude band"
		}
		return "at " + oneDecimal(alt) + " m, " + oneDecimal(out) + " m outside the zone's altitude band"
	}
	if alt <= lowAltitudeM {
		return "at " + oneDecimal(alt) + " m, within the low-altitude drone profile (400 ft, 122 m)"
	}
	return "at " + oneDecimal(alt) + " m, above the low-altitude drone profile (400 ft, 122 m)"
}

func (a *Axis) speedEvidence() string {
	v, _ := a.get("speed_mps")
	kt := oneDecimal(v / knot)
	if v > part107LimitMps {
		return oneDecimal(v) + " m/s (" + kt + " kt), beyond Part 107's 87 kt"
	}
	return oneDecimal(v) + " m/s (" + kt + " kt), within Part 107's 87 kt"
}

func (a *Axis) classificationEvidence() string {
	return "drone-database side: " + a.getStr("side")
}

func (a *Axis) behaviourEvidence() string {
	names := [...]string{"loiter", "circling", "erratic", "dwell"}
	var b strings.Builder
	best, bestV := "", -1.0
	for _, n := range names {
		v, _ := a.get(n)
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n + " " + strconv.FormatFloat(v, 'f', 2, 64))
		if v > bestV {
			best, bestV = n, v
		}
	}
	if bestV <= 0 {
		return b.String() + ": no loitering, circling, erratic or dwelling pattern"
	}
	return b.String() + ": strongest pattern " + best
}

func (a *Axis) swarmEvidence() string {
	n, _ := a.get("swarm_size")
	if n <= 1 {
		return "not linked to other tracks"
	}
	return fmt.Sprintf("member of a proximity group of %d tracks", int(n))
}

func (a *Axis) zoneSensitivityEvidence() string {
	class := a.getStr("class")
	if s, ok := a.get("sensitivity"); ok {
		return "configured sensitivity " + strconv.FormatFloat(s, 'f', 2, 64) + " (class " + class + ")"
	}
	return "class " + class + ", default sensitivity " + strconv.FormatFloat(a.Value, 'f', 2, 64)
}

func (a *Axis) identityEvidence() string {
	n, _ := a.get("claims")
	switch allow := a.getStr("allow_list"); {
	case allow == "listed":
		return "allow-listed (the matching identity is a broadcast claim, unauthenticated)"
	case n == 0:
		return "anonymous: no identity claims, allow-list " + allow
	default:
		return fmt.Sprintf("%d identity claim(s), unauthenticated; allow-list %s", int(n), allow)
	}
}

func (a *Axis) complianceEvidence() string {
	var faults []string
	if p, _ := a.Input("remote_id"); p.Num == 0 {
		faults = append(faults, "no Remote ID broadcast")
	}
	if p, _ := a.Input("operator_location"); p.Num == 0 {
		faults = append(faults, "no operator location")
	}
	if h, ok := a.get("height_agl_m"); ok && h > lowAltitudeM {
		faults = append(faults, "above 400 ft AGL")
	}
	if p, _ := a.Input("emergency"); p.Num != 0 {
		faults = append(faults, "emergency declared")
	}
	if len(faults) == 0 {
		return "compliant: Remote ID with operator location, no emergency"
	}
	return strings.Join(faults, "; ")
}

func (a *Axis) signalIntegrityEvidence() string {
	var ind []string
	if a.flags&indWarnings != 0 {
		w, _ := a.get("decoder_warnings")
		ind = append(ind, fmt.Sprintf("%d decoder warning(s)", int(w)))
	}
	if a.flags&indJumps != 0 {
		j, _ := a.get("position_jumps")
		ind = append(ind, fmt.Sprintf("%d position jump(s) in the history", int(j)))
	}
	if a.flags&indSpeed != 0 {
		v, _ := a.get("speed_mps")
		ind = append(ind, "implausible speed "+oneDecimal(v)+" m/s")
	}
	if a.flags&indCross != 0 {
		d, _ := a.get("cross_protocol_disagreement_m")
		ind = append(ind, "protocols disagree on position by "+oneDecimal(d)+" m")
	}
	if a.flags&indDrift != 0 {
		c, _ := a.get("clock_drift_s")
		ind = append(ind, "timestamp drift "+oneDecimal(c)+" s")
	}
	if a.flags&indMLAT != 0 {
		d, _ := a.get("mlat_contradiction_m")
		r, _ := a.get("mlat_residual_m")
		ind = append(ind, "multilateration puts the transmitter "+oneDecimal(d)+" m from its claimed position (residual "+oneDecimal(r)+" m at the claim)")
	}
	if len(ind) == 0 {
		return "no spoofing indicator among the checks made"
	}
	return strings.Join(ind, "; ")
}

func (a *Axis) corroborationEvidence() string {
	s, _ := a.get("sensors")
	p, _ := a.get("protocols")
	return fmt.Sprintf("%d independent sensor(s), %d protocol(s)", int(s), int(p))
}

func (a *Axis) freshnessEvidence() string {
	age, _ := a.get("evidence_age_s")
	h, _ := a.get("half_life_s")
	return "newest evidence " + oneDecimal(age) + " s old (half-life " + oneDecimal(h) + " s)"
}

// The spoofing indicators of the signal-integrity axis.
const (
	closVertDiverging uint8 = 1 << 7 // closure: the altitude rules out a breach

	indWarnings uint8 = 1 << iota
	indJumps
	indSpeed
	indCross
	indDrift
	indMLAT
)
