package engine

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/engine/failure"
	"fuzzls.dev/fuzzls/protocol"
)

// libFuzzerOutput is a libFuzzer build of testdata/calc's FuzzEval
// (go-118-fuzz-build, clang 19) finding the division by zero; its artifact
// directory DIR. go-118-fuzz-build builds with -trimpath: the frames name
// no file on disk.
const libFuzzerOutput = `INFO: Running with entropic power schedule (0xFF, 100).
INFO: Seed: 1
INFO: Loaded 1 modules   (5719 inline 8-bit counters): 5719 [0x56201fda7e80, 0x56201fda94d7), 
INFO: Loaded 1 PC tables (5719 PCs): 5719 [0x2d2dbaa0000,0x2d2dbab6570), 
INFO:       47 files found in /cache/corpus
INFO: -max_len is not provided; libFuzzer will not generate inputs larger than 4096 bytes
INFO: seed corpus: files: 47 min: 1b max: 55b total: 447b rss: 29Mb
#48	INITED cov: 351 ft: 469 corp: 44/375b exec/s: 0 rss: 30Mb
#1767	NEW    cov: 351 ft: 470 corp: 45/391b lim: 52 exec/s: 0 rss: 30Mb L: 16/37 MS: 4 ChangeByte-InsertByte-CrossOver-ChangeByte-
#2048	pulse  cov: 351 ft: 470 corp: 45/391b lim: 52 exec/s: 1024 rss: 30Mb
panic: runtime error: integer divide by zero [recovered]
	panic: runtime error: integer divide by zero

goroutine 17 [running, locked to thread]:
main.catchPanics()
	./main.3400124544.go:49 +0x1c5
panic({0x56201f3d12a0?, 0x56201f3f22b0?})
	runtime/panic.go:860 +0x13a
example.com/calc.(*parser).term(0x2d2dbae93e0)
	example.com/calc/calc.go:67 +0x353
example.com/calc.(*parser).expr(0x2d2dbae93e0)
	example.com/calc/calc.go:32 +0x39
example.com/calc.Eval({0x2d2dbb2e0f0?, 0x0?})
	example.com/calc/calc.go:9 +0x54
example.com/calc.FuzzEval.func1(0x0?, {0x2d2dbb2e0f0?, 0x56201f23e5b3?})
	example.com/calc/calc_test.go_fuzz.go:10 +0x3b
reflect.Value.call({0x56201f3ce6e0?, 0x56201f3eb608?, 0x30?}, {0x56201f2dacf3, 0x4}, {0x2d2dbb511d0, 0x2, 0x2d2dbae9b00?})
	reflect/value.go:586 +0x24c6
reflect.Value.Call({0x56201f3ce6e0?, 0x56201f3eb608?, 0x56201f2dae70?}, {0x2d2dbb511d0, 0x2, 0x2})
	reflect/value.go:369 +0x18e
github.com/AdamKorcz/go-118-fuzz-build/testing.(*F).Fuzz(0x2d2dbae9dc8, {0x56201f3ce6e0?, 0x56201f3eb608?})
	github.com/AdamKorcz/go-118-fuzz-build@v0.0.0-20250520111509-a70c2aa677fa/testing/f.go:149 +0x22c5
example.com/calc.FuzzEval(0x56201f2cb833?)
	example.com/calc/calc_test.go_fuzz.go:9 +0x3e
main.LibFuzzerFuzzEval({0x562056145490, 0x27, 0x27})
	./main.3400124544.go:31 +0xd1
main.LLVMFuzzerTestOneInput(0x0?, 0x56201f240a01?)
	./main.3400124544.go:24 +0x6b
==15940== ERROR: libFuzzer: deadly signal
    #0 0x56201f1bfef4 in __sanitizer_print_stack_trace (/cache/FuzzEval.libfuzzer+0x99ef4) (BuildId: 896f8b5ff3b66652ed940affa1ad1a6859170286)
    #1 0x56201f1969c8 in fuzzer::PrintStackTrace() (/cache/FuzzEval.libfuzzer+0x709c8) (BuildId: 896f8b5ff3b66652ed940affa1ad1a6859170286)
    #2 0x56201f17c293 in fuzzer::Fuzzer::CrashCallback() (/cache/FuzzEval.libfuzzer+0x56293) (BuildId: 896f8b5ff3b66652ed940affa1ad1a6859170286)
    #3 0x7fd082a5a04f  (/lib/x86_64-linux-gnu/libc.so.6+0x3c04f) (BuildId: 93ac61ec5a8eb1396f9fbd350e3169a558528a40)
    #4 0x56201f243fe0 in runtime.raise.abi0 runtime/sys_linux_amd64.s:153

NOTE: libFuzzer has rudimentary signal handlers.
      Combine libFuzzer with AddressSanitizer or similar for better crash reports.
SUMMARY: libFuzzer: deadly signal
MS: 4 ChangeASCIIInt-InsertByte-InsertByte-ChangeBinInt-; base unit: d4287f5549e59ba77ea82240bd7730c3b295704c
0x0,0x0,0x0,0x21,0x30,0x30,0x30,0x30,0x30,0x30,0x30,0x30,0x30,0x30,0x30,0x30,0x30,0x30,0x30,0x2f,0x30,0x30,0x30,0x30,0x89,0x34,0x2b,0x30,0x37,0x33,0x37,0x30,0x39,0x35,0x35,0x31,0x36,0x31,0x35,
\000\000\000!000000000000000/0000\2114+073709551615
artifact_prefix='DIR/'; Test unit written to DIR/crash-4e63d31a8aea66d446f309018754e1e2e18fcd9f
Base64: AAAAITAwMDAwMDAwMDAwMDAwMC8wMDAwiTQrMDczNzA5NTUxNjE1`

