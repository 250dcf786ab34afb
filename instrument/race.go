package instrument

import (
	"bytes"
	"fmt"
	"regexp"
)

// A -race build must not report fuzzls's own memory accesses as the user's data
// races. The counters are plain global arrays that every goroutine running
// instrumented code bumps without synchronization: two goroutines that run the
// same block, even under the user's mutex (the counter comes before the Lock),
// would be a race on the counter, reported at the user's line. Atomic increments
// would hide real races instead (the race detector takes atomics for
// synchronization). So in a race build the instrumentation's accesses go through
// functions marked //go:norace (which the compiler then does not inline): the
// race detector neither checks nor records them, and sees only the user's own.
// The comparison helpers are marked too; the runtime never records comparison
// operands in a race build (its recorder is not safe for several goroutines).

// raceCounterFunc is the name of the //go:norace function that bumps counter k
// of file id in a race build.
func raceCounterFunc(id fileID) string { return "FuzzlsRaceCount_" + string(id) }

// generatedMarker starts the declarations the instrumentation appends to a file
// (see rewrite): everything after it is fuzzls's own.
const generatedMarker = "\n//line zz_fuzzls_instrumentation.go:1\n"

// raceSafe rewrites an instrumented file (RewriteFile's or rewriteFileCmp's
// output) for a race build: counter increments become calls of a //go:norace
// function, and the generated helpers are marked //go:norace.
func raceSafe(src []byte, id fileID) ([]byte, error) {
	i := bytes.LastIndex(src, []byte(generatedMarker))
	if i < 0 {
		return nil, fmt.Errorf("instrument: no generated declarations in file %s", id)
	}
	code, decls := src[:i], src[i:]
	inc := regexp.MustCompile(regexp.QuoteMeta(counterVar(id)) + `\[(\d+)\]\+\+;`)
	var b bytes.Buffer
	b.Grow(len(src) + len(src)/8)
	// The calls stay where the increments were: no line of the user's code moves.
	b.Write(inc.ReplaceAll(code, []byte(raceCounterFunc(id)+"($1);")))
	b.Write(bytes.ReplaceAll(decls, []byte("\nfunc "), []byte("\n//go:norace\nfunc ")))
	fmt.Fprintf(&b, "//go:norace\nfunc %s(k int) { %s[k]++ }\n", raceCounterFunc(id), counterVar(id))
	return b.Bytes(), nil
}
