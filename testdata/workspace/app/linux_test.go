//go:build linux

package app

import "testing"

// FuzzLinuxOnly exists only where its build tag holds.
func FuzzLinuxOnly(f *testing.F) {
	f.Fuzz(func(t *testing.T, n int) {})
}
