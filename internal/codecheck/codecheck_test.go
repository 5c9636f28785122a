package codecheck

import (
	"bufio"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/internal/testshared"
)

// baselineFile lists the functions that exceeded a limit when the limits
// were introduced. It may only shrink: a function not listed must be within
// the limits, and a listed function that now is must be removed from it.
const baselineFile = "testdata/baseline.txt"

func readBaseline(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(baselineFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out[line] = true
	}
	return out
}

// TestFunctionLimits keeps every hand-written function within MaxLines
// and MaxComplexity (`make lint` runs it; set CUAS_CODECHECK_ALL=1 to list
// every function over a limit, baseline included).
func TestFunctionLimits(t *testing.T) {
	fns, err := Measure(testshared.RepoRoot())
	if err != nil {
		t.Fatal(err)
	}
	base := readBaseline(t)
	seen := map[string]bool{}
	for _, f := range fns {
		if !f.Over() {
			continue
		}
		seen[f.Name] = true
		if os.Getenv("CUAS_CODECHECK_ALL") != "" {
			t.Log(f)
		}
		if !base[f.Name] {
			t.Errorf("%s: over the limits of %d lines and complexity %d; split it", f, MaxLines, MaxComplexity)
		}
	}
	for name := range base {
		if !seen[name] {
			t.Errorf("%s is listed in %s but is now within the limits (or gone): remove the line", name, baselineFile)
		}
	}
}

func TestComplexity(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want int
	}{
		{"straight", `package p; func f() { g() }`, 1},
		{"if else", `package p; func f(a bool) { if a { g() } else { h() } }`, 2},
		{"loop and and", `package p; func f(a, b bool) { for a && b { g() } }`, 3},
		{"switch", `package p; func f(x int) { switch x { case 1: g(); case 2, 3: h(); default: } }`, 3},
		{"select", `package p; func f(c chan int) { select { case <-c: default: } }`, 2},
		{"closure counts", `package p; func f(xs []int) { for range xs { func() { if true {} }() } }`, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parser.ParseFile(token.NewFileSet(), "x.go", tc.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			fns := measureFile(token.NewFileSet(), f, filepath.Join("p", "x.go"))
			if len(fns) != 1 || fns[0].Complexity != tc.want {
				t.Fatalf("got %+v, want complexity %d", fns, tc.want)
			}
		})
	}
}
