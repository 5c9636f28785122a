// Package codecheck measures hand-written Go functions: their length in
// lines and their cyclomatic complexity. Its test keeps every function of
// the repository within the limits the project set itself (MaxLines,
// MaxComplexity), so that a newcomer can read any function in one screen.
//
// Generated files (a "Code generated ... DO NOT EDIT." header) and test
// files are not measured: tables and table-driven tests are long by nature.
package codecheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The limits of a hand-written function.
const (
	MaxLines      = 60
	MaxComplexity = 15
)

// Func is one measured function or method.
type Func struct {
	// Name is "pkgdir.Func" or "pkgdir.(Recv).Method", relative to the root.
	Name       string
	Pos        string // file:line
	Lines      int
	Complexity int
}

// Over reports whether f exceeds a limit.
func (f Func) Over() bool { return f.Lines > MaxLines || f.Complexity > MaxComplexity }

func (f Func) String() string {
	return fmt.Sprintf("%s (%s): %d lines, complexity %d", f.Name, f.Pos, f.Lines, f.Complexity)
}

var generated = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// Measure measures every hand-written, non-test function under root,
// skipping vendored, node_modules and testdata trees.
func Measure(root string) ([]Func, error) {
	var out []Func
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "vendor", "node_modules", "testdata", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if generated.Match(src) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out = append(out, measureFile(fset, f, filepath.ToSlash(rel))...)
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

func measureFile(fset *token.FileSet, f *ast.File, rel string) []Func {
	var out []Func
	dir := filepath.ToSlash(filepath.Dir(rel))
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		name := dir + "." + fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) > 0 {
			name = dir + ".(" + recvName(fd.Recv.List[0].Type) + ")." + fd.Name.Name
		}
		start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
		out = append(out, Func{
			Name:       name,
			Pos:        fmt.Sprintf("%s:%d", rel, start.Line),
			Lines:      end.Line - start.Line + 1,
			Complexity: Complexity(fd.Body),
		})
	}
	return out
}

func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return "*" + recvName(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	}
	return "?"
}

// Complexity is McCabe's cyclomatic complexity of a function body, counted
// as gocyclo does: 1, plus one for each if, for, range, non-default case
// and select clause, && and ||. Function literals count toward the
// function that holds them.
func Complexity(body ast.Node) int {
	c := 1
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if n.List != nil {
				c++
			}
		case *ast.CommClause:
			if n.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}
