package oss

import "testing"

func FuzzRecord(f *testing.F) {
	f.Add("fuzzls-seed-only", []byte("only a seed reaches this"), -1234567890123, true, uint16(54321), 'λ', 2.5)
	f.Add("another", []byte{}, 0, false, uint16(0), 'a', 0.0)
	f.Fuzz(func(t *testing.T, name string, data []byte, n int, ok bool, v uint16, r rune, x float64) {
		Record(name, data, n, ok, v, r, x)
	})
}
