package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"fuzzls.dev/fuzzls/internal/proc"
	"fuzzls.dev/fuzzls/internal/testws"
)

// fuzzWithEngine runs fuzzls fuzz -engine name with args in a copy of the
// example workspace src, wants exit status 1 (a failure) and checks that the
// report has each of want (%[1]s in one is the copy's directory). It returns
// the copy and what fuzzls wrote to stderr.
func fuzzWithEngine(t *testing.T, name, src string, want []string, args ...string) (dir, stderr string) {
	t.Helper()
	bin := buildFuzzls(t)
	dir = copyDir(t, src)
	cmd := exec.Command(bin, append(append([]string{"fuzz", "-engine", name, "-parallel", "1", "-minimizetime", "10s", "-cachedir", t.TempDir()}, args...), ".")...)
	cmd.Dir = dir
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	out, err := cmd.Output()
	if code := exitCode(err); code != 1 {
		t.Fatalf("exit status %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errBuf.String())
	}
	for _, w := range want {
		if w = strings.ReplaceAll(w, "%[1]s", dir); !bytes.Contains(out, []byte(w)) {
			t.Errorf("no %q in the report:\n%s\nstderr:\n%s", w, out, errBuf.String())
		}
	}
	return dir, errBuf.String()
}

// TestGoTestEngine: fuzzls fuzz -engine gotest runs go test -fuzz on the
// calculator, reports its division by zero as fuzzls reports a failure (kind,
// message, the panic's line, the input minimized) and exits 1; go test wrote the
// failing input into testdata/fuzz/FuzzEval, as it does.
func TestGoTestEngine(t *testing.T) {
	divLine := testws.Line(t, "../../testdata/calc/calc.go", "v /= w")
	dir, stderr := fuzzWithEngine(t, "gotest", "../../testdata/calc", []string{
		"--- FAIL: FuzzEval (panic)",
		"integer divide by zero",
		fmt.Sprintf("at %s:%d", filepath.Join("%[1]s", "calc.go"), divLine),
		"minimized failing input:",
	})
	if !strings.Contains(stderr, "go test -run=^FuzzEval$ -fuzz=^FuzzEval$ -parallel=1") {
		t.Errorf("go test -fuzz did not run:\n%s", stderr)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "testdata", "fuzz", "FuzzEval")); len(ents) != 1 {
		t.Errorf("go test's failing input: %d files in testdata/fuzz/FuzzEval, want 1", len(ents))
	}
}

// TestGoTestEngineExit: a worker go test saw die ("fuzzing process hung or
// terminated unexpectedly", no stack) is the failure its input is on fuzzls's
// build: an exit at the os.Exit.
func TestGoTestEngineExit(t *testing.T) {
	line := testws.Line(t, "../../testdata/crashers/crashers.go", "MARK:exit")
	fuzzWithEngine(t, "gotest", "../../testdata/crashers", []string{
		"--- FAIL: FuzzExit (exit)",
		fmt.Sprintf("at %s:%d", filepath.Join("%[1]s", "crashers.go"), line),
	}, "-run", "^FuzzExit$")
}

// TestLibFuzzerEngine: fuzzls fuzz -engine libfuzzer builds the calculator's
// FuzzEval with go-118-fuzz-build and clang into the cache, runs libFuzzer on
// its seeds, and reports libFuzzer's crash as fuzzls reports a failure (kind,
// message, the division's line, the input minimized), exit 1; the user's tree
// is as it was (go-118-fuzz-build rewrote a copy).
func TestLibFuzzerEngine(t *testing.T) {
	requireLibFuzzer(t)
	divLine := testws.Line(t, "../../testdata/calc/calc.go", "v /= w")
	dir, stderr := fuzzWithEngine(t, "libfuzzer", "../../testdata/calc", []string{
		"--- FAIL: FuzzEval (panic)",
		"integer divide by zero",
		fmt.Sprintf("at %s:%d", filepath.Join("%[1]s", "calc.go"), divLine),
		"minimized failing input:",
	})
	if !strings.Contains(stderr, "go-118-fuzz-build and clang -fsanitize=fuzzer") || !strings.Contains(stderr, "FuzzEval.libfuzzer -artifact_prefix=") {
		t.Errorf("libFuzzer did not run:\n%s", stderr)
	}
	if got, want := treeFiles(t, dir), treeFiles(t, "../../testdata/calc"); !maps.Equal(got, want) {
		t.Errorf("the workspace changed: %d files, want %d\n%s", len(got), len(want), stderr)
	}
}

// treeFiles is every file under dir by its relative path, with its content.
func treeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestEngineFlag: an engine that is none is refused, saying which are.
func TestEngineFlag(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := fuzz([]string{"-engine", "afl", "."}, &stdout, &stderr); code != 2 {
		t.Fatalf("exit status %d, want 2", code)
	}
	if want := `-engine: engine "afl" is not one of fuzzls, gotest, libfuzzer`; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

// TestGoTestEngineTakesTurns: two targets on one worker slot take turns: go
// test runs for one at a time, and both fuzz.
func TestGoTestEngineTakesTurns(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	bin := buildFuzzls(t)
	dir := copyDir(t, "../../testdata/calc")
	src := "package calc\n\nimport \"testing\"\n\nfunc FuzzQuietA(f *testing.F) {\n\tf.Add(1)\n\tf.Fuzz(func(t *testing.T, n int) {})\n}\n\nfunc FuzzQuietB(f *testing.F) {\n\tf.Add(\"b\")\n\tf.Fuzz(func(t *testing.T, s string) {})\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "quiet_test.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "fuzz", "-engine", "gotest", "-parallel", "1", "-fuzztime", "10s", "-run", "FuzzQuiet", "-cachedir", t.TempDir(), ".")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	most := 0
	var err error
poll:
	for {
		select {
		case err = <-done:
			break poll
		case <-time.After(50 * time.Millisecond):
		}
		n := 0
		for _, pid := range proc.Descendants(cmd.Process.Pid) {
			args, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if proc.Name(pid) == "go" && bytes.Contains(args, []byte("-fuzz=")) {
				n++
			}
		}
		most = max(most, n)
	}
	if code := exitCode(err); code != 0 {
		t.Fatalf("exit status %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if most != 1 {
		t.Errorf("at most %d go test processes at once, want 1\nstderr:\n%s", most, stderr.String())
	}
	for _, name := range []string{"FuzzQuietA", "FuzzQuietB"} {
		if !regexp.MustCompile(name + `: done: [1-9]\d* execs`).Match(stdout.Bytes()) {
			t.Errorf("%s did not fuzz:\n%s\nstderr:\n%s", name, stdout.String(), stderr.String())
		}
	}
}
