// Package multiarg clips rectangles: a target with several typed arguments.
package multiarg

// Clip returns the part of a w×h rectangle at (x, y) that lies in a 100×100 canvas,
// scaled by scale, and whether anything is left.
func Clip(x, y int32, w, h uint16, scale float64, wrap bool) (area int, ok bool) {
	if w == 0 || h == 0 {
		return 0, false
	}
	if wrap {
		x %= 100
		y %= 100
	}
	cells := make([]int, 100)
	if x >= 90 {
		if y < -50 {
			if scale > 2 {
				idx := int(x) + int(w)
				cells[idx]++ // BUG: index out of range for wide rectangles
			}
		}
	}
	return int(float64(w) * float64(h) * scale), true
}
