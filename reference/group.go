package reference

// The DoD UAS group thresholds (JP 3-30 UAS categorization chart, after the
// US Army UAS Roadmap 2010-2035), converted once to SI units.
//
//	Group  MGTOW (lb)  normal operating altitude  airspeed (kt)
//	1      0-20        < 1,200 ft AGL             < 100
//	2      21-55       < 3,500 ft AGL             < 250
//	3      < 1,320     < 18,000 ft MSL (FL180)    < 250
//	4      > 1,320     < 18,000 ft MSL            any
//	5      > 1,320     > 18,000 ft MSL            any
//
// One attribute in a higher group puts the aircraft in that group.
const (
	lbKg      = 0.45359237
	ftM       = 0.3048
	ktKmh     = 1.852
	g1MaxKg   = 20 * lbKg
	g2MaxKg   = 55 * lbKg
	g3MaxKg   = 1320 * lbKg
	g1MaxAltM = 1200 * ftM
	g2MaxAltM = 3500 * ftM
	fl180M    = 18000 * ftM
	g1MaxKmh  = 100 * ktKmh
	g3MaxKmh  = 250 * ktKmh
)

// groupByWeight is the lowest group a maximum gross takeoff weight allows.
func groupByWeight(kg float64) int {
	switch {
	case kg <= g1MaxKg:
		return 1
	case kg <= g2MaxKg:
		return 2
	case kg <= g3MaxKg:
		return 3
	default:
		return 4
	}
}

// groupBySpeed is the lowest group an airspeed allows.
func groupBySpeed(kmh float64) int {
	switch {
	case kmh < g1MaxKmh:
		return 1
	case kmh < g3MaxKmh:
		return 2
	default:
		return 4
	}
}

// groupByAltitude is the lowest group a normal operating altitude allows.
func groupByAltitude(m float64) int {
	switch {
	case m < g1MaxAltM:
		return 1
	case m < g2MaxAltM:
		return 2
	case m <= fl180M:
		return 3
	default:
		return 5
	}
}

// GroupFor applies the DoD group rule to the figures that are known: the
// group is the highest of the groups implied by MTOW, maximum speed and
// normal operating altitude. It returns 0 when the weight class is unknown
// (no MTOW, and no payload heavy enough to settle it), because weight is the
// one attribute every group is defined by.
//
// The service ceiling is deliberately not used: the rule is about normal
// operating altitude, and a ceiling is only an upper bound on it (the
// MQ-1C Gray Eagle is Group 4 with a ceiling above FL180).
func GroupFor(s Specs) int {
	g, weightKnown := lowestGroup(s)
	if !weightKnown {
		return 0
	}
	return g
}

// lowestGroup is the group the figures that can only push a group up
// (weight, maximum speed, operating altitude) imply, starting from Group 1;
// weightKnown says whether the weight attribute is settled.
func lowestGroup(s Specs) (g int, weightKnown bool) {
	g = 1
	switch {
	case s.MTOWKg != nil:
		g, weightKnown = groupByWeight(*s.MTOWKg), true
	case s.PayloadKg != nil && *s.PayloadKg > g3MaxKg:
		// MTOW is at least the payload, so a payload above 1,320 lb
		// settles the weight attribute (Group 4 is the top weight class).
		g, weightKnown = 4, true
	}
	if s.MaxSpeedKmh != nil {
		g = max(g, groupBySpeed(*s.MaxSpeedKmh))
	}
	if s.OperatingAltM != nil {
		g = max(g, groupByAltitude(*s.OperatingAltM))
	}
	return g, weightKnown
}

// groupBounds returns the range of groups consistent with the known specs:
// lo from the figures that can only push a group up (see lowestGroup), hi
// from the ceiling, which bounds the operating altitude from above. hi is 5
// when nothing bounds it.
func groupBounds(s Specs) (lo, hi int) {
	lo, _ = lowestGroup(s)
	hi = 5
	if s.CeilingM != nil && s.MTOWKg != nil && s.MaxSpeedKmh != nil {
		hi = max(lo, groupByAltitude(*s.CeilingM))
	}
	return lo, hi
}
