package seedable

import "testing"

func FuzzVolume(f *testing.F) {
	f.Add(make([]byte, 16384))
	f.Fuzz(func(t *testing.T, img []byte) {
		Volume(img)
	})
}
