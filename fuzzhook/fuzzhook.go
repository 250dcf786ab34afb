// Package fuzzhook lets a fuzz target bring its own mutators and generators to
// fuzzls, in the test file, without changing what go test does:
//
//	func FuzzExpr(f *testing.F) {
//		fuzzhook.Mutator(f, func(data []byte, rand uint64) []byte { ... })
//		fuzzhook.Generator(f, func(rand uint64) []byte { ... })
//		f.Fuzz(func(t *testing.T, data []byte) { ... })
//	}
//
// Under go test (and go test -fuzz) the calls do nothing. Under fuzzls, each
// worker mixes the functions with its own mutations, picking each in proportion
// to the new coverage it has found per execution, and reports per function its
// executions, finds and panics.
//
// The package imports only the standard library and is its own module, so a
// module that uses it requires nothing else. It and fuzzls's runtime, which
// runs inside the test binary, do not import each other: the runtime defines
// the flag named by hookFlag in worker processes only, whose value's Get
// returns the function that takes a registration; without that flag (go test)
// a registration is dropped.
package fuzzhook

import (
	"flag"
	"reflect"
	"runtime"
	"testing"
)

// hookFlag is the flag fuzzls's runtime defines in its workers
// (engine/fuzzrt/hooks.go); its Get returns a func(target, name string, hook
// any), hook being a func([]byte, uint64) []byte or a func(uint64) any.
const hookFlag = "fuzzls.hooks"

// Mutator registers fn as a mutator of f's fuzz input: fuzzls calls it with a
// copy of a corpus entry's first []byte or string argument, which fn may change
// in place, and a random number, and runs the target on what it returns. fn
// should be deterministic for a given rand, so that a run can be repeated.
// Register before f.Fuzz.
func Mutator(f *testing.F, fn func(data []byte, rand uint64) []byte) {
	register(f, fn, fn)
}

// Generator registers fn as a generator of f's fuzz input: fuzzls runs the
// target with fn's value in place of the first argument of type T (a []byte,
// string, number or bool, as f.Fuzz takes) of a corpus entry. Register before
// f.Fuzz.
func Generator[T any](f *testing.F, fn func(rand uint64) T) {
	register(f, fn, func(rand uint64) any { return fn(rand) })
}

// register hands hook to fuzzls's runtime, if it is there, under the name of
// the user's function fn.
func register(f *testing.F, fn, hook any) {
	f.Helper()
	fl := flag.Lookup(hookFlag)
	if fl == nil {
		return
	}
	g, ok := fl.Value.(flag.Getter)
	if !ok {
		return
	}
	if add, ok := g.Get().(func(string, string, any)); ok {
		name := "?"
		if fi := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()); fi != nil {
			name = fi.Name()
		}
		add(f.Name(), name, hook)
	}
}
