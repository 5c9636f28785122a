package gate

// Held is one track's decision and breach as an operator sees them: the
// gate's results over time with hysteresis and dwell (issue 33). Without
// it a track whose Λ wavers around a band's threshold (a drone circling
// near a zone, an airliner turning on its approach) changes decision at
// every crossing, and every change is a receipt, an event and a page.
//
//   - A decision rises as soon as a result's Decision is above it: rising
//     to a more severe band is immediate, and so is a breach.
//   - It falls only once the results stop sustaining it (Result.Sustained:
//     Λ below the band's threshold minus its margin, or a cap lowered it)
//     and have not sustained it for Policy.MinHoldS without a break; it
//     then falls to what the latest result sustains, in one step.
//   - A breach is held until the track has been outside the zone for
//     Policy.MinHoldS.
//
// The zero Held has seen nothing; its first Update takes the result as it
// is. Times are Unix nanoseconds of the caller's clock (the gate reads
// none). Held does not allocate.
type Held struct {
	// Decision and Breach are the held decision and breach.
	Decision Decision
	Breach   bool
	// Since is when Decision was entered.
	Since int64
	// fallFrom is when the results stopped sustaining Decision (0: they
	// sustain it); lastInside is the time of the latest result in breach.
	fallFrom   int64
	lastInside int64
	seen       bool
}

// Seen reports whether Update was called.
func (h *Held) Seen() bool { return h.seen }

// Update applies the result r of time now under the policy's hysteresis
// (the zero Policy means DefaultPolicy) and reports whether the held
// decision or breach changed.
func (h *Held) Update(r *Result, now int64, policy *Policy) (changed bool) {
	if !h.seen {
		*h = Held{Decision: r.Decision, Breach: r.Breach, Since: now, seen: true}
		if r.Breach {
			h.lastInside = now
		}
		return true
	}
	pol := policy.withDefaults()
	hold := int64(pol.MinHoldS * 1e9)
	if pol.MinHoldS < 1e-6 { // dwell turned off: fall on the first result that does not sustain
		hold = 0
	}
	before, breachBefore := h.Decision, h.Breach
	if r.Breach {
		h.Breach, h.lastInside = true, now
	} else if h.Breach && now-h.lastInside >= hold {
		h.Breach = false
	}
	switch {
	case r.Decision > h.Decision:
		h.Decision, h.Since, h.fallFrom = r.Decision, now, 0
	case r.Sustained >= h.Decision:
		h.fallFrom = 0
	case h.fallFrom == 0:
		h.fallFrom = now
		fallthrough
	default:
		if now-h.fallFrom >= hold {
			h.Decision, h.Since, h.fallFrom = r.Sustained, now, 0
		}
	}
	return h.Decision != before || h.Breach != breachBefore
}
