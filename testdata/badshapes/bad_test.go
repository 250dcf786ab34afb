package badshapes

import "testing"

func FuzzMap(f *testing.F) {
	f.Fuzz(func(t *testing.T, m map[string]int) {})
}
