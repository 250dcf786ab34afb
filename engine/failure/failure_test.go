package failure

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/protocol"
)

// TestPickHangingGoroutine: of two goroutines mentioning the fuzz function, the
// hanging one (user code on top) is chosen, not the one waiting for it.
func TestPickHangingGoroutine(t *testing.T) {
	dump := `SIGQUIT: quit

goroutine 1 gp=0x1 m=nil [chan receive]:
runtime.gopark(0x0)
	/usr/local/go/src/runtime/proc.go:462 +0xce fp=0x1 sp=0x1 pc=0x1
testing.(*F).Fuzz.func1(0x1)
	/usr/local/go/src/testing/fuzz.go:329 +0x1
example.com/m.FuzzHang.func1(0x1)
	/work/m/m_test.go:9 +0x1
example.com/m.FuzzHang(0x1)
	/work/m/m_test.go:8 +0x1

goroutine 7 gp=0x2 m=0 [running]:
example.com/m.Ring(0x1)
	/work/m/m.go:12 +0x1 fp=0x1 sp=0x1 pc=0x1
example.com/m.FuzzHang.func1(0x1)
	/work/m/m_test.go:9 +0x1
testing.tRunner(0x1)
	/usr/local/go/src/testing/testing.go:2036 +0x1
`
	f := ClassifyDeath(Death{Stderr: dump, Hung: true}, UserFrames{Dirs: []string{"/work/m"}}, "FuzzHang.func")
	if f.Kind != protocol.KindHang || f.File != "/work/m/m.go" || f.Line != 12 {
		t.Errorf("got %s at %s:%d, want hang at /work/m/m.go:12", f.Kind, f.File, f.Line)
	}
	if len(f.Frames) == 0 || !strings.HasSuffix(f.Frames[0].Function, "Ring") {
		t.Errorf("frames %v do not start at Ring", f.Frames)
	}
}

// TestHostFrames: a traceback names files as the compiler recorded them, with
// forward slashes on Windows (C:/work/m/m.go); the failure is placed in the
// user's file as go list spells it (C:\work\m\m.go). Under Wine
// (scripts/wine-test.sh) with Windows paths.
func TestHostFrames(t *testing.T) {
	dir := "/work/m"
	if filepath.Separator == '\\' {
		dir = `C:\work\m`
	}
	printed := filepath.ToSlash(dir)
	dump := `panic: boom

goroutine 7 [running]:
example.com/m.Ring(0x1)
	` + printed + `/m.go:12 +0x1
example.com/m.FuzzHang.func1(0x1)
	` + printed + `/m_test.go:9 +0x1
created by example.com/m.FuzzHang.func1 in goroutine 6
	` + printed + `/m_test.go:8 +0x1
exit status 2
`
	f := ClassifyDeath(Death{Stderr: dump}, UserFrames{Dirs: []string{dir}}, "FuzzHang.func")
	if want := filepath.Join(dir, "m.go"); f.File != want || f.Line != 12 {
		t.Errorf("got %s at %s:%d, want %s:12", f.Kind, f.File, f.Line, want)
	}
}

// TestEscapedPackagePath: a frame in a package whose last path element has a
// dot (gopkg.in/yaml.v3) is named as the user writes it, not as the linker
// escapes it.
func TestEscapedPackagePath(t *testing.T) {
	out := `panic: runtime error: hash of unhashable type map[string]interface {}

goroutine 7 [running]:
gopkg.in/yaml%2ev3.(*decoder).mapping(0xc000, 0xc001, {0x1, 0x2, 0x3})
	/root/go/pkg/mod/gopkg.in/yaml.v3@v3.0.1/decode.go:835 +0x1
example.com/m.FuzzYAML.func1(0x1)
	/work/m/m_test.go:9 +0x1
`
	frames := parseFrames(strings.Split(out, "\n"))
	if len(frames) != 2 || frames[0].Function != "gopkg.in/yaml.v3.(*decoder).mapping" {
		t.Errorf("frames %+v, want gopkg.in/yaml.v3.(*decoder).mapping first", frames)
	}
}

