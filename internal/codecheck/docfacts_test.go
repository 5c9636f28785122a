package codecheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func readRepo(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The documents state the facts the code sets: ARCHITECTURE's table gives
// the zone bucket's history depth (it said 1, the code keeps 10), and
// INTAKE, where a publisher looks them up, every raw-message header of
// bus/subjects.go (Cuas-Ingest-Ns was missing) (issue 24, item 11).
func TestArchitectureMatchesCode(t *testing.T) {
	arch := readRepo(t, "docs/ARCHITECTURE.md")
	intake := readRepo(t, "docs/INTAKE.md")

	m := regexp.MustCompile(`History:\s*(\d+),`).FindStringSubmatch(readRepo(t, "fusion/zones/zones.go"))
	if m == nil {
		t.Fatal("fusion/zones/zones.go sets no KV History")
	}
	row := regexp.MustCompile("(?m)^\\| KV `CUAS_ZONES` \\|[^|]*\\| history (\\d+) \\|").FindStringSubmatch(arch)
	if row == nil || row[1] != m[1] {
		t.Errorf("ARCHITECTURE gives CUAS_ZONES history %v, the code %s", row, m[1])
	}

	headers := regexp.MustCompile(`(?m)^\s+Header\w+\s*=\s*"([^"]+)"`).FindAllStringSubmatch(readRepo(t, "bus/subjects.go"), -1)
	if len(headers) < 5 {
		t.Fatalf("found %d header constants in bus/subjects.go", len(headers))
	}
	for _, h := range headers {
		if !strings.Contains(intake, "`"+h[1]) {
			t.Errorf("header %s (bus/subjects.go) is not documented in docs/INTAKE.md", h[1])
		}
	}
}
