//go:build race

package fuzzrt

// raceBuild: the binary runs with the race detector. Comparison operands are not
// recorded then: the recorder is not safe for several goroutines, and the race
// detector would report the target's goroutines racing on it (see
// instrument/race.go).
const raceBuild = true