// TestSignatureOfLoopFailures: a hang or an oom is located by a stack taken while
// the input runs, on whichever line of its loop it was; replays of one input land
// on different lines and must still be the same failure (else minimization finds
// it flaky), with the same crash id. Panics keep their line.
func TestSignatureOfLoopFailures(t *testing.T) {
	u := UserFrames{Dirs: []string{"/m"}}
	dump := func(line int) string {
		return fmt.Sprintf("goroutine 7 [running]:\nexample.com/m.Alloc(...)\n\t/m/a.go:%d +0x1d\nexample.com/m.FuzzAlloc.func1(...)\n\t/m/a_test.go:9 +0x2a\n", line)
	}
	const target = "example.com/m.FuzzAlloc"
	for _, kind := range []Kind{protocol.KindHang, protocol.KindOOM} {
		d1 := Death{Stderr: "SIGQUIT: quit\n\n" + dump(12), Hung: kind == protocol.KindHang, OOM: kind == protocol.KindOOM}
		d2 := d1
		d2.Stderr = "SIGQUIT: quit\n\n" + dump(14)
		f1, f2 := ClassifyDeath(d1, u, "example.com/m.FuzzAlloc.func"), ClassifyDeath(d2, u, "example.com/m.FuzzAlloc.func")
		if f1.Kind != kind || f1.Line != 12 || f2.Line != 14 {
			t.Fatalf("%s: classified as %s at %d and %d", kind, f1.Kind, f1.Line, f2.Line)
		}
		if f1.signature() != f2.signature() || f1.ID(target, "/m") != f2.ID(target, "/m") {
			t.Errorf("%s: lines 12 and 14 of one function are different failures: %q, %q", kind, f1.signature(), f2.signature())
		}
	}
	p1 := ClassifyOutput("panic: boom\n\n"+dump(12), u, "/m")
	p2 := ClassifyOutput("panic: boom\n\n"+dump(14), u, "/m")
	if p1.signature() == p2.signature() {
		t.Errorf("panics on lines 12 and 14 are one failure: %q", p1.signature())
	}
}

// TestSampledLoop: a loop that spends its time in the functions it calls is
// located by the frames common to the worker's stack samples (the loop), not by
// one sample's innermost frame; and a replay located in one of those callees
// (every sample happened to be there) is still the same failure, while a loop
// elsewhere is not.
func TestSampledLoop(t *testing.T) {
	u := UserFrames{Dirs: []string{"/m"}}
	const fuzzFn = "example.com/m.FuzzLoop.func"
	stack := func(callee string, line int) string {
		s := "goroutine 7 [running]:\n"
		if callee != "" {
			s += fmt.Sprintf("example.com/m.%s(...)\n\t/m/a.go:%d +0x1\n", callee, line)
		}
		return s + "example.com/m.Loop(...)\n\t/m/a.go:5 +0x1\nexample.com/m.FuzzLoop.func1(...)\n\t/m/a_test.go:9 +0x2a\n\n"
	}
	samples := func(stacks ...string) Death {
		var b strings.Builder
		for i, s := range stacks {
			fmt.Fprintf(&b, "%s %d\n%s", fuzzrt.StackSampleMarker, i+1, s)
		}
		b.WriteString(fuzzrt.StackSamplesEnd + "\nSIGQUIT: quit\n\n" + stacks[0])
		return Death{Stderr: b.String(), Hung: true}
	}
	loop := ClassifyDeath(samples(stack("mix", 20), stack("fold", 30), stack("mix", 21)), u, fuzzFn)
	if loop.Func != "example.com/m.Loop" || loop.Line != 5 || len(loop.Frames) != 2 {
		t.Fatalf("located at %s (%s:%d), frames %v; want the loop, example.com/m.Loop at a.go:5", loop.Func, loop.File, loop.Line, loop.Frames)
	}
	if strings.Contains(loop.Output, fuzzrt.StackSampleMarker) || !strings.Contains(loop.Output, "SIGQUIT: quit") {
		t.Errorf("the crash's output should be the runtime's dump without the samples:\n%s", loop.Output)
	}
	inMix := ClassifyDeath(samples(stack("mix", 20), stack("mix", 22)), u, fuzzFn)
	if inMix.Func != "example.com/m.mix" {
		t.Fatalf("every sample in mix: located at %s, want mix", inMix.Func)
	}
	if !loop.Same(inMix) || !inMix.Same(loop) {
		t.Errorf("the loop and its callee mix, on the loop's stack, are different failures")
	}
	inFold := ClassifyDeath(samples(stack("fold", 30)), u, fuzzFn)
	if inMix.Same(inFold) {
		t.Errorf("samples all in mix and all in fold, neither on the other's stack, are one failure")
	}
	panicked := ClassifyOutput("panic: boom\n\n"+stack("mix", 20), u, "/m")
	if panicked.Same(inMix) || inMix.Same(panicked) {
		t.Errorf("a panic and a hang in one function are one failure")
	}
	// Without samples (a worker that could not take them), the runtime's dump.
	dumpOnly := ClassifyDeath(Death{Stderr: "SIGQUIT: quit\n\n" + stack("fold", 30), Hung: true}, u, fuzzFn)
	if dumpOnly.Func != "example.com/m.fold" || dumpOnly.Line != 30 {
		t.Errorf("runtime dump only: located at %s:%d, want fold at 30", dumpOnly.Func, dumpOnly.Line)
	}
}

