package engine

import (
	"path/filepath"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/protocol"
)

// goTestOutput is go test -fuzz's output on testdata/calc (Go 1.26), its
// package directory DIR.
const goTestOutput = `fuzz: elapsed: 0s, gathering baseline coverage: 0/3 completed
fuzz: elapsed: 0s, gathering baseline coverage: 3/3 completed, now fuzzing with 1 workers
fuzz: elapsed: 3s, execs: 1234 (411/sec), new interesting: 5 (total: 8)
fuzz: minimizing 38-byte failing input file
fuzz: elapsed: 3s, minimizing
--- FAIL: FuzzEval (3.25s)
    --- FAIL: FuzzEval (0.00s)
        testing.go:1927: panic: runtime error: integer divide by zero
            goroutine 4955 [running]:
            runtime/debug.Stack()
            	/usr/local/go/src/runtime/debug/stack.go:26 +0x9b
            testing.tRunner.func1()
            	/usr/local/go/src/testing/testing.go:1927 +0x1d0
            panic({0x61a420?, 0x7f71d0?})
            	/usr/local/go/src/runtime/panic.go:860 +0x13a
            example.com/calc.(*parser).term(0x4d1a34da7a8)
            	DIR/calc.go:67 +0x353
            example.com/calc.(*parser).expr(0x4d1a35b57a8)
            	DIR/calc.go:32 +0x39
            example.com/calc.Eval({0x4d1aa34bc15?, 0x0?})
            	DIR/calc.go:9 +0x54
            example.com/calc.FuzzEval.func1(0x0?, {0x4d1aa34bc15?, 0x0?})
            	DIR/calc_test.go:10 +0x3b
            testing.tRunner(0x4d1aa3f5448, 0x4d1aa3d9830)
            	/usr/local/go/src/testing/testing.go:2036 +0xea
            created by testing.(*F).Fuzz.func1 in goroutine 19
            	/usr/local/go/src/testing/fuzz.go:328 +0x668
            
    
    Failing input written to testdata/fuzz/FuzzEval/48c07ddc40007f0b
    To re-run:
    go test -run=FuzzEval/48c07ddc40007f0b
FAIL
exit status 1
FAIL	example.com/calc	3.251s`

// TestGoTestRun: go test's progress line gives the executions, its failure
// the panic at the division (as engine/failure classifies a worker's), and the
// file it wrote; a failing seed is named.
func TestGoTestRun(t *testing.T) {
	dir, err := filepath.Abs("../testdata/calc")
	if err != nil {
		t.Fatal(err)
	}
	run := &goTestRun{name: "FuzzEval"}
	for _, line := range strings.Split(strings.ReplaceAll(goTestOutput, "DIR", filepath.ToSlash(dir)), "\n") {
		run.line(line)
	}
	if run.execs != 1234 {
		t.Errorf("execs = %d, want 1234", run.execs)
	}
	if want := filepath.FromSlash("testdata/fuzz/FuzzEval/48c07ddc40007f0b"); run.written != want {
		t.Errorf("written = %q, want %q", run.written, want)
	}
	f := run.failure(failure.UserFrames{Dirs: []string{dir}}, dir)
	if f == nil || f.Kind != protocol.KindPanic || f.Message != "runtime error: integer divide by zero" || f.File != filepath.Join(dir, "calc.go") || f.Line != 67 {
		t.Errorf("failure = %+v", f)
	}
	if (&goTestRun{}).failure(failure.UserFrames{}, dir) != nil {
		t.Error("a run without a failure has one")
	}

	seed := &goTestRun{name: "FuzzEval"}
	seed.line("failure while testing seed corpus entry: FuzzEval/seed#1")
	if seed.seedName != "seed#1" {
		t.Errorf("seed = %q, want seed#1", seed.seedName)
	}
}

func TestCheckEngine(t *testing.T) {
	for _, name := range []string{protocol.EngineFuzzls, protocol.EngineGoTest, protocol.EngineLibFuzzer} {
		if err := CheckEngine(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := CheckEngine("afl"); err == nil {
		t.Error("afl taken")
	}
}
