//go:build !fuzzls_portable

package engine

// portable is set by the fuzzls_portable build tag, which turns off what only some
// OSes have, so that the code macOS and Windows run is what Linux's tests run: the
// kernel killing a worker with its coordinator (Pdeathsig), SIGQUIT as the second
// way to ask a worker for its stacks, and /proc's figures for the watchdog (the
// worker's own, from shared memory, instead). scripts/test.sh runs the tests of
// those paths with the tag.
const portable = false
