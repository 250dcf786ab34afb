package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"fuzzls.dev/fuzzls/engine"
	"fuzzls.dev/fuzzls/internal/testws"
)

// TestSARIF runs CI mode over ./... (two targets, one budget) with -sarif and
// validates the file against the SARIF 2.1.0 schema: one result per failure at
// its panic line, the stack as a code flow, the input and the replay command in
// the message; the failure whose input is already in testdata/fuzz is
// "unchanged", the other "new".
func TestSARIF(t *testing.T) {
	bin := buildFuzzls(t)
	dir := copyDir(t, "../../testdata/calc")
	known := filepath.Join(dir, "testdata", "fuzz", "FuzzEval", "divzero")
	os.MkdirAll(filepath.Dir(known), 0o755)
	os.WriteFile(known, []byte("go test fuzz v1\nstring(\"7/0\")\n"), 0o644)
	testws.TxtarInto(t, dir, "testdata/more.txtar")
	_, data := fuzzSARIF(t, bin, dir, "-budget", "3m", "-minimizetime", "5s", "./...")
	if validateSARIF(t, bytes.Replace(data, []byte(`"startLine": `), []byte(`"startLine": -`), 1)) == nil {
		t.Errorf("the schema check lets a negative line through")
	}

	var log struct {
		Runs []struct {
			Results []struct {
				RuleID        string
				BaselineState string
				Message       struct{ Text string }
				Locations     []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI, URIBaseID string }
						Region           struct{ StartLine int }
					}
				}
				CodeFlows []struct {
					ThreadFlows []struct{ Locations []any }
				}
			}
		}
	}
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	results := log.Runs[0].Results
	if len(results) != 2 {
		t.Fatalf("%d results, want 2:\n%s", len(results), data)
	}
	want := map[string]struct {
		line  int
		state string
	}{"calc.go": {markLine(t, filepath.Join(dir, "calc.go"), "BUG: division by zero"), "unchanged"},
		"more/more.go": {markLine(t, filepath.Join(dir, "more", "more.go"), "MARK:more"), "new"}}
	for _, r := range results {
		loc := r.Locations[0].PhysicalLocation
		w, ok := want[loc.ArtifactLocation.URI]
		if !ok || loc.Region.StartLine != w.line || r.BaselineState != w.state || r.RuleID != "fuzzls/panic" {
			t.Errorf("result at %s:%d (%s, %s), want one of %v", loc.ArtifactLocation.URI, loc.Region.StartLine, r.BaselineState, r.RuleID, want)
		}
		delete(want, loc.ArtifactLocation.URI)
		if len(r.CodeFlows) == 0 || len(r.CodeFlows[0].ThreadFlows[0].Locations) < 2 {
			t.Errorf("no stack as a code flow: %+v", r.CodeFlows)
		}
		if !strings.Contains(r.Message.Text, "go test fuzz v1") || !strings.Contains(r.Message.Text, "go test -run=Fuzz") {
			t.Errorf("the message lacks the input or the replay command:\n%s", r.Message.Text)
		}
	}
}

