// Package testshared locates the shared test material (reference vectors
// and real third-party captures) that lives beside the repository, never in
// it.
//
// The folder is ../shared relative to the repository root; the CUAS_SHARED
// environment variable overrides it. When the folder is absent a test is
// skipped with a message, except under CI=true, where it fails: CI must never
// pass by silently skipping the checks against independent references.
package testshared

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir returns the absolute path of the shared folder, or skips (fails under
// CI=true) the calling test when it cannot be found.
func Dir(tb testing.TB) string {
	tb.Helper()
	if d := os.Getenv("CUAS_SHARED"); d != "" {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
		missing(tb, "CUAS_SHARED="+d+" is not a directory")
		return ""
	}
	d := filepath.Join(repoRoot(), "..", "shared")
	if st, err := os.Stat(d); err == nil && st.IsDir() {
		abs, _ := filepath.Abs(d)
		return abs
	}
	missing(tb, "shared folder not found at "+d+" (set CUAS_SHARED)")
	return ""
}

// Path returns the path of a file under the shared folder, skipping (failing
// under CI=true) when the folder or the file is absent.
func Path(tb testing.TB, elem ...string) string {
	tb.Helper()
	p := filepath.Join(append([]string{Dir(tb)}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		missing(tb, "shared file missing: "+p)
	}
	return p
}

// RepoRoot returns the repository root (the directory holding go.mod).
func RepoRoot() string { return repoRoot() }

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	// file is <root>/internal/testshared/testshared.go
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func missing(tb testing.TB, why string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s: shared test material is required under CI=true", why)
	}
	tb.Skipf("skipping: %s", why)
}
