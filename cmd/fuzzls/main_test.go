package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"fuzzls.dev/fuzzls/internal/testws"
)

// buildFuzzls builds the real binary once per test run.
func buildFuzzls(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fuzzls")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// copyDir copies the example workspace src into a scratch directory the test may write.
func copyDir(t *testing.T, src string) string { return testws.Copy(t, src) }

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestJSON runs `fuzzls fuzz -json` on the calculator and checks every required
// event and field, and exit status 1 for a failure.
func TestJSON(t *testing.T) {
	bin := buildFuzzls(t)
	dir := copyDir(t, "../../testdata/calc")
	cmd := exec.Command(bin, "fuzz", "-json", "-minimizetime", "10s", "-cachedir", t.TempDir(), "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if code := exitCode(err); code != 1 {
		t.Fatalf("exit status %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, stderr.String())
	}
	seen := map[string]map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not JSON: %q", sc.Text())
		}
		name, _ := ev["event"].(string)
		if name == "crash" && ev["minimized"] != true {
			continue
		}
		seen[name] = ev
	}
	required := map[string][]string{
		"build": {"package", "targets", "seconds"},
		"seeds": {"target", "package", "count", "total", "bytes", "done"},
		"crash": {"target", "package", "kind", "message", "file", "line", "frames", "input", "minimized", "path"},
		"done":  {"target", "execs", "crashes"},
	}
	for name, fields := range required {
		ev, ok := seen[name]
		if !ok {
			t.Errorf("no %q event in:\n%s", name, out)
			continue
		}
		for _, f := range fields {
			if _, ok := ev[f]; !ok {
				t.Errorf("%s event has no %q: %v", name, f, ev)
			}
		}
	}
	if c := seen["crash"]; c != nil {
		if c["kind"] != "panic" || c["file"] != filepath.Join(dir, "calc.go") || !strings.HasPrefix(c["input"].(string), "go test fuzz v1\n") {
			t.Errorf("crash event: %v", c)
		}
		if _, err := os.Stat(c["path"].(string)); err != nil {
			t.Errorf("crash input not saved: %v", err)
		}
	}
}

// TestStatsAndTimeLimit: -fuzztime Nx ends the run with status 0 and stats events.
func TestStatsAndTimeLimit(t *testing.T) {
	bin := buildFuzzls(t)
	dir := copyDir(t, "../../testdata/crashers")
	cmd := exec.Command(bin, "fuzz", "-json", "-run", "^FuzzNoBug$", "-fuzztime", "20000x", "-cachedir", t.TempDir(), ".")
	cmd.Dir = dir
	out, err := cmd.Output()
	if code := exitCode(err); code != 0 {
		t.Fatalf("exit status %d, want 0\n%s", code, out)
	}
	if !bytes.Contains(out, []byte(`"event":"stats"`)) || !bytes.Contains(out, []byte(`"execsPerSec"`)) {
		t.Errorf("no stats event:\n%s", out)
	}
}

