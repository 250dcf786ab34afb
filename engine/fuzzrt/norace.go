//go:build !race

package fuzzrt

// raceBuild: see race.go.
const raceBuild = false
