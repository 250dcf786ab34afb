package instrument

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// TestAdaptCalls: a target's f.Fuzz and f.Add calls (any argument list) go
// through the file's variables, each on its own line still; calls on other
// values and in other functions stay.
func TestAdaptCalls(t *testing.T) {
	src := `package p

import tt "testing"

func FuzzA(fz *tt.F) {
	fz.Add(1, "x")
	fz.Add()
	args := []interface{}{2, "y"}
	fz.Add(args...)
	other.Add(3)
	fz.Fuzz(func(t *tt.T, n int, s string) {})
}

func helper(fz *tt.F) { fz.Fuzz(nil) }
`
	out, ok := adaptCalls("p_test.go", []byte(src), "X")
	if !ok {
		t.Fatal("nothing adapted")
	}
	got := strings.Split(string(out), "\n")
	want := map[int]string{
		6:  "\tFuzzlsAdd_X(fz, []interface{}{1, \"x\"})",
		7:  "\tFuzzlsAdd_X(fz, []interface{}{})",
		9:  "\tFuzzlsAdd_X(fz, args)",
		10: "\tother.Add(3)",
		11: "\tFuzzlsFuzz_X(fz, func(t *tt.T, n int, s string) {})",
		14: "func helper(fz *tt.F) { fz.Fuzz(nil) }",
	}
	for line, w := range want {
		if got[line-1] != w {
			t.Errorf("line %d: %q, want %q", line, got[line-1], w)
		}
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "p_test.go", out, 0); err != nil {
		t.Errorf("the adapted file does not parse: %v\n%s", err, out)
	}
	for _, decl := range []string{"var FuzzlsFuzz_X = func(f, ff interface{})", "var FuzzlsAdd_X = func(f interface{}, args []interface{})"} {
		if !strings.Contains(string(out), decl) {
			t.Errorf("no %q in\n%s", decl, out)
		}
	}
	if _, ok := adaptCalls("q_test.go", []byte("package p\n\nimport \"testing\"\n\nfunc FuzzB(f *testing.F) { g(f) }\n"), "Y"); ok {
		t.Error("a target without f.Fuzz or f.Add was adapted")
	}
}
