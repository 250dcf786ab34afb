//go:build fuzzls_portable

package engine

// portable: see portable.go.
const portable = true
