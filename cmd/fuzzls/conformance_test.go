package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/txtar"

	"fuzzls.dev/fuzzls/internal/testws"
)

// TestConformance runs each case of testdata/conformance side by side with
// `fuzzls fuzz` and `go test -fuzz`, the same target with the same budget, and
// checks that both give the case's verdict: the exit status class (ok: passed,
// fail: a failing input found, error: refused or not built), the failure's line
// and message, fuzzls's kind, and that the input fuzzls saved replays under
// `go test -run`. The cases come from cmd/go's test_fuzz*.txt scripts and
// testing/fuzz.go, and from issue 24 (the places fuzzls differed).
//
// A case is a txtar archive: a module's files, and in its comment one directive
// a line (lines starting with # are prose):
//
//	fuzz FuzzX          the target (fuzzls -run ^FuzzX$, go test -fuzz ^FuzzX$)
//	want ok|fail|error  the exit status class, for both
//	kind K              fuzzls's failure kind
//	message RE          fuzzls's failure message; go test's output also matches RE
//	fuzzls RE           fuzzls's output (-json events, stderr) matches RE; !fuzzls: does not
//	gotest RE           go test's output (with its replay of the input it saved) matches RE
//	fuzztime D          the budget of both (default 60s for fail, else 3s)
//	args A...           more fuzzls flags
//	goarch A            only on GOARCH A (the case has assembly)
//	gotest-want V C     go test of a Go version starting with V gives class C
//	                    instead (a go test bug or change the case documents)
//	gotest-no-line      go test's output does not say where it failed (os.Exit
//	                    leaves no stack): its line is not looked for
//	gotest-saved-passes the input go test saves passes under go test -run (a go
//	                    test bug the case documents): not checked
//
// The failure's line is the one marked "// FAIL" in the case's files.
//
// FUZZLS_CONFORMANCE_BIN runs the cases against another fuzzls binary (to see
// which cases an older build fails).
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test -fuzz and fuzzls fuzz on every case")
	}
	bin := os.Getenv("FUZZLS_CONFORMANCE_BIN")
	if bin == "" {
		bin = buildFuzzls(t)
	}
	files, err := filepath.Glob("../../testdata/conformance/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	sem := make(chan struct{}, 2) // two cases at a time: each runs a build and a worker
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			c := readCase(t, file)
			t.Run("gotest", func(t *testing.T) { c.checkGoTest(t) })
			t.Run("fuzzls", func(t *testing.T) { c.checkFuzzls(t, bin) })
		})
	}
}

type confCase struct {
	ar       *txtar.Archive
	target   string
	want     string
	kind     string
	message  *regexp.Regexp
	fuzzls   []*regexp.Regexp
	notFz    []*regexp.Regexp
	gotest   []*regexp.Regexp
	fuzztime string
	args     []string
	savedOK  bool   // gotest-saved-passes
	noLine   bool   // gotest-no-line
	goWant   string // go test's class on this Go version, if gotest-want says so
	file     string // the file with the "// FAIL" line, relative to the module
	line     int
}