// TestTestingLogLines: a failure's kind and place come from who logged it. A
// panic or runtime.Goexit is logged by testing's tRunner (from testing.go, with
// the stack it happened on) and is located in the user's frames, never in
// testing.go; a user's own message that says "panic: " (a recovered panic
// reported with t.Errorf) is an error at the user's line. Issue 24, items 3, 4.
func TestTestingLogLines(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x_test.go"), nil, 0o644)
	u := UserFrames{Dirs: []string{dir}}
	stack := func(top string) string {
		return "        goroutine 21 [running]:\n        runtime/debug.Stack()\n        \t/go/src/runtime/debug/stack.go:26 +0x5e\n" +
			"        testing.tRunner.func1()\n        \t/go/src/testing/testing.go:1927 +0x2e5\n" + top +
			"        example.com/c.FuzzX.func1(0x1, {0x1, 0x2, 0x2})\n        \t" + dir + "/x_test.go:12 +0x1\n" +
			"        reflect.Value.call({0x1}, {0x1, 0x4}, {0x1, 0x2, 0x2})\n        \t/go/src/reflect/value.go:586 +0xf0c\n"
	}
	tests := []struct {
		desc, out, msg string
		kind           Kind
		line           int
	}{
		{"runtime.Goexit", "    testing.go:1927: test executed panic(nil) or runtime.Goexit\n" +
			stack("        runtime.Goexit()\n        \t/go/src/runtime/panic.go:677 +0x5e\n"),
			"test executed panic(nil) or runtime.Goexit", protocol.KindPanic, 12},
		{"panic", "    testing.go:1927: panic: boom\n" +
			stack("        panic({0x1, 0x2})\n        \t/go/src/runtime/panic.go:860 +0x13a\n"),
			"boom", protocol.KindPanic, 12},
		{"recovered and reported", "    x_test.go:16: decode panic: boom\n", "decode panic: boom", protocol.KindError, 16},
	}
	for _, tc := range tests {
		f := ClassifyOutput(tc.out, u, dir)
		if f.Kind != tc.kind || f.Message != tc.msg || f.File != filepath.Join(dir, "x_test.go") || f.Line != tc.line {
			t.Errorf("%s: %s %q at %s:%d, want %s %q at x_test.go:%d", tc.desc, f.Kind, f.Message, f.File, f.Line, tc.kind, tc.msg, tc.line)
		}
	}
}

