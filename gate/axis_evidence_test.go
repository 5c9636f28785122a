package gate

import "testing"

// TestEveryAxisExplainsItself: each of the 13 axes has its evidence
// sentence, so a new axis cannot silently explain nothing.
func TestEveryAxisExplainsItself(t *testing.T) {
	if len(evidenceOf) != NumAxes {
		t.Fatalf("evidenceOf has %d entries, want %d", len(evidenceOf), NumAxes)
	}
	for id, f := range evidenceOf {
		if f == nil {
			t.Errorf("axis %v has no evidence", AxisID(id))
		}
	}
}