func readCase(t *testing.T, file string) *confCase {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c := &confCase{ar: ar}
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verb, arg, _ := strings.Cut(line, " ")
		arg = strings.TrimSpace(arg)
		re := func() *regexp.Regexp {
			r, err := regexp.Compile(arg)
			if err != nil {
				t.Fatalf("%s: %q: %v", file, line, err)
			}
			return r
		}
		switch verb {
		case "fuzz":
			c.target = arg
		case "want":
			c.want = arg
		case "kind":
			c.kind = arg
		case "message":
			c.message = re()
		case "fuzzls":
			c.fuzzls = append(c.fuzzls, re())
		case "!fuzzls":
			c.notFz = append(c.notFz, re())
		case "gotest":
			c.gotest = append(c.gotest, re())
		case "fuzztime":
			c.fuzztime = arg
		case "args":
			c.args = strings.Fields(arg)
		case "gotest-saved-passes":
			c.savedOK = true
		case "gotest-no-line":
			c.noLine = true
		case "gotest-want":
			v, class, _ := strings.Cut(arg, " ")
			if strings.HasPrefix(goVersion(t), v) {
				c.goWant = class
			}
		case "goarch":
			if arg != runtime.GOARCH {
				t.Skipf("only on %s", arg)
			}
		default:
			t.Fatalf("%s: unknown directive %q", file, line)
		}
	}
	if c.target == "" || c.want == "" {
		t.Fatalf("%s: no fuzz or want directive", file)
	}
	if c.fuzztime == "" {
		c.fuzztime = "3s"
		if c.want == "fail" {
			c.fuzztime = "60s"
		}
	}
	for _, f := range ar.Files {
		for i, l := range strings.Split(string(f.Data), "\n") {
			if strings.Contains(l, "// FAIL") {
				c.file, c.line = f.Name, i+1
			}
		}
	}
	if c.want == "fail" && c.line == 0 {
		t.Fatalf("%s: a failing case needs a line marked // FAIL", file)
	}
	return c
}

var goVersionOnce = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	return strings.TrimSpace(string(out)), err
})

// goVersion is the Go version go test runs with (GOTOOLCHAIN applies).
func goVersion(t *testing.T) string {
	v, err := goVersionOnce()
	if err != nil {
		t.Fatalf("go env GOVERSION: %v", err)
	}
	return v
}

// where is the failure's place as both tools print it: "x_test.go:12".
func (c *confCase) where() string { return fmt.Sprintf("%s:%d", filepath.Base(c.file), c.line) }

