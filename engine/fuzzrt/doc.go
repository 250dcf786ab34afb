// Package fuzzrt is the part of fuzzls that runs inside the user's test binary: the
// testing hooks (deps.go), the worker loop (worker.go), the mutators, the
// shared-memory page that survives a worker's death (mem.go), the wire messages
// exchanged with the coordinator (wire.go) and the `go test fuzz v1` encoding.
//
// The instrument package copies these sources, minus tests and the files named
// coordinator*.go, into a package of the user's module when it builds a target,
// and the generated harness calls Main. So:
//
// Invariant: fuzzrt imports only the standard library, and of it as little as it
// can (TestRuntimeImports): what testing links, and encoding/binary, os/signal and
// runtime/metrics. Whatever it imports cannot be instrumented, and would be a
// package of every test binary, the standard library's own under test among them.
// Its per-execution path is the engine's hot path.
//
// The engine imports fuzzrt too, for the encoding and the wire types, so both
// sides of the pipe share one definition; what only the engine uses is in the
// coordinator*.go files.
package fuzzrt