// TestSignalReport: a worker the runtime killed for a signal it does not turn
// into a panic is located by the stack of its report. Issue 24, item 6.
func TestSignalReport(t *testing.T) {
	stderr := `SIGILL: illegal instruction
PC=0x4b1e40 m=0 sigcode=2
instruction bytes: 0xf 0xb 0xc3

goroutine 7 gp=0xc000102a80 m=0 mp=0x6c2f40 [running]:
example.com/c.ill()
	/work/c/ill_amd64.s:4 +0x0 fp=0xc000053e18 sp=0xc000053e10 pc=0x4b1e40
example.com/c.FuzzIll.func1(0x1, {0xc000012345, 0x2, 0x8})
	/work/c/x_test.go:10 +0x25 fp=0xc000053e30 sp=0xc000053e18 pc=0x4b1e65
testing.tRunner(0xc000003c00, 0xc000001234)
	/go/src/testing/testing.go:2036 +0xea fp=0xc000053fc0 sp=0xc000053e90 pc=0x4f5eaa

goroutine 1 gp=0xc000002380 m=nil [chan receive]:
testing.(*F).Fuzz.func1(0x1)
	/go/src/testing/fuzz.go:329 +0x1
`
	f := ClassifyDeath(Death{Stderr: stderr, ExitCode: 2}, UserFrames{Dirs: []string{"/work/c"}}, "FuzzIll.func")
	if f.Kind != protocol.KindFatal || f.Message != "SIGILL: illegal instruction" || f.File != "/work/c/ill_amd64.s" || f.Line != 4 {
		t.Errorf("got %s %q at %s:%d, want fatal \"SIGILL: illegal instruction\" at /work/c/ill_amd64.s:4", f.Kind, f.Message, f.File, f.Line)
	}
}

// TestWindowsExceptionReport: on Windows the runtime reports an exception
// raised outside Go code (in a DLL the program calls) as "Exception <code>
// <info> <info> <pc>", "PC=…", then the faulting goroutine's frames with no
// header, then the others' (runtime.winthrow): a fatal failure located by the
// faulting goroutine's stack, its message without the addresses (a failure's
// message must not change between replays).
func TestWindowsExceptionReport(t *testing.T) {
	dir := "/work/c"
	if filepath.Separator == '\\' {
		dir = `C:\work\c`
	}
	printed := filepath.ToSlash(dir)
	stderr := `Exception 0xc000001d 0x0 0x0 0x7ff6b1e41e40
PC=0x7ff6b1e41e40

example.com/c.ill()
	` + printed + `/ill_amd64.s:4 +0x0 fp=0xc000053e18 sp=0xc000053e10 pc=0x7ff6b1e41e40
example.com/c.FuzzIll.func1(0x1, {0xc000012345, 0x2, 0x8})
	` + printed + `/x_test.go:10 +0x25 fp=0xc000053e30 sp=0xc000053e18 pc=0x7ff6b1e41e65
testing.tRunner(0xc000003c00, 0xc000001234)
	C:/Program Files/Go/src/testing/testing.go:2036 +0xea fp=0xc000053fc0 sp=0xc000053e90 pc=0x7ff6b1e75eaa
created by testing.(*F).Fuzz.func1 in goroutine 21
	C:/Program Files/Go/src/testing/fuzz.go:328 +0x65b fp=0xc000053fe0 sp=0xc000053fc0 pc=0x7ff6b1e75f00

goroutine 21 gp=0xc000102000 m=nil [chan receive]:
testing.(*F).Fuzz.func1(0x1)
	C:/Program Files/Go/src/testing/fuzz.go:343 +0x66e
rax     0x0
rip     0x7ff6b1e41e40
`
	f := ClassifyDeath(Death{Stderr: stderr, ExitCode: 2}, UserFrames{Dirs: []string{dir}}, "FuzzIll.func")
	want := filepath.Join(dir, "ill_amd64.s")
	if f.Kind != protocol.KindFatal || f.Message != "Exception 0xc000001d: illegal instruction" || f.File != want || f.Line != 4 {
		t.Errorf("got %s %q at %s:%d, want fatal \"Exception 0xc000001d: illegal instruction\" at %s:4", f.Kind, f.Message, f.File, f.Line, want)
	}
}

