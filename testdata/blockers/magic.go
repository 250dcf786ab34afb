// Package blockers holds a branch no fuzzer takes on its own: a hash of the
// input compared with a constant. Tests of blockers see fuzzing reach the
// comparison, never take it, and name the constant and the nearest value fed.
package blockers

import (
	"crypto/sha256"
	"encoding/binary"
)

// Check reports which part of b it got to.
func Check(b []byte) int {
	if len(b) < 4 {
		return 0
	}
	h := sha256.Sum256(b)
	if binary.BigEndian.Uint32(h[:4]) == 0x89504e47 { // MARK:gate
		n := 0 // MARK:behind
		for _, c := range b {
			if c == 'x' {
				n++
			}
		}
		if n > 3 {
			return 3
		}
		return 2
	}
	return 1
}