// TestSARIFLeak: a -leaks -sarif run's leak is a result whose rule the file
// declares, as every kind's (the rules are made from engine.Kinds). Its replay
// command, printed and in the SARIF message, is fuzzls's, saying that go test
// -run passes on the input (it does); run as printed, it fails with the leak.
func TestSARIFLeak(t *testing.T) {
	bin := buildFuzzls(t)
	dir := copyDir(t, "../../testdata/crashers")
	out, data := fuzzSARIF(t, bin, dir, "-leaks", "-run", "^FuzzLeak$", "-fuzztime", "2m", "-minimizetime", "5s", "-parallel", "1", ".")
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID                   string
						DefaultConfiguration struct{ Level string }
					}
				}
			}
			Results []struct {
				RuleID  string
				Level   string
				Message struct{ Text string }
			}
		}
	}
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	rules := map[string]string{}
	for _, r := range run.Tool.Driver.Rules {
		rules[r.ID] = r.DefaultConfiguration.Level
	}
	for _, k := range engine.Kinds() {
		if _, ok := rules["fuzzls/"+string(k.Kind)]; !ok {
			t.Errorf("no rule fuzzls/%s in %v", k.Kind, rules)
		}
	}
	if len(run.Results) != 1 || run.Results[0].RuleID != "fuzzls/leak" {
		t.Fatalf("results %+v, want one of rule fuzzls/leak\n%s", run.Results, data)
	}
	if level, ok := rules[run.Results[0].RuleID]; !ok || level != "error" || run.Results[0].Level != "error" {
		t.Errorf("the result's rule %s is not declared as an error (%q, result %q)", run.Results[0].RuleID, level, run.Results[0].Level)
	}

	m := regexp.MustCompile(`replay with fuzzls \(in \S+; go test has no goroutine-leak check, so go test -run passes on this input\):\n\s+mkdir -p testdata/fuzz/FuzzLeak && cp (\S+) testdata/fuzz/FuzzLeak/\n\s+fuzzls (fuzz -leaks -run=FuzzLeak/(\w+) \.)\n`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no replay with fuzzls, saying why not go test:\n%s", out)
	}
	saved, args, name := string(m[1]), strings.Fields(string(m[2])), string(m[3])
	if msg := run.Results[0].Message.Text; !strings.Contains(msg, "then fuzzls "+string(m[2])+" (go test has no goroutine-leak check") {
		t.Errorf("the SARIF message has not the replay with fuzzls %q:\n%s", m[2], msg)
	}
	input, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "testdata", "fuzz", "FuzzLeak"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "testdata", "fuzz", "FuzzLeak", name), input, 0o644); err != nil {
		t.Fatal(err)
	}
	gotest := exec.Command("go", "test", "-count=1", "-run=FuzzLeak/"+name, ".")
	gotest.Dir = dir
	if gout, err := gotest.CombinedOutput(); err != nil {
		t.Errorf("go test -run fails on the leak's input; the note says it passes:\n%s", gout)
	}
	replay := exec.Command(bin, append(args, "-cachedir", t.TempDir())...)
	replay.Dir = dir
	rout, err := replay.CombinedOutput()
	if code := exitCode(err); code != 1 || !strings.Contains(string(rout), "--- FAIL: FuzzLeak (leak") || !strings.Contains(string(rout), "crashers.go:"+fmt.Sprint(markLine(t, filepath.Join(dir, "crashers.go"), "MARK:leak"))) {
		t.Errorf("the replay %q: status %d, want 1 and the leak at its go statement\n%s", args, code, rout)
	}
}

// TestBudget: -budget ends a run that would otherwise fuzz forever, with status
// 0, once it is spent: three targets without a bug, on two workers, share it,
// each running a share of the executions (at least a tenth of them; the
// targets are alike, and each build is one of the same package).
func TestBudget(t *testing.T) {
	bin := buildFuzzls(t)
	dir := copyDir(t, "../../testdata/crashers")
	const budget = 30 * time.Second
	cmd := exec.Command(bin, "fuzz", "-json", "-run", "^FuzzNoBug(Int|Bytes)?$", "-budget", budget.String(), "-parallel", "2", "-cachedir", t.TempDir(), ".")
	cmd.Dir = dir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if code := exitCode(err); code != 0 {
		t.Fatalf("exit status %d, want 0\n%s", code, out)
	}
	if took < budget || took > budget+30*time.Second {
		t.Errorf("the run took %v, a budget of %v", took, budget)
	}
	execs := map[string]float64{}
	total := 0.0
	for line := range strings.SplitSeq(string(out), "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) == nil && ev["event"] == "done" {
			n, _ := ev["execs"].(float64)
			execs[ev["target"].(string)] = n
			total += n
		}
	}
	for _, name := range []string{"FuzzNoBug", "FuzzNoBugInt", "FuzzNoBugBytes"} {
		n, ok := execs[name]
		if !ok || n < total/10 {
			t.Errorf("%s: done %v with %.0f execs of %.0f: not its share of the budget\n%s", name, ok, n, total, out)
		}
	}
}

