package droneclaim_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/ingest/sensors/droneclaim"
)

// Every reason the package refuses a message for is in Reasons, the list
// the inputs create their reject counters from at 0 (issue 24): a reason
// missing there would appear only after its first message, too late for an
// increase()-based alert.
func TestReasonsListsEveryReason(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`Reason:\s*"([^"]+)"`)
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllSubmatch(b, -1) {
			n++
			if !slices.Contains(droneclaim.Reasons, string(m[1])) {
				t.Errorf("%s refuses with reason %q, which droneclaim.Reasons lacks", f, m[1])
			}
		}
	}
	if n < 10 {
		t.Fatalf("found only %d reasons in the sources", n)
	}
	if !slices.Contains(droneclaim.Reasons, droneclaim.ReasonOf(os.ErrClosed)) {
		t.Errorf("ReasonOf's fallback %q is not in Reasons", droneclaim.ReasonOf(os.ErrClosed))
	}
}
