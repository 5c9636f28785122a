package codecheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// mdRefRE finds references to Markdown files.
var mdRefRE = regexp.MustCompile(`[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b`)

// No source comment, help text, OpenAPI fragment or document names a
// Markdown file the repository does not hold (issue 24, item 5: help and
// comments cited an interface file that was not in the repository). A reference
// resolves against the citing file's directory, the repository root or
// docs/; URLs, and SOURCES.md (the provenance file of each folder of the
// shared test data beside the repository), are outside it on purpose.
func TestMarkdownReferencesExist(t *testing.T) {
	root := filepath.Join("..", "..")
	err := walkRepo(root, []string{".go", ".md", ".yaml", ".yml", ".mjs", ".js", ".html"}, func(path, rel string, b []byte) {
		for _, ref := range mdRefRE.FindAllString(string(b), -1) {
			if rel == filepath.Join("docs", "INTERFACE.md") && ref == "SPEC"+".md" { // (split: this file is scanned too)
				continue // the contract's original file name, which this document replaces
			}
			if !mdExists(root, filepath.Dir(path), ref) {
				t.Errorf("%s names %s, which is not in the repository", rel, ref)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// walkRepo calls fn with the path, the path relative to root and the
// content of every file under root whose extension is one of exts, past
// the directories that hold no source (.git, node_modules, build output,
// data).
func walkRepo(root string, exts []string, fn func(path, rel string, b []byte)) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "out", "bin", "data":
				return filepath.SkipDir
			}
			return nil
		}
		if !slices.Contains(exts, filepath.Ext(path)) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		fn(path, rel, b)
		return nil
	})
}

func mdExists(root, dir, ref string) bool {
	if strings.Contains(ref, "shared/") || strings.HasPrefix(ref, "//") || filepath.Base(ref) == "SOURCES.md" {
		return true
	}
	return existsUnder(ref, dir, root, filepath.Join(root, "docs"))
}

// goRefRE finds references to Go source files ("decode/worker/mavlink.go").
var goRefRE = regexp.MustCompile(`[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+\.go\b`)

// No document names a Go file the repository does not hold (issue 24,
// item 5: text pointing at files that are not there). A reference resolves
// against the document's directory or the repository root; a section
// whose heading says what "moved" lists old places on purpose.
func TestGoFileReferencesInDocsExist(t *testing.T) {
	root := filepath.Join("..", "..")
	n := 0
	err := walkRepo(root, []string{".md"}, func(path, rel string, b []byte) {
		heading := ""
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "#") {
				heading = strings.ToLower(line)
			}
			if strings.Contains(heading, "moved") {
				continue
			}
			for _, ref := range goRefRE.FindAllString(line, -1) {
				n++
				if strings.Contains(ref, "github.com/") || strings.HasPrefix(ref, "shared/") {
					continue
				}
				if !existsUnder(ref, filepath.Dir(path), root) {
					t.Errorf("%s:%d names %s, which is not in the repository", rel, i+1, ref)
				}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("found only %d Go file references in the documents", n)
	}
}

func existsUnder(ref string, dirs ...string) bool {
	for _, base := range dirs {
		if _, err := os.Stat(filepath.Join(base, ref)); err == nil {
			return true
		}
	}
	return false
}