// fuzzSARIF runs `fuzzls fuzz -sarif FILE -cachedir DIR args...` in dir, which
// must find a failure (exit status 1), and returns its output and the SARIF file,
// validated.
func fuzzSARIF(t *testing.T, bin, dir string, args ...string) (out, data []byte) {
	t.Helper()
	sarif := filepath.Join(t.TempDir(), "fuzz.sarif")
	cmd := exec.Command(bin, append([]string{"fuzz", "-sarif", sarif, "-cachedir", t.TempDir()}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if code := exitCode(err); code != 1 {
		t.Fatalf("exit status %d, want 1\n%s", code, out)
	}
	data, err = os.ReadFile(sarif)
	if err != nil {
		t.Fatalf("no SARIF file: %v\n%s", err, out)
	}
	if err := validateSARIF(t, data); err != nil {
		t.Fatalf("SARIF does not validate: %v\n%s", err, data)
	}
	return out, data
}

// validateSARIF checks data against the SARIF 2.1.0 JSON schema (testdata,
// from OASIS; see testdata/README.md).
func validateSARIF(t *testing.T, data []byte) error {
	t.Helper()
	f, err := os.Open("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	schema, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const url = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-schema-2.1.0.json"
	if err := c.AddResource(url, schema); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(doc)
}

// markLine is the line of the first occurrence of mark in file.
func markLine(t *testing.T, file, mark string) int { return testws.Line(t, file, mark) }

// A SARIF location outside the source root (the module cache, GOROOT) is an
// absolute file URI, also for Windows paths: file:///C:/…, not file://C:/…,
// whose host would be "C:". Under Wine (scripts/wine-test.sh) with
// backslashes too.
func TestSARIFFileURL(t *testing.T) {
	cases := map[string]string{
		"/home/me/go/pkg/mod/x@v1/a b.go": "file:///home/me/go/pkg/mod/x@v1/a%20b.go",
		"C:/Users/me/go/pkg/mod/x.go":     "file:///C:/Users/me/go/pkg/mod/x.go",
		"//server/share/src/x.go":         "file://server/share/src/x.go",
	}
	if filepath.Separator == '\\' {
		cases[`C:\Users\me\go\pkg\mod\x.go`] = "file:///C:/Users/me/go/pkg/mod/x.go"
		cases[`\\server\share\src\x.go`] = "file://server/share/src/x.go"
	}
	for path, want := range cases {
		if got := fileURL(path); got != want {
			t.Errorf("fileURL(%q) = %s, want %s", path, got, want)
		}
	}
}

// TestNoFalseRed: what fails a CI run (status 1) is a failure whose input
// failed again on replay; a failure of fuzzls itself has a status of its own,
// 3, and a SARIF notification, never a result. A flaky failure (FuzzFlaky fails
// on a process's 3000th call, whatever the input) is a warning: status 0, a
// result of level warning. A cache whose scratch directory cannot be made (a
// file in its place) and one whose scratch directory is on a full disk (no
// worker can start) are fuzzls's failures.
func TestNoFalseRed(t *testing.T) {
	bin := buildFuzzls(t)
	dir := copyDir(t, "../../testdata/crashers")
	for _, tc := range []struct {
		name, target string
		cache        func(t *testing.T, cache string)
		code         int
		result       string // the one result's level; "": none
		note         string // the notification's descriptor; "": none
	}{
		{"flaky", "FuzzFlaky", func(*testing.T, string) {}, 0, "warning", ""},
		{"broken cache", "FuzzNoBug", func(t *testing.T, cache string) {
			os.WriteFile(filepath.Join(cache, "tmp"), []byte("not a directory"), 0o644)
		}, 3, "", "fuzzls/fuzzls-failure"},
		{"full disk", "FuzzNoBug", func(t *testing.T, cache string) {
			full, _ := testws.FullDisk(t, 0)
			os.Symlink(full, filepath.Join(cache, "tmp"))
		}, 3, "", "fuzzls/fuzzls-failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			tc.cache(t, cache)
			sarif := filepath.Join(t.TempDir(), "fuzz.sarif")
			cmd := exec.Command(bin, "fuzz", "-budget", "20s", "-minimizetime", "5s", "-sarif", sarif, "-cachedir", cache, "-run", "^"+tc.target+"$", ".")
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			code := exitCode(err)
			data, _ := os.ReadFile(sarif)
			if err := validateSARIF(t, data); err != nil {
				t.Errorf("SARIF does not validate: %v\n%s", err, data)
			}
			var log struct {
				Runs []struct {
					Invocations []struct {
						ExecutionSuccessful        bool
						ToolExecutionNotifications []struct {
							Descriptor struct{ ID string }
							Level      string
							Message    struct{ Text string }
						}
					}
					Results []struct{ Level string }
				}
			}
			json.Unmarshal(data, &log)
			var levels, notes []string
			success := false
			for _, r := range log.Runs {
				for _, res := range r.Results {
					levels = append(levels, res.Level)
				}
				for _, inv := range r.Invocations {
					success = inv.ExecutionSuccessful
					for _, n := range inv.ToolExecutionNotifications {
						notes = append(notes, n.Descriptor.ID)
					}
				}
			}
			wantLevels, wantNotes := []string{}, []string{}
			if tc.result != "" {
				wantLevels = append(wantLevels, tc.result)
			}
			if tc.note != "" {
				wantNotes = append(wantNotes, tc.note)
			}
			if code != tc.code || strings.Join(levels, ",") != strings.Join(wantLevels, ",") ||
				strings.Join(notes, ",") != strings.Join(wantNotes, ",") || success != (tc.note == "") {
				t.Errorf("exit status %d, results %q, notifications %q (execution successful: %v); want %d, %q, %q\n%s",
					code, levels, notes, success, tc.code, wantLevels, wantNotes, out)
			}
		})
	}
}
