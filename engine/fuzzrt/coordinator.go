package fuzzrt

import (
	"crypto/sha256"
	"encoding/hex"
)

// The files named coordinator*.go hold what only the coordinator's side (the
// engine) uses: a build copies the others into the user's test binary
// (instrument/overlay.go), and what these import (os/exec, crypto/sha256) is not
// linked there, so a standard library package among those can be fuzzed.

// FileName is the name `go test` gives a corpus file with this content in
// testdata/fuzz/FuzzXxx/: the first 16 hex digits of its SHA-256.
func FileName(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}
