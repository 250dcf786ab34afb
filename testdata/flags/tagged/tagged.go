// Package tagged has its fuzz target, and the code it fuzzes, behind a build tag:
// only -tags integration builds them.
package tagged

// Len is built without tags.
func Len(b []byte) int { return len(b) }