// TestWindowsFault: an illegal instruction in Go code on Windows is a fatal
// error, "fault", with the exception's code on the next line (the output of a
// program run under Wine, its paths the host's): fatal at the instruction.
func TestWindowsFault(t *testing.T) {
	dir := "/work/ill"
	if filepath.Separator == '\\' {
		dir = `C:\work\ill`
	}
	printed := filepath.ToSlash(dir)
	stderr := `fatal error: fault
[signal 0xc000001d code=0x0 addr=0x0 pc=0x140079960]

goroutine 1 gp=0x3bd1ea642000 m=0 mp=0x140122140 [running]:
runtime.throw({0x14008f8a6?, 0x3bd1ea649f20?})
	C:/Program Files/Go/src/runtime/panic.go:1229 +0x4d fp=0x3bd1ea649ee0 sp=0x3bd1ea649eb0 pc=0x14006e8cd
runtime.sigpanic()
	C:/Program Files/Go/src/runtime/signal_windows.go:410 +0x1f9 fp=0x3bd1ea649f28 sp=0x3bd1ea649ee0 pc=0x1400553f9
example.com/ill.ill()
	` + printed + `/ill_amd64.s:4 fp=0x3bd1ea649f30 sp=0x3bd1ea649f28 pc=0x140079960
example.com/ill.FuzzIll.func1(0x1, {0xc000012345, 0x2, 0x8})
	` + printed + `/x_test.go:7 +0x1f fp=0x3bd1ea649f48 sp=0x3bd1ea649f30 pc=0x14007991f

goroutine 2 gp=0x3bd1ea642780 m=nil [force gc (idle)]:
runtime.gopark(0x0?, 0x0?, 0x0?, 0x0?, 0x0?)
	C:/Program Files/Go/src/runtime/proc.go:462 +0xce fp=0x3bd1ea645fa8 sp=0x3bd1ea645f88 pc=0x14006e9ae
`
	f := ClassifyDeath(Death{Stderr: stderr, ExitCode: 2}, UserFrames{Dirs: []string{dir}}, "FuzzIll.func")
	if want := filepath.Join(dir, "ill_amd64.s"); f.Kind != protocol.KindFatal || f.Message != "fault" || f.File != want || f.Line != 4 {
		t.Errorf("got %s %q at %s:%d, want fatal \"fault\" at %s:4", f.Kind, f.Message, f.File, f.Line, want)
	}
}

// TestRaceOrder: the race detector reports whichever access came second as the
// current one; the same race with the goroutines the other way round is the same
// failure (signature and ID), placed at the same line.
func TestRaceOrder(t *testing.T) {
	report := func(first, second string) string {
		return `==================
WARNING: DATA RACE
` + first + `

` + second + `

Goroutine 8 (running) created at:
  example.com/m.Count()
      /work/m/m.go:11 +0x226
==================
`
	}
	inGoroutine := `Write at 0x00c000012345 by goroutine 8:
  example.com/m.Count.func1()
      /work/m/m.go:13 +0x44`
	inCaller := `Read at 0x00c000012345 by goroutine 7:
  example.com/m.Count()
      /work/m/m.go:15 +0x100
  example.com/m.FuzzCount.func1()
      /work/m/m_test.go:9 +0x58`
	u := UserFrames{Dirs: []string{"/work/m"}}
	a := ClassifyDeath(Death{Stderr: report(inGoroutine, "Previous r"+inCaller[1:]), ExitCode: 66}, u, "FuzzCount.func")
	b := ClassifyDeath(Death{Stderr: report(inCaller, "Previous w"+inGoroutine[1:]), ExitCode: 66}, u, "FuzzCount.func")
	for _, f := range []*Failure{a, b} {
		if f.Kind != protocol.KindRace || f.File != "/work/m/m.go" || f.Line != 13 {
			t.Errorf("%s at %s:%d (%s), want race at /work/m/m.go:13", f.Kind, f.File, f.Line, f.Message)
		}
		if !strings.Contains(f.Message, "m.go:13") || !strings.Contains(f.Message, "m.go:15") {
			t.Errorf("message %q does not name both accesses", f.Message)
		}
		if len(f.Frames) != 4 || f.Frames[3].Line != 11 {
			t.Errorf("frames %+v: want both accesses, then the goroutine's creation", f.Frames)
		}
	}
	if !a.Same(b) || a.ID("example.com/m.FuzzCount", "/work/m") != b.ID("example.com/m.FuzzCount", "/work/m") {
		t.Errorf("signatures %q and %q differ", a.signature(), b.signature())
	}
	// Another race on the same line is another failure.
	other := strings.Replace(report(inGoroutine, "Previous r"+inCaller[1:]), "m.go:15", "m.go:16", 1)
	if c := ClassifyDeath(Death{Stderr: other, ExitCode: 66}, u, "FuzzCount.func"); c.Same(a) {
		t.Errorf("races 13/15 and 13/16 are the same failure (%q)", c.signature())
	}
}
