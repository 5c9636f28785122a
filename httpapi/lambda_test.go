package httpapi

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/gate"
)

func TestLambdaDefinitions(t *testing.T) {
	rec := do(t, newTestServer(t, Deps{}), "GET", testBase+"/v1/lambda", nil)
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	var d struct {
		Axes []struct {
			ID      string   `json:"id"`
			Weight  float64  `json:"weight"`
			Inputs  []string `json:"inputs"`
			Default struct {
				Value    float64 `json:"value"`
				Evidence string  `json:"evidence"`
			} `json:"default"`
		} `json:"axes"`
		Bands     []map[string]any `json:"bands"`
		Caps      []map[string]any `json:"caps"`
		Statement string           `json:"statement"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Axes) != 13 || len(d.Bands) != 3 || len(d.Caps) == 0 {
		t.Fatalf("%d axes, %d bands, %d caps", len(d.Axes), len(d.Bands), len(d.Caps))
	}
	sum := 0.0
	for _, a := range d.Axes {
		sum += a.Weight
		if len(a.Inputs) == 0 || a.Default.Evidence == "" {
			t.Errorf("axis %s: %+v", a.ID, a)
		}
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("weights sum to %v", sum)
	}
	if !strings.Contains(d.Statement, "not a proof of safety") {
		t.Errorf("statement %q", d.Statement)
	}
}

// TestLambdaShowsThePolicyInForce (issue 33): with a policy configured
// (--gate-policy), GET /v1/lambda shows its thresholds, its hysteresis
// (each band's fall_below) and its dwell, not the built-in ones.
func TestLambdaShowsThePolicyInForce(t *testing.T) {
	p := gate.DefaultPolicy()
	p.AlertAt, p.AlertFallMargin, p.MinHoldS = 0.5, 0.1, 45
	rec := do(t, newTestServer(t, Deps{Policy: p}), "GET", testBase+"/v1/lambda", nil)
	var d struct {
		MinHoldS float64 `json:"min_hold_s"`
		Bands    []struct {
			Decision  string   `json:"decision"`
			Min       float64  `json:"min"`
			FallBelow *float64 `json:"fall_below"`
		} `json:"bands"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if d.MinHoldS != 45 || d.Bands[1].Min != 0.5 || d.Bands[1].FallBelow == nil || math.Abs(*d.Bands[1].FallBelow-0.4) > 1e-9 || d.Bands[0].FallBelow != nil {
		t.Fatalf("definitions %+v", d)
	}
}
