package blockers

import "testing"

func FuzzCheck(f *testing.F) {
	f.Add([]byte("seed"))
	f.Fuzz(func(t *testing.T, b []byte) {
		Check(b)
	})
}
