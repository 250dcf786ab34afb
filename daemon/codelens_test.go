package daemon

import (
	"slices"
	"testing"
)

// TestLensTargetRule: the code lenses find the targets go test runs, by the
// loader's rule (one definition): "Fuzz", then nothing or a rune that is not
// lower case, in any script.
func TestLensTargetRule(t *testing.T) {
	text := "package p\n\nimport \"testing\"\n\n" +
		"func Fuzz(f *testing.F)        {}\n" +
		"func FuzzParse(f *testing.F)   {}\n" +
		"func Fuzz_x(f *testing.F)      {}\n" +
		"func FuzzÉtat(f *testing.F)    {}\n" +
		"func Fuzzing(f *testing.F)     {}\n" +
		"func Fuzzétat(f *testing.F)    {}\n" +
		"func FuzzWrong(t *testing.T)   {}\n"
	var names []string
	for _, ff := range parseFuzzFuncs("p_test.go", text) {
		names = append(names, ff.name)
	}
	if want := []string{"Fuzz", "FuzzParse", "Fuzz_x", "FuzzÉtat"}; !slices.Equal(names, want) {
		t.Errorf("lenses for %q, want %q", names, want)
	}
}
