package fuzzrt

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// toolchainArgTypes reads the types a fuzz function may take from the Go
// toolchain's own list (testing's supportedTypes, in GOROOT/src/testing/fuzz.go),
// spelled as reflect spells them (byte is uint8, rune int32).
func toolchainArgTypes(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command(goTool(t), "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	path := filepath.Join(strings.TrimSpace(string(out)), "src", "testing", "fuzz.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	alias := map[string]string{"byte": "uint8", "rune": "int32"}
	var names []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if vs.Names[0].Name != "supportedTypes" {
				continue
			}
			for _, e := range vs.Values[0].(*ast.CompositeLit).Elts {
				// reflect.TypeFor[T](): true
				typ := e.(*ast.KeyValueExpr).Key.(*ast.CallExpr).Fun.(*ast.IndexExpr).Index
				switch x := typ.(type) {
				case *ast.Ident:
					name := x.Name
					if a, ok := alias[name]; ok {
						name = a
					}
					names = append(names, name)
				case *ast.ArrayType:
					names = append(names, "[]"+alias[x.Elt.(*ast.Ident).Name])
				default:
					t.Fatalf("%s: unexpected type expression %T in supportedTypes", path, typ)
				}
			}
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s: no supportedTypes", path)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// kindSample is a value of kind k other than its zero value.
func kindSample(k Kind) any {
	switch k {
	case KindBytes:
		return []byte("seed\xff")
	case KindString:
		return "seed☃"
	}
	return k.FromBits(0xfedcba9876543210)
}

// TestKindTable: the table holds exactly the toolchain's argument types, and
// every kind goes through each use of it in the runtime: both encodings, the
// mutator, splicing, and the comparison feedback's operands.
func TestKindTable(t *testing.T) {
	var names []string
	for _, k := range Kinds() {
		names = append(names, k.String())
	}
	slices.Sort(names)
	if want := toolchainArgTypes(t); !slices.Equal(names, want) {
		t.Fatalf("the kinds are %v, the toolchain's argument types %v", names, want)
	}
	for _, k := range Kinds() {
		t.Run(k.String(), func(t *testing.T) {
			v := kindSample(k)
			if KindOf(v) != k || KindOf(k.Zero()) != k {
				t.Fatalf("KindOf(%#v) = %v, KindOf(zero %#v) = %v", v, KindOf(v), k.Zero(), KindOf(k.Zero()))
			}
			if typ := reflect.TypeOf(v); k.Type() != typ || KindFor(typ) != k || TypeName(typ) != k.String() ||
				KindNamed(TypeName(typ)) != k || !SupportedType(typ) {
				t.Errorf("Type() = %v, KindFor = %v, TypeName = %q, KindNamed of it = %v, SupportedType = %v",
					k.Type(), KindFor(typ), TypeName(typ), KindNamed(TypeName(typ)), SupportedType(typ))
			}
			if z := ZeroValue(k.String()); KindOf(z) != k {
				t.Errorf("ZeroValue(%q) = %#v", k.String(), z)
			}
			if k.Size() == 0 != (k == KindBytes || k == KindString) || ValuesSize([]any{k.Zero()}) != k.Size() {
				t.Errorf("Size() = %d, ValuesSize of the zero value %d", k.Size(), ValuesSize([]any{k.Zero()}))
			}

			vals := []any{v, k.Zero()}
			if got, err := DecodeValues(AppendValues(nil, vals)); err != nil || !sameValues(got, vals) {
				t.Errorf("binary round trip of %s: %s, %v", describe(vals), describe(got), err)
			}
			if got, err := Unmarshal(Marshal(vals)); err != nil || !sameValues(got, vals) {
				t.Errorf("corpus file round trip of %s: %s, %v\n%s", describe(vals), describe(got), err, Marshal(vals))
			}

			// A []byte is mutated in place: each use gets a fresh sample.
			m := NewMutator(1)
			cur := []any{kindSample(k)}
			for i := 0; i < 8 && sameValue(cur[0], v); i++ {
				m.Mutate(cur, 64)
			}
			if KindOf(cur[0]) != k || sameValue(cur[0], v) {
				t.Errorf("mutations of %#v gave %#v", v, cur[0])
			}
			spliced := []any{kindSample(k)}
			m.Splice(spliced, cur, 64)
			if KindOf(spliced[0]) != k || sameValue(spliced[0], v) {
				t.Errorf("splicing %#v with %#v gave %#v", v, cur[0], spliced[0])
			}

			if k == KindBool {
				return // comparisons of bools are not recorded
			}
			from, ok1 := toOperand(v)
			to, ok2 := toOperand(cur[0])
			if !ok1 || !ok2 {
				t.Fatalf("toOperand(%#v) = %v, toOperand(%#v) = %v", v, ok1, cur[0], ok2)
			}
			if k == KindString || k == KindBytes {
				return
			}
			repl, _ := replaceIn(v, from, to, nil, maxCmpPlaces)
			if len(repl) == 0 || KindOf(repl[0]) != k || !sameValue(repl[0], cur[0]) {
				t.Errorf("replaceIn(%#v, %#v→%#v) = %#v", v, v, cur[0], repl)
			}
		})
	}
}
