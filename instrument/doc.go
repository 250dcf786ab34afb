// Package instrument turns a package with fuzz targets into an instrumented test
// binary, without touching the user's files: it loads the package graph
// (golang.org/x/tools/go/packages), finds the FuzzXxx targets, rewrites the sources of
// the package and of its dependencies inside the workspace so that every basic block
// bumps a counter (cover.go), generates the harness that hands the targets to the
// fuzzls runtime (harness.go), and builds with `go test -c -overlay` into a cache
// directory (build.go). The engine runs what it builds; this package knows nothing
// about mutation or scheduling.
package instrument