// TestLibFuzzerRun: libFuzzer's status lines (INITED, NEW, pulse) give the
// executions, its ERROR line and Go's panic the failure, its last line the
// crash file; the crash file's bytes (printed as Base64) decode to
// FuzzEval's string argument.
func TestLibFuzzerRun(t *testing.T) {
	run := &libFuzzerRun{}
	var progress []int64
	for _, line := range strings.Split(libFuzzerOutput, "\n") {
		if run.line(line) {
			progress = append(progress, run.executions())
		}
	}
	if want := []int64{48, 1767, 2048}; !equalInts(progress, want) {
		t.Errorf("progress at executions %v, want %v", progress, want)
	}
	if want := "DIR/crash-4e63d31a8aea66d446f309018754e1e2e18fcd9f"; run.artifact != want {
		t.Errorf("artifact = %q, want %q", run.artifact, want)
	}
	if run.err != "deadly signal" {
		t.Errorf("err = %q, want deadly signal", run.err)
	}
	f := run.failure(failure.UserFrames{}, "FuzzEval")
	if f == nil || f.Kind != protocol.KindPanic || f.Message != "runtime error: integer divide by zero" || len(f.Frames) == 0 || f.Frames[0].Line != 67 {
		t.Errorf("failure = %+v", f)
	}
	if (&libFuzzerRun{}).failure(failure.UserFrames{}, "FuzzEval") != nil {
		t.Error("a run without a failure has one")
	}

	i := strings.LastIndex(libFuzzerOutput, "Base64: ")
	data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(libFuzzerOutput[i+len("Base64: "):]))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "crash-4e63d31a8aea66d446f309018754e1e2e18fcd9f"), data, 0o644)
	os.WriteFile(filepath.Join(dir, "short"), []byte{0, 0}, 0o644) // the harness does not call the target on it
	ins := readLibFuzzerCorpus(dir, []string{"string"}, nil)
	if len(ins) != 1 || !strings.Contains(ins[0], `string("000000000000000/0000`) {
		t.Errorf("inputs = %q, want the crash's string", ins)
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
