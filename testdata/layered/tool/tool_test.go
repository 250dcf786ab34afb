package tool

import "testing"

func FuzzRead(f *testing.F) {
	f.Add([]byte("record"))
	f.Fuzz(func(t *testing.T, b []byte) {
		Read(b)
	})
}
