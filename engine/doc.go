// Package engine is fuzzls's fuzzing engine: the coordinator that runs in the fuzzls
// process (engine.go, session.go), the worker processes it supervises (workerproc.go),
// the corpus kept in the cache directory (corpus.go), the classification of failures
// from their output (crash.go) and their minimization (minimize.go).
//
// The per-execution loop runs inside the instrumented test binary (package fuzzrt);
// the coordinator sees only what is new: inputs that reach new coverage, failures, and
// the execution counter in each worker's shared memory.
//
// The engine knows nothing of LSP: it reports through Events to whoever drives it
// (the CLI or the daemon).
package engine
