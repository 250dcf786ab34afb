// Package benchtargets holds the fuzz targets of fuzzls's comparison benchmark
// (go run ./bench/compare from the repository root): planted bugs of graded
// difficulty in ./planted, and real parsers from public modules in ./parsers.
//
// It is a module of its own so that both engines fuzz it exactly as a user's
// module: fuzzls fuzz and go test -fuzz are run inside (a scratch copy of) it.
package benchtargets
