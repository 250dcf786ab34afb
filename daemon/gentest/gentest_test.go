package gentest

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fuzzls.dev/fuzzls/internal/testws"
)

// TestShapes offers, refuses and generates the fuzz tests of shapes.txtar's
// functions as their "want" comments say, writes them all into the package,
// and runs go vet and go test on the result: every generated test compiles
// and runs its seeds.
func TestShapes(t *testing.T) {
	root := testws.Txtar(t, "testdata/shapes.txtar")
	file := filepath.Join(root, "shapes", "shapes.go")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLoader(t.Context())
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	pkg, err := l.Check(ctx, filepath.Dir(file), Files{})
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var generated []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Doc == nil {
			continue
		}
		want, ok := strings.CutPrefix(strings.TrimSpace(fd.Doc.Text()), "want ")
		if !ok {
			continue
		}
		// The cursor on the function's name.
		plan, err := FuncAt(pkg, file, fset.Position(fd.Name.Pos()).Offset, Files{})
		switch {
		case strings.HasPrefix(want, "refused: "):
			if err == nil || err.Error() != strings.TrimPrefix(want, "refused: ") {
				t.Errorf("%s: plan %v, error %v; want %s", fd.Name.Name, plan, err, want)
			}
			continue
		case err != nil || plan == nil:
			t.Errorf("%s: plan %v, error %v; want %s", fd.Name.Name, plan, err, want)
			continue
		case plan.Name != want:
			t.Errorf("%s: named %s, want %s", fd.Name.Name, plan.Name, want)
		}
		res, err := Generate(ctx, nil, Files{}, file, plan.Func)
		if err != nil {
			t.Errorf("generating %s: %v", plan.Func, err)
			continue
		}
		apply(t, res)
		generated = append(generated, res.Name)
	}
	out := mustRead(t, filepath.Join(root, "shapes", "shapes_fuzz_test.go"))
	t.Logf("shapes_fuzz_test.go:\n%s", out)
	for _, s := range []string{
		`f.Add(",", "a\x00b")`, // variadic arguments
		// Slices of the call's literals, as the generated loops decode them.
		`f.Add([]byte("\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00"), []byte("\x00\x00\x00\x00\x00\x00\xe0?"), []byte("\x01\x00"), []byte("\xfe\xff"), []byte(""))`,
		`f.Add(uint8(7), "seven", []byte("raw"), 0, 3)`, // a pointer's literal, named types; hidden is the package's own
		"t2 := &Options{", // t is the *testing.T
		"// Left zero, not built from fuzz arguments: Created (a struct with no field the test can set), Done (a channel), Grid (an array), Items (a slice of a struct), Out (an interface), Weights (a map).",
		"Configure(context.Background(), t2, len2)", // go 1.22: no t.Context
		"_ = c2.String()", // vet's unusedresult
		`f.Add(1, 2, 3)`,  // D, deeper than the bound, is not an argument
		"// Left zero, not built from fuzz arguments: L4 (deeper than 3 levels of structs).",
		"// Left zero, not built from fuzz arguments: F17 (past 16 fuzz arguments), F18 (past 16 fuzz arguments), F19 (past 16 fuzz arguments), F20 (past 16 fuzz arguments).",
		`f.Add(float64(-300))`,
		"var c counter", // no exported fields: the zero value
		`f.Add(5)`,
	} {
		if !strings.Contains(out, s) {
			t.Errorf("shapes_fuzz_test.go lacks %s", s)
		}
	}
	goCmd(t, root, "vet", "./...")
	run := goCmd(t, root, "test", "-v", "-run=^Fuzz", "./shapes/")
	for _, name := range generated {
		if !strings.Contains(run, "--- PASS: "+name+"/seed#0") {
			t.Errorf("go test ran no seed of %s", name)
		}
	}
}

