package daemon

import (
	"encoding/json"
	"os"
	"slices"
	"sort"
	"testing"
)

// TestLensTargetRule: the code lenses find the targets go test runs, by the
// loader's rule (one definition), checked against the table the extension's
// copy is checked against too; a function of a target's name and another
// shape (another package's F, a result, type parameters) gets none.
func TestLensTargetRule(t *testing.T) {
	data, err := os.ReadFile("../testdata/fuzz-target-names.json")
	if err != nil {
		t.Fatal(err)
	}
	var table struct{ Names map[string]bool }
	if err := json.Unmarshal(data, &table); err != nil {
		t.Fatal(err)
	}
	text := "package p\n\nimport \"testing\"\n\nfunc FuzzWrong(t *testing.T) {}\n" +
		"func FuzzOther(f *other.F) {}\nfunc FuzzResult(f *testing.F) int { return 0 }\nfunc FuzzGeneric[T any](f *testing.F) {}\n"
	var want []string
	for name, target := range table.Names {
		text += "func " + name + "(f *testing.F) {}\n"
		if target {
			want = append(want, name)
		}
	}
	var got []string
	for _, ff := range parseFuzzFuncs("p_test.go", text) {
		got = append(got, ff.name)
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("lenses for %q, want %q", got, want)
	}
}
