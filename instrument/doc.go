// Package instrument turns a package with fuzz targets into an instrumented test
// binary, without touching the user's files. Build runs the steps in order, a
// file each:
//
//   - load.go: the package, its test files, its targets (IsFuzzTarget, the one
//     shape rule) and dependencies, with go/packages and no types; std.go for a
//     standard library package, which stands in for its own module;
//   - plan.go: the units to instrument (the package with its tests, its
//     dependencies, in the workspace or copied out of the module cache);
//   - rewrite.go with cover.go and cmp.go: each file rewritten with a counter per
//     basic block, exit hooks and comparison hooks, every line kept in place;
//   - overlay.go with harness.go and bridge.go: the generated harness that hands
//     the targets to the fuzzls runtime, the runtime itself, the replace
//     directives to the copies, and the overlay file;
//   - compile.go: `go test -c -overlay` into the cache directory, under the
//     build guard (guard.go), its messages mapped back to the user's files.
//
// A build the hooks break is built again without them (varhooks.go), so they
// never turn a compiling package into a failing one. The engine runs what this
// package builds; it knows nothing of mutation or scheduling.
package instrument
