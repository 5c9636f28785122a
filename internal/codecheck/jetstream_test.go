package codecheck

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cuasd/cuasd/internal/testshared"
)

// jetstreamImport is the NATS client's JetStream package.
const jetstreamImport = "github.com/nats-io/nats.go/jetstream"

// jetstreamAllowed are the only non-test files and directories that may
// import JetStream (issue 17): package bus, which implements the small
// interfaces (key-value buckets, durable consumers, acknowledged
// publishing) every other package declares for itself; the ledger's own
// store; and the embedded test server. Tests may import it to play an
// administrator or an attacker (deleting a stream, tampering a message).
var jetstreamAllowed = []string{
	"bus/",
	"internal/natstest/",
	"ledger/store.go",
}

// TestJetStreamBehindBus fails when a package outside jetstreamAllowed
// imports JetStream: they take the small interfaces they declare instead.
func TestJetStreamBehindBus(t *testing.T) {
	got, err := jetstreamImporters(testshared.RepoRoot())
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range got {
		t.Errorf("%s imports %s: declare a small interface in the package and let bus implement it (docs/design/bus.md, JetStream behind bus)", rel, jetstreamImport)
	}
}

// The check finds an import outside the allowed places and only there.
func TestJetStreamImportersFindsOne(t *testing.T) {
	root := t.TempDir()
	src := "package x\n\nimport _ \"" + jetstreamImport + "\"\n"
	for _, rel := range []string{"output/x/x.go", "bus/x.go", "ledger/store.go", "ledger/log_test.go", "internal/natstest/x.go"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, rel), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := jetstreamImporters(root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"output/x/x.go"}) {
		t.Fatalf("importers %q, want only output/x/x.go", got)
	}
}

// jetstreamImporters lists the non-test Go files under root, outside
// jetstreamAllowed, that import JetStream.
func jetstreamImporters(root string) ([]string, error) {
	var got []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata", "out", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if allowedJetStream(rel) {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == jetstreamImport {
				got = append(got, rel)
			}
		}
		return nil
	})
	return got, err
}

func allowedJetStream(rel string) bool {
	for _, a := range jetstreamAllowed {
		if rel == a || (strings.HasSuffix(a, "/") && strings.HasPrefix(rel, a)) {
			return true
		}
	}
	return false
}
