//go:build integration

package tagged

import "testing"

func FuzzTagged(f *testing.F) {
	f.Add([]byte("hello"))
	f.Fuzz(func(t *testing.T, b []byte) { Decode(b) })
}
