package gate

import (
	"math/rand"
	"testing"
	"testing/quick"
	"time"
)

// scored is a real Result (score and caps as EvaluateInto makes them)
// whose Λ is x: the trust axes are 1, so no trust cap holds, and the
// other axes share the rest.
func scored(x float64, breach bool, pol *Policy) Result {
	p := pol.withDefaults()
	r := Result{Breach: breach, PredictedBreach: true}
	trust := p.Weights[AxisSignalIntegrity] + p.Weights[AxisCorroboration] + p.Weights[AxisFreshness]
	for i := range r.Lambda.Axes {
		a := &r.Lambda.Axes[i]
		a.ID, a.Weight, a.Known, a.Value = AxisID(i), p.Weights[i], true, (x-trust)/(1-trust)
	}
	for _, i := range []AxisID{AxisSignalIntegrity, AxisCorroboration, AxisFreshness} {
		r.Lambda.Axes[i].Value = 1
	}
	score(&r, &p)
	applyCaps(&r, &Input{}, &p)
	return r
}

const sec = int64(time.Second)

// TestHeldRiseAndFall: rises at once, holds through a dip inside the
// margin and through a short dip below it, falls after MinHoldS below the
// margin, to what the latest result sustains; a breach is immediate and
// held MinHoldS after the track leaves.
func TestHeldRiseAndFall(t *testing.T) {
	pol := DefaultPolicy() // alert 0.45 (falls below 0.40), intercept 0.65 (below 0.60), hold 30 s
	type step struct {
		t        int64 // seconds
		lambda   float64
		breach   bool
		decision Decision
		held     bool // held breach
	}
	steps := []step{
		{0, 0.30, false, Monitor, false},
		{1, 0.46, false, Alert, false},                 // rises at once
		{2, 0.42, false, Alert, false},                 // inside the margin: sustains
		{3, 0.39, false, Alert, false},                 // below the margin: the dwell starts
		{20, 0.41, false, Alert, false},                // sustained again: the dwell restarts
		{21, 0.30, false, Alert, false},                // below again from 21 s
		{50, 0.30, false, Alert, false},                // 29 s below
		{51, 0.30, false, Monitor, false},              // 30 s: falls
		{52, 0.70, true, InterceptRecommended, true},   // a breach and intercept band: both at once
		{53, 0.62, false, InterceptRecommended, true},  // left the zone, Λ within the margin
		{60, 0.50, false, InterceptRecommended, true},  // below 0.60 from 60 s
		{83, 0.50, false, InterceptRecommended, false}, // 30 s after the last breach: breach ends
		{90, 0.38, false, Alert, false},                // 30 s below: falls to what 0.38 sustains... (0.38 < 0.40: monitor)
	}
	steps[len(steps)-1].decision = Monitor
	var h Held
	for _, s := range steps {
		r := scored(s.lambda, s.breach, &pol)
		h.Update(&r, s.t*sec, &pol)
		if h.Decision != s.decision || h.Breach != s.held {
			t.Fatalf("t=%ds Λ=%.2f breach=%v: held %v breach %v, want %v breach %v", s.t, s.lambda, s.breach, h.Decision, h.Breach, s.decision, s.held)
		}
	}
}

// TestHeldFallsToSustained: an intercept held while Λ drops into the
// alert band falls to alert, not monitor, after the dwell.
func TestHeldFallsToSustained(t *testing.T) {
	pol := DefaultPolicy()
	var h Held
	for _, s := range []struct {
		t      int64
		lambda float64
	}{{0, 0.70}, {1, 0.50}, {31, 0.50}} {
		r := scored(s.lambda, false, &pol)
		h.Update(&r, s.t*sec, &pol)
	}
	if h.Decision != Alert || h.Since != 31*sec {
		t.Fatalf("held %v since %d, want alert since 31 s", h.Decision, h.Since/sec)
	}
}

// oscillation is a track's Λ wavering around one threshold, within that
// threshold's margin, sampled at irregular times.
type oscillation struct {
	steps  []float64 // Λ
	gaps   []int64   // ns between samples
	policy Policy
}

// newOscillation draws a policy (margins 0.01-0.10, dwell 1-120 s) and a
// Λ sequence strictly inside (threshold - margin, threshold + margin) of
// the alert or the intercept threshold.
func newOscillation(rng *rand.Rand) oscillation {
	pol := DefaultPolicy()
	pol.AlertFallMargin = 0.01 + rng.Float64()*0.09
	pol.InterceptFallMargin = 0.01 + rng.Float64()*0.09
	pol.MinHoldS = 1 + rng.Float64()*119
	thr, m := pol.AlertAt, pol.AlertFallMargin
	if rng.Intn(2) == 1 {
		thr, m = pol.InterceptAt, pol.InterceptFallMargin
	}
	o := oscillation{policy: pol}
	n := 20 + rng.Intn(400)
	for range n {
		o.steps = append(o.steps, thr-m*0.999+rng.Float64()*m*1.998)
		o.gaps = append(o.gaps, int64(50*time.Millisecond)+rng.Int63n(int64(5*time.Second)))
	}
	return o
}

// changes runs the oscillation through a Held and counts the changes of
// the held decision after the first result.
func (o oscillation) changes() int {
	var h Held
	now, n := int64(0), 0
	for i, x := range o.steps {
		r := scored(x, false, &o.policy)
		if h.Update(&r, now, &o.policy) && i > 0 {
			n++
		}
		now += o.gaps[i]
	}
	return n
}

// TestHeldNeverFlapsWithinMargin is the property of issue 33: whatever
// the policy's margins and dwell, a track whose Λ oscillates within a
// threshold's margin changes decision at most once (it rises and stays).
// With the margins and dwell turned off the same sequences flap, so the
// property is the hysteresis's doing.
func TestHeldNeverFlapsWithinMargin(t *testing.T) {
	cfg := &quick.Config{MaxCount: 300, Rand: rand.New(rand.NewSource(33))}
	prop := func(seed int64) bool {
		o := newOscillation(rand.New(rand.NewSource(seed)))
		if n := o.changes(); n > 1 {
			t.Logf("seed %d: %d changes (margins %.3f/%.3f, hold %.0f s, %d samples)", seed, n,
				o.policy.AlertFallMargin, o.policy.InterceptFallMargin, o.policy.MinHoldS, len(o.steps))
			return false
		}
		return true
	}
	if err := quick.Check(prop, cfg); err != nil {
		t.Fatal(err)
	}
	flapped := 0
	rng := rand.New(rand.NewSource(34))
	for range 100 {
		o := newOscillation(rng)
		o.policy.AlertFallMargin, o.policy.InterceptFallMargin, o.policy.MinHoldS = 1e-9, 1e-9, 1e-9
		if o.changes() > 1 {
			flapped++
		}
	}
	if flapped < 90 {
		t.Fatalf("without hysteresis only %d of 100 oscillations flapped: the sequences do not cross the threshold", flapped)
	}
}