// TestEditedText: the loader sees the editor's text of a file, and a function
// added to it is offered after the edit.
func TestEditedText(t *testing.T) {
	root := testws.Txtar(t, "testdata/shapes.txtar")
	file := filepath.Join(root, "shapes", "shapes.go")
	l := NewLoader(t.Context())
	pkg, err := l.Check(t.Context(), filepath.Dir(file), Files{})
	if err != nil {
		t.Fatal(err)
	}
	edited := mustRead(t, file) + "\nfunc Added(x uint32) {}\n"
	files := Files{file: []byte(edited)}
	if p, _ := FuncAt(pkg, file, len(edited)-5, files); p != nil {
		t.Fatalf("offered %s before the edit was checked", p.Name)
	}
	pkg, err = l.Check(t.Context(), filepath.Dir(file), files)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := FuncAt(pkg, file, len(edited)-5, files); p == nil || p.Name != "FuzzAdded" {
		t.Fatalf("after the edit: %v, %v; want FuzzAdded", p, err)
	}
}

// TestEdits: the edits of a test file are the import declaration replaced and
// the fuzz test appended, or, when the file was not formatted, the whole text.
func TestEdits(t *testing.T) {
	const old = "package p\n\nimport \"testing\"\n\nfunc A() {}\n"
	for _, tc := range []struct {
		desc, old, new string
		tail           int
		want           []Edit
	}{
		{"appended", old, old + "\nfunc B() {}\n", len(old), []Edit{{len(old), len(old), "\nfunc B() {}\n"}}},
		{"import and append", old, "package p\n\nimport (\n\t\"math\"\n\t\"testing\"\n)\n\nfunc A() {}\n\nfunc B() {}\n", 54,
			[]Edit{{11, 28, "import (\n\t\"math\"\n\t\"testing\"\n)\n"}, {len(old), len(old), "\nfunc B() {}\n"}}},
		{"empty", "", "package p\n\nfunc B() {}\n", 11, []Edit{{0, 0, "package p\n\nfunc B() {}\n"}}},
		{"not formatted", "a\r\nb\r\n", "a\nb\nc\n", 4, []Edit{{0, 6, "a\nb\nc\n"}}},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			got := edits(tc.old, tc.new, tc.tail)
			if applied := applyEdits(tc.old, got); applied != tc.new {
				t.Errorf("applied: %q, want %q", applied, tc.new)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("edits %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("edit %d: %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// apply writes a result as an editor applies its edit.
func apply(t *testing.T, res *Result) {
	t.Helper()
	text := res.New
	if !res.Create {
		if got := mustRead(t, res.Path); got != res.Old {
			t.Fatalf("%s changed under the edit", res.Path)
		}
		text = applyEdits(res.Old, res.Edits)
		if text != res.New {
			t.Fatalf("the edits of %s give\n%s\nnot\n%s", res.Name, text, res.New)
		}
	}
	if err := os.WriteFile(res.Path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The cost of offering the action at a move of the cursor, on fuzzls's own
// daemon package (18 files, 38 imports): BenchmarkOfferUnchanged with the
// package's types cached, BenchmarkOfferEdited after an edit of one of its
// files (a parse and a type check against the cached imports). The first load
// (go list with export data) is logged once.
func BenchmarkOfferUnchanged(b *testing.B) { benchmarkOffer(b, false) }
func BenchmarkOfferEdited(b *testing.B)    { benchmarkOffer(b, true) }

func benchmarkOffer(b *testing.B, edit bool) {
	dir, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(dir, "gentest.go")
	text, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	offset := strings.Index(string(text), "func wants(")
	l := NewLoader(b.Context())
	start := time.Now()
	if _, err := l.Check(b.Context(), dir, Files{}); err != nil {
		b.Fatal(err)
	}
	b.Logf("first load: %v", time.Since(start))
	b.ResetTimer()
	for i := range b.N {
		files := Files{}
		if edit {
			files[file] = append(text, fmt.Sprintf("\n// edit %d\n", i)...)
		}
		if !InSignature(text, offset) {
			b.Fatal("not in a signature")
		}
		pkg, err := l.Check(b.Context(), dir, files)
		if err != nil {
			b.Fatal(err)
		}
		if p, err := FuncAt(pkg, file, offset, files); p == nil || err != nil {
			b.Fatalf("no plan: %v", err)
		}
	}
}
