package multiarg

import "testing"

func FuzzClip(f *testing.F) {
	f.Add(int32(1), int32(2), uint16(3), uint16(4), 1.0, false)
	f.Fuzz(func(t *testing.T, x, y int32, w, h uint16, scale float64, wrap bool) {
		area, ok := Clip(x, y, w, h, scale, wrap)
		if !ok && area != 0 {
			t.Fatalf("area %d without ok", area)
		}
	})
}
