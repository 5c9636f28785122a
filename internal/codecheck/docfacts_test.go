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

// ARCHITECTURE lists every supervised loop of cuasd serve (issue 32: "list
// every supervised loop in ARCHITECTURE"): each stage and reporter name
// cmd/cuasd gives lifecycle, and the kind of every input and output (the
// first word of its Name), appears in the "Supervision" section. The
// list once missed the mlat and integrity stages.
func TestArchitectureListsSupervisedLoops(t *testing.T) {
	arch := readRepo(t, "docs/ARCHITECTURE.md")
	start := strings.Index(arch, "### Supervision")
	if start < 0 {
		t.Fatal(`docs/ARCHITECTURE.md has no "### Supervision" section`)
	}
	section := arch[start:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	names := map[string]string{} // name → the file naming it
	stageRE := regexp.MustCompile(`(?:s\.stage|\.Reporter)\("([^"]+)"`)
	nameRE := regexp.MustCompile(`(?s)\) Name\(\) string \{[^"}]*?(?:if [^{]*\{[^"}]*)?"([^"]+)"`)
	root := filepath.Join("..", "..")
	err := walkRepo(root, []string{".go"}, func(path, rel string, b []byte) {
		if strings.HasSuffix(rel, "_test.go") || strings.Contains(rel, "test"+string(filepath.Separator)) {
			return
		}
		re := nameRE
		switch {
		case strings.HasPrefix(rel, filepath.Join("cmd", "cuasd")+string(filepath.Separator)):
			re = stageRE
		case strings.HasPrefix(rel, "output"+string(filepath.Separator)), strings.HasPrefix(rel, "ingest"+string(filepath.Separator)):
		default:
			return
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			name := strings.TrimSpace(m[1]) // a stage's whole name ("fusion feed", "decoder ")
			if re == nameRE {
				name = strings.Fields(name)[0] // an input's or output's kind ("webhook <sink>")
			}
			names[name] = rel
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 20 {
		t.Fatalf("found only %d loop names in the code: %v", len(names), names)
	}
	for name, rel := range names {
		want := "`" + name
		if strings.HasPrefix(name, "-") { // a format's prefix ("beast" + "-listen ")
			want = name
		}
		if !strings.Contains(section, want) {
			t.Errorf("the loop %q (%s) is not in docs/ARCHITECTURE.md, \"Supervision\"", name, rel)
		}
	}
}