// TestBuildError: a package that does not compile gives status 2 and the compiler's
// message with the user's file name.
func TestBuildError(t *testing.T) {
	bin := buildFuzzls(t)
	dir := copyDir(t, "../../testdata/calc")
	src, _ := os.ReadFile(filepath.Join(dir, "calc.go"))
	os.WriteFile(filepath.Join(dir, "calc.go"), bytes.Replace(src, []byte("return v, nil\n}"), []byte("return v, undefinedThing\n}"), 1), 0o644)
	cmd := exec.Command(bin, "fuzz", "-cachedir", t.TempDir(), ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if code := exitCode(err); code != 2 {
		t.Fatalf("exit status %d, want 2\n%s", code, out)
	}
	if !bytes.Contains(out, []byte(filepath.Join(dir, "calc.go")+":")) || !bytes.Contains(out, []byte("undefinedThing")) {
		t.Errorf("the message does not name the user's file and the error:\n%s", out)
	}
	if bytes.Contains(out, []byte("/build/")) {
		t.Errorf("the message names a cache file:\n%s", out)
	}
}

func TestVersionAndUsage(t *testing.T) {
	bin := buildFuzzls(t)
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.Contains(string(out), "fuzzls") || !strings.Contains(string(out), runtime.Version()) {
		t.Errorf("version: %q %v", out, err)
	}
	if code := exitCode(exec.Command(bin, "fuzz", "-nosuchflag").Run()); code != 2 {
		t.Errorf("bad flag: status %d, want 2", code)
	}
	if code := exitCode(exec.Command(bin, "frobnicate").Run()); code != 2 {
		t.Errorf("unknown command: status %d, want 2", code)
	}
}

// TestFlagsAfterPackages: as go test, flags may follow the packages: a
// -fuzztime and a -sarif after the package are obeyed, and an unknown flag
// after it is refused with status 2 and the usage, by every command that takes
// packages.
func TestFlagsAfterPackages(t *testing.T) {
	bin := buildFuzzls(t)
	dir := copyDir(t, "../../testdata/crashers")
	cache := t.TempDir()
	sarif := filepath.Join(t.TempDir(), "x.sarif")
	cmd := exec.Command(bin, "fuzz", "-run", "^FuzzNoBug$", "-cachedir", cache, ".", "-fuzztime", "3s", "-sarif", sarif)
	cmd.Dir = dir
	done := make(chan struct{})
	defer close(done)
	go func() { // the old code fuzzed on for good
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			cmd.Process.Kill()
		}
	}()
	out, err := cmd.CombinedOutput()
	if code := exitCode(err); code != 0 {
		t.Errorf("fuzz . -fuzztime 3s -sarif: status %d, want 0\n%s", code, out)
	}
	if _, err := os.Stat(sarif); err != nil {
		t.Errorf("fuzz . -fuzztime 3s -sarif: no SARIF file: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"fuzz", ".", "-no-such-flag"},
		{"fuzz", "-fuzztime", "1s", ".", "-no-such-flag", "./..."},
		{"cmin", ".", "-no-such-flag"},
		{"export", ".", "-no-such-flag"},
		{"report", "-sync", t.TempDir(), ".", "-no-such-flag"},
		{"import", "-run", "FuzzNoBug", "crash-1", "-no-such-flag"},
	} {
		cmd := exec.Command(bin, append(args, "-cachedir", cache)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if code := exitCode(err); code != 2 || !strings.Contains(string(out), "flag provided but not defined: -no-such-flag") || !strings.Contains(string(out), "usage: fuzzls "+args[0]) {
			t.Errorf("%v: status %d, want 2, the flag and the usage\n%s", args, code, out)
		}
	}
}

// TestParseFlags: flags before, between and after the arguments; "--" ends the
// flags, unless it is a flag's value.
func TestParseFlags(t *testing.T) {
	for _, c := range []struct {
		args     []string
		run      string
		v        bool
		rest     []string
		wantFail bool
	}{
		{args: []string{"./p"}, rest: []string{"./p"}},
		{args: []string{"-run", "X", "./p"}, run: "X", rest: []string{"./p"}},
		{args: []string{"./p", "-run", "X"}, run: "X", rest: []string{"./p"}},
		{args: []string{"./p", "-v", "./q", "-run=X", "./r"}, run: "X", v: true, rest: []string{"./p", "./q", "./r"}},
		{args: []string{"./p", "--", "-v", "./q"}, rest: []string{"./p", "-v", "./q"}},
		{args: []string{"-run", "--", "./p", "-v"}, run: "--", v: true, rest: []string{"./p"}},
		{args: []string{"-v", "--", "-run"}, v: true, rest: []string{"-run"}},
		{args: []string{"./p", "-nope"}, wantFail: true},
		{args: []string{"./p", "-run"}, wantFail: true},
	} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		run := fs.String("run", "", "")
		v := fs.Bool("v", false, "")
		err := parseFlags(fs, c.args)
		if (err != nil) != c.wantFail {
			t.Errorf("%q: error %v, want failure %v", c.args, err, c.wantFail)
			continue
		}
		if err == nil && (*run != c.run || *v != c.v || !slices.Equal(fs.Args(), c.rest)) {
			t.Errorf("%q: -run %q -v %v args %q, want %q %v %q", c.args, *run, *v, fs.Args(), c.run, c.v, c.rest)
		}
	}
}

// TestCmin: redundant entries in the generated corpus are dropped, the useful
// ones kept.
func TestCmin(t *testing.T) {
	bin := buildFuzzls(t)
	dir := copyDir(t, "../../testdata/crashers")
	cache := t.TempDir()
	corpus := filepath.Join(cache, "corpus", "example.com", "crashers", "FuzzNoBugInt")
	os.MkdirAll(corpus, 0o755)
	// Same coverage five times (ok false), and one entry reaching the inner block.
	for i, in := range []string{"int(1)\nbool(false)", "int(2)\nbool(false)", "int(3)\nbool(false)", "int(4)\nbool(false)", "int(5)\nbool(false)", "int(50)\nbool(true)"} {
		os.WriteFile(filepath.Join(corpus, fmt.Sprintf("e%d", i)), []byte("go test fuzz v1\n"+in+"\n"), 0o644)
	}
	cmd := exec.Command(bin, "cmin", "-run", "^FuzzNoBugInt$", "-cachedir", cache, ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cmin: %v\n%s", err, out)
	}
	ents, _ := os.ReadDir(corpus)
	if len(ents) < 2 || len(ents) > 3 {
		t.Errorf("%d entries left, want the useful ones (2 or 3):\n%s", len(ents), out)
	}
	if _, err := os.Stat(filepath.Join(corpus, "e5")); err != nil {
		t.Errorf("the entry reaching the inner block was dropped")
	}
}

// TestBuildFlags: -tags reaches the load and the build (a target behind
// //go:build integration is fuzzed and its bug found; without the flag there is
// no such target, as go test sees none), -race where cgo is off says so, and
// -ldflags and -gcflags take effect in the build: -X sets a variable the target
// reads (it fails only then), -B turns off the bounds check that otherwise
// catches the target's read; the replay commands carry them.
func TestBuildFlags(t *testing.T) {
	bin := buildFuzzls(t)
	dir := copyDir(t, "../../testdata/flags")
	fuzz := func(env []string, args ...string) (int, string) {
		cmd := exec.Command(bin, append([]string{"fuzz", "-cachedir", t.TempDir(), "-minimizetime", "10s", "-fuzztime", "60s", "-parallel", "1"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return exitCode(err), string(out)
	}
	if code, out := fuzz(nil, "./tagged"); code != 2 || !strings.Contains(out, "no fuzz targets") || !strings.Contains(out, "left out by //go:build integration") {
		t.Errorf("without -tags: status %d, want 2, no fuzz targets and why\n%s", code, out)
	}
	if code, out := fuzz(nil, "-tags", "integration", "./tagged"); code != 1 || !strings.Contains(out, "tagged bug") || !strings.Contains(out, "go test -tags=integration -run=FuzzTagged/") {
		t.Errorf("with -tags integration: status %d, want 1 and the tagged bug with its replay command\n%s", code, out)
	}
	if code, out := fuzz([]string{"CGO_ENABLED=0"}, "-race", "./racy"); code != 2 || !strings.Contains(out, "-race needs cgo, which is off here (CGO_ENABLED=0)") {
		t.Errorf("-race without cgo: status %d, want 2 and why\n%s", code, out)
	}

	dir = testws.Txtar(t, "testdata/buildflags.txtar")
	for _, c := range []struct {
		args     []string
		code     int
		want     string
		fileLine string
	}{
		{[]string{"-run", "FuzzMode", "-fuzztime", "2000x"}, 0, "FuzzMode: done:", ""},
		{[]string{"-run", "FuzzMode", "-ldflags", "-X example.com/built.Mode=fuzzing"}, 1, "linked with Mode=fuzzing", "go test '-ldflags=-X example.com/built.Mode=fuzzing' -run=FuzzMode/"},
		{[]string{"-run", "FuzzBounds"}, 1, "index out of range [5] with length 1", "MARK:bounds"},
		{[]string{"-run", "FuzzBounds", "-gcflags", "-B"}, 1, "bounds checks are off", "go test -gcflags=-B -run=FuzzBounds/"},
	} {
		code, out := fuzz(nil, append(c.args, ".")...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%q: status %d, want %d and %q\n%s", c.args, code, c.code, c.want, out)
		}
		if strings.HasPrefix(c.fileLine, "MARK:") {
			c.fileLine = fmt.Sprintf("built.go:%d", testws.Line(t, filepath.Join(dir, "built.go"), c.fileLine))
		}
		if !strings.Contains(out, c.fileLine) {
			t.Errorf("%q: no %q in\n%s", c.args, c.fileLine, out)
		}
	}
}
