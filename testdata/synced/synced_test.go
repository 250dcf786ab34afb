// Package synced holds a failure no fuzzer finds on its own: the first 16 bytes
// of the input must hash to a constant ("sixteen-byte-key" does). Tests of the
// sync directory and of imported failures give the entry or the failure to one
// process and see it reach the others.
package synced

import (
	"crypto/sha256"
	"testing"
)

func FuzzCheck(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 16 {
			return
		}
		h := sha256.Sum256(b[:16])
		if [4]byte(h[:4]) == [4]byte{0x88, 0xdb, 0xf2, 0xd3} && len(b) > 16 {
			panic("past the gate") // MARK:gate
		}
	})
}
