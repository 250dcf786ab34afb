// Package app parses framed records: a target whose bug is in a workspace
// dependency, tested from an external test package with its own TestMain.
package app

import "example.com/lib/checksum"

// Parse returns the payload of a frame "<kind><payload><checksum>".
func Parse(b []byte) ([]byte, bool) {
	if len(b) < 2 {
		return nil, false
	}
	if !checksum.Verify(b) {
		return nil, false
	}
	return b[1 : len(b)-1], true
}