func (c *confCase) checkGoTest(t *testing.T) {
	dir := testws.Archive(t, c.ar)
	cmd := exec.Command("go", "test", "-run=^$", "-fuzz=^"+c.target+"$", "-fuzztime="+c.fuzztime, "-parallel=1", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	class := "ok"
	if err != nil {
		class = "error"
		if bytes.Contains(out, []byte("Failing input written to")) || bytes.Contains(out, []byte("--- FAIL: "+c.target+"/")) ||
			bytes.Contains(out, []byte("failure while testing seed corpus entry")) {
			class = "fail"
		}
	}
	want := c.want
	if c.goWant != "" {
		want = c.goWant
	}
	if class == "error" && want != "error" && bytes.Contains(out, []byte("context deadline exceeded")) && !bytes.Contains(out, []byte("Failing input written to")) {
		// go test's own false red on a loaded machine (golang/go#75804): a
		// fuzzing run that fails with no input. Nothing to compare fuzzls with.
		t.Skipf("go test (%s) failed with no input, golang/go#75804:\n%s", goVersion(t), out)
	}
	if class != want {
		t.Fatalf("go test (%s): %s, want %s\n%s", goVersion(t), class, want, out)
	}
	if want != c.want {
		return
	}
	// A worker's death shows in go test's replay of the input it saved.
	if m := regexp.MustCompile(`Failing input written to (testdata/fuzz/\S+)`).FindSubmatch(out); m != nil {
		rcmd := exec.Command("go", "test", "-count=1", "-timeout=15s", "-run=^"+c.target+"$/^"+filepath.Base(string(m[1]))+"$", ".")
		rcmd.Dir = dir
		rcmd.Env = append(os.Environ(), "GOTRACEBACK=crash") // a hang's timeout shows every goroutine, running ones too
		rout, err := rcmd.CombinedOutput()
		if err == nil && !c.savedOK {
			t.Errorf("go test's own saved input passes under go test -run:\n%s", rout)
		}
		out = append(append(out, "\n--- replay:\n"...), rout...)
	}
	if c.want == "fail" && !c.noLine && !bytes.Contains(out, []byte(c.where())) {
		if stackUnavailable(out) {
			t.Logf("go test's replay shows no stack of the running goroutine; its line is not compared")
		} else {
			t.Errorf("go test does not say %s:\n%s", c.where(), out)
		}
	}
	if c.message != nil && !c.message.Match(out) {
		t.Errorf("go test's output does not match %q:\n%s", c.message, out)
	}
	for _, re := range c.gotest {
		if !re.Match(out) {
			t.Errorf("go test's output does not match %q:\n%s", re, out)
		}
	}
}

func (c *confCase) checkFuzzls(t *testing.T, bin string) {
	dir := testws.Archive(t, c.ar)
	args := append([]string{"fuzz", "-json", "-parallel", "1", "-minimizetime", "5s", "-fuzztime", c.fuzztime,
		"-cachedir", t.TempDir(), "-run", "^" + c.target + "$"}, c.args...)
	cmd := exec.Command(bin, append(args, ".")...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	all := string(out) + stderr.String()
	class := map[int]string{0: "ok", 1: "fail", 2: "error"}[exitCode(err)]
	if class != c.want {
		t.Fatalf("fuzzls: %s (%v), want %s\n%s", class, err, c.want, all)
	}
	for _, re := range c.fuzzls {
		if !re.MatchString(all) {
			t.Errorf("fuzzls's output does not match %q:\n%s", re, all)
		}
	}
	for _, re := range c.notFz {
		if re.MatchString(all) {
			t.Errorf("fuzzls's output matches %q:\n%s", re, all)
		}
	}
	if c.want != "fail" {
		return
	}
	var crash map[string]any
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev["event"] == "crash" && (ev["minimized"] == true || ev["flaky"] == true) {
			crash = ev
		}
	}
	if crash == nil {
		t.Fatalf("no crash event:\n%s", all)
	}
	if crash["flaky"] == true {
		t.Errorf("the failure is called flaky: %v", crash)
	}
	if c.kind != "" && crash["kind"] != c.kind {
		t.Errorf("kind %v, want %s (message %q)", crash["kind"], c.kind, crash["message"])
	}
	if want := filepath.Join(dir, c.file); crash["file"] != want || crash["line"] != float64(c.line) {
		t.Errorf("at %v:%v, want %s:%d (%s: %q)", crash["file"], crash["line"], want, c.line, crash["kind"], crash["message"])
	}
	if msg, _ := crash["message"].(string); c.message != nil && !c.message.MatchString(msg) {
		t.Errorf("message %q does not match %q", msg, c.message)
	}
	// The saved input fails again under go test, with the same message and line.
	path, _ := crash["path"].(string)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("saved input: %v", err)
	}
	corpus := filepath.Join(dir, "testdata", "fuzz", c.target)
	os.MkdirAll(corpus, 0o755)
	if err := os.WriteFile(filepath.Join(corpus, filepath.Base(path)), data, 0o644); err != nil {
		t.Fatal(err)
	}
	rcmd := exec.Command("go", "test", "-count=1", "-timeout=15s", "-run=^"+c.target+"$/^"+filepath.Base(path)+"$", ".")
	rcmd.Dir = dir
	rcmd.Env = append(os.Environ(), "GOTRACEBACK=crash")
	rout, err := rcmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the saved input passes under go test:\n%s\n%s", data, rout)
	}
	if c.message != nil && !c.message.Match(rout) {
		t.Errorf("go test's replay of the saved input does not say %q:\n%s", c.message, rout)
	}
	if !c.noLine && !bytes.Contains(rout, []byte(c.where())) {
		if stackUnavailable(rout) {
			t.Logf("go test's replay of the saved input shows no stack of the running goroutine; its line is not compared")
		} else {
			t.Errorf("go test's replay of the saved input does not say %s:\n%s", c.where(), rout)
		}
	}
}

// stackUnavailable reports whether a hang's traceback lacks the hung
// goroutine's stack: the runtime could not stop its thread in time to print
// it (seen at load 20), so go test's line is unknown. fuzzls's own line is
// still compared.
func stackUnavailable(out []byte) bool {
	return bytes.Contains(out, []byte("goroutine running on other thread; stack unavailable"))
}
