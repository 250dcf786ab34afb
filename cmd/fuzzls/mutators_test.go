package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/internal/testws"
)

// mutatorsWorkspace is testdata/mutators.txtar with a go.mod that takes package
// fuzzhook from this repository.
func mutatorsWorkspace(t *testing.T) string {
	t.Helper()
	dir := testws.Txtar(t, "testdata/mutators.txtar")
	hook, err := filepath.Abs("../../fuzzhook")
	if err != nil {
		t.Fatal(err)
	}
	mod := "module example.com/made\n\ngo 1.22\n\nrequire fuzzls.dev/fuzzls/fuzzhook v0.0.0\n\nreplace fuzzls.dev/fuzzls/fuzzhook => " + hook + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// hookEvents runs fuzzls fuzz -json with args in dir and returns its crash
// events, the mutators of its done events by target, and its stderr.
func hookEvents(t *testing.T, bin, dir string, wantCode int, args ...string) (crashes []jsonCrash, done map[string][]engine.MutatorStats, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"fuzz", "-json", "-minimizetime", "5s", "-cachedir", t.TempDir()}, args...)...)
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if code := exitCode(err); code != wantCode {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, wantCode, out, errb.String())
	}
	done = map[string][]engine.MutatorStats{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if _, err := checkJSONLine(sc.Bytes()); err != nil {
			t.Errorf("%s\n  %v", sc.Text(), err)
		}
		var ev struct {
			Event, Target string
			jsonCrash
			Mutators []engine.MutatorStats
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		switch ev.Event {
		case "crash":
			crashes = append(crashes, ev.jsonCrash)
		case "done":
			done[ev.Target] = ev.Mutators
		}
	}
	return crashes, done, errb.String()
}

type jsonCrash struct {
	Message, File string
	Line          int
	Input         string
}

// TestMutators runs fuzzls fuzz on targets with their own hooks (package
// fuzzhook). FuzzMade and FuzzGenerated fail only on an input their mutator
// or generator makes (the generator's is the second argument, a string), so
// their failure shows the hook ran and its output reached the target; the
// done events count the hooks' executions. Without the hooks fuzzls would
// fuzz until -fuzztime and exit 0.
func TestMutators(t *testing.T) {
	bin := buildFuzzls(t)
	dir := mutatorsWorkspace(t)
	for _, tc := range []struct{ target, kind, mark string }{
		{"FuzzMade", "mutator", "// MARK:made"},
		{"FuzzGenerated", "generator", "// MARK:generated"},
	} {
		t.Run(tc.target, func(t *testing.T) {
			crashes, done, stderr := hookEvents(t, bin, dir, 1, "-run", "^"+tc.target+"$", "-fuzztime", "60s", ".")
			line := testws.Line(t, filepath.Join(dir, "made_test.go"), tc.mark)
			if len(crashes) == 0 || crashes[0].Line != line || !strings.Contains(crashes[0].Input, "MADE BY YOUR OWN MUTATOR") {
				t.Fatalf("crashes %+v, want one at line %d on the hook's token\nstderr:\n%s", crashes, line, stderr)
			}
			ms := done[tc.target]
			if len(ms) != 1 || ms[0].Kind != tc.kind || ms[0].Execs == 0 || !strings.HasPrefix(ms[0].Name, "example.com/made."+tc.target) {
				t.Errorf("done's mutators: %+v", ms)
			}
		})
	}
}

// TestMutatorPanics: a mutator that panics on half of its calls is reported as
// such, with where it panicked, and the target, which passes on everything the
// mutator returns, has no failure; a mutator on a target without a []byte or
// string argument says so.
func TestMutatorPanics(t *testing.T) {
	bin := buildFuzzls(t)
	dir := mutatorsWorkspace(t)
	crashes, done, stderr := hookEvents(t, bin, dir, 0, "-run", "^FuzzPanicky$|^FuzzNoBytes$", "-fuzztime", "2s", ".")
	if len(crashes) > 0 {
		t.Errorf("crashes: %+v", crashes)
	}
	line := testws.Line(t, filepath.Join(dir, "made_test.go"), "// MARK:panicky")
	p := done["FuzzPanicky"]
	if len(p) != 1 || p[0].Panics == 0 || p[0].Execs == 0 || !strings.HasPrefix(p[0].Problem, "panic: the mutator's own bug\n") {
		t.Errorf("FuzzPanicky's mutators: %+v", p)
	}
	if want := "mutator example.com/made.FuzzPanicky.func1: panicked: the mutator's own bug at " + filepath.Join(dir, "made_test.go") + ":" + strconv.Itoa(line); !strings.Contains(stderr, want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr)
	}
	n := done["FuzzNoBytes"]
	if len(n) != 1 || n[0].Execs != 0 || !strings.Contains(n[0].Problem, "no []byte or string argument") {
		t.Errorf("FuzzNoBytes's mutators: %+v", n)
	}
}

// TestMutatorsUnderGoTest: go test ignores the hooks: the same file passes
// under go test, and go test -fuzz fuzzes FuzzMade without finding what only
// its mutator makes.
func TestMutatorsUnderGoTest(t *testing.T) {
	dir := mutatorsWorkspace(t)
	for _, args := range [][]string{
		{"test", "-count=1", "."},
		{"test", "-count=1", "-run=^$", "-fuzz=^FuzzMade$", "-fuzztime=2s", "-parallel=1", "."},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		fuzzing := slices.Contains(args, "-fuzz=^FuzzMade$")
		switch {
		case err != nil && fuzzing && bytes.Contains(out, []byte("context deadline exceeded")) && !bytes.Contains(out, []byte("Failing input written to")):
			// go test's own false red at the end of -fuzztime on a loaded
			// machine (golang/go#75804): no input failed.
			t.Logf("go %s: golang/go#75804:\n%s", strings.Join(args, " "), out)
		case err != nil:
			t.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		case fuzzing && !bytes.Contains(out, []byte("fuzz: elapsed:")):
			t.Errorf("go %s did not fuzz:\n%s", strings.Join(args, " "), out)
		}
	}
}
