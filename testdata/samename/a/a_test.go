package a

import "testing"

// FuzzParse has the same name in packages a and b: fuzzls export must keep
// both targets' files apart.
func FuzzParse(f *testing.F) {
	f.Add("a-seed")
	f.Fuzz(func(t *testing.T, s string) {})
}
