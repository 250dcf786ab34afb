package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/engine/failure"
)

// TestFailureKinds: Kinds, which what reports every kind walks (SARIF's rules),
// holds each Kind constant declared in protocol/protocol.go once, described.
func TestFailureKinds(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "../protocol/protocol.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[failure.Kind]bool{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) || !strings.HasPrefix(name.Name, "Kind") {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						declared[failure.Kind(strings.Trim(lit.Value, `"`))] = true
					}
				}
			}
		}
	}
	if len(declared) < 10 {
		t.Fatalf("found %d Kind constants in protocol.go: %v", len(declared), declared)
	}
	listed := map[failure.Kind]bool{}
	for _, k := range Kinds() {
		if !declared[k.Kind] || listed[k.Kind] || k.Description == "" {
			t.Errorf("kind %+v: not a Kind constant, listed twice or not described", k)
		}
		listed[k.Kind] = true
		if LookupKind(k.Kind) != k {
			t.Errorf("LookupKind(%q) = %+v, want %+v", k.Kind, LookupKind(k.Kind), k)
		}
	}
	for k := range declared {
		if !listed[k] {
			t.Errorf("Kind constant %q is not in Kinds()", k)
		}
	}
}
