package racy

import "testing"

func FuzzCount(f *testing.F) {
	f.Add([]byte("hello"))
	f.Fuzz(func(t *testing.T, data []byte) {
		Sum(data)
		Count(data)
	})
}

// FuzzSum starts 64 goroutines on every input and has no race.
func FuzzSum(f *testing.F) {
	f.Add([]byte("hello"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for i := 0; i < 32; i++ {
			Sum(data)
		}
	})
}
