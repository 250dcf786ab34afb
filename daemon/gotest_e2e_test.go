package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"fuzzls.dev/fuzzls/internal/proc"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// TestGoTestEngineLSP: with the setting engine "gotest", starting FuzzEval
// runs go test -fuzz, and the editor gets what fuzzls's own engine gives it:
// status fuzzing (engine gotest), coverage of calc.go (go test's corpus
// replayed), and the division by zero as the diagnostic at its line, its input
// shown. Stopping a target go test still fuzzes leaves neither the go command
// nor its test binary running.
func TestGoTestEngineLSP(t *testing.T) {
	requireEngine(t)
	e := fuzzEvalWithEngine(t, fproto.EngineGoTest)
	p, c, dir, testGo, quietGo, session := e.p, e.p.lspConn, e.dir, e.testGo, e.quietGo, e.session

	// go test wrote the failing input as a seed (so "Add input to seed
	// corpus" is not offered); its corpus, replayed, seeds the corpus.
	if ents, _ := os.ReadDir(filepath.Join(dir, "testdata", "fuzz", "FuzzEval")); len(ents) != 1 {
		t.Errorf("go test's failing input: %d files in testdata/fuzz/FuzzEval, want 1", len(ents))
	}
	fuzzLine := uint32(lineOf(t, testGo, "f.Fuzz(") - 1)
	c.await(t, "\"Seed corpus from the current corpus\" on FuzzEval", time.Minute, func() bool {
		actions, err := p.Server.CodeAction(p.Ctx, &protocol.CodeActionParams{
			TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(testGo)},
			Range:        protocol.Range{Start: protocol.Position{Line: fuzzLine}, End: protocol.Position{Line: fuzzLine}},
		})
		return err == nil && slices.ContainsFunc(actions, func(a protocol.CommandOrCodeAction) bool {
			ca, ok := a.(*protocol.CodeAction)
			return ok && strings.HasPrefix(ca.Title, "Seed corpus from the current corpus (") && ca.Edit != nil
		})
	})

	// A target go test fuzzes without end, stopped.
	if _, err := p.Command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(quietGo)), Target: "FuzzQuiet"}); err != nil {
		t.Fatalf("start: %v", err)
	}
	c.await(t, "FuzzQuiet fuzzing with go test", 3*time.Minute, session("FuzzQuiet", fproto.StateFuzzing))
	var running []int
	c.await(t, "go test's test binary running", time.Minute, func() bool {
		running = proc.Descendants(p.Cmd.Process.Pid)
		return slices.ContainsFunc(running, func(pid int) bool { return proc.Name(pid) == "calc.test" })
	})
	var gotest []int
	for _, pid := range running {
		if n := proc.Name(pid); n == "go" || n == "calc.test" {
			gotest = append(gotest, pid)
		}
	}
	t.Logf("go test's processes: %v", gotest)
	if _, err := p.Command(fproto.CommandStop, fproto.TargetArgs{URI: string(uri.File(quietGo)), Target: "FuzzQuiet"}); err != nil {
		t.Fatalf("stop: %v", err)
	}
	awaitGone(t, gotest)
}

// awaitGone waits up to 10 s for the processes pids to be gone, and fails for
// each still running then.
func awaitGone(t *testing.T, pids []int) {
	t.Helper()
	alive := func() bool { return slices.ContainsFunc(pids, proc.Alive) }
	for deadline := time.Now().Add(10 * time.Second); alive() && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	for _, pid := range pids {
		if proc.Alive(pid) {
			t.Errorf("%s (%d) still running after stop", proc.Name(pid), pid)
		}
	}
}

// engineLSP is a daemon fuzzing a copy of testdata/calc with another engine,
// FuzzQuiet (which finds nothing) beside FuzzEval.
type engineLSP struct {
	p                    *process
	dir, testGo, quietGo string
	// session: the status has the target in state, fuzzed by the engine.
	session func(name, state string) func() bool
}

// fuzzEvalWithEngine starts FuzzEval with the setting engine name and checks
// that the editor gets what fuzzls's own engine gives it: status fuzzing (with
// that engine), coverage of calc.go (the engine's corpus replayed), and the
// division by zero as the diagnostic at its line, its input shown.
func fuzzEvalWithEngine(t *testing.T, name string) *engineLSP {
	t.Helper()
	dir := copyDir(t, "../testdata/calc")
	e := &engineLSP{dir: dir, testGo: filepath.Join(dir, "calc_test.go"), quietGo: filepath.Join(dir, "quiet_test.go")}
	calcGo := filepath.Join(dir, "calc.go")
	if err := os.WriteFile(e.quietGo, []byte("package calc\n\nimport \"testing\"\n\nfunc FuzzQuiet(f *testing.F) {\n\tf.Add(1)\n\tf.Fuzz(func(t *testing.T, n int) {})\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	divLine := lineOf(t, calcGo, "v /= w")

	p := startProcess(t)
	e.p = p
	p.initialize(dir, map[string]any{"parallel": 1, "cacheDir": t.TempDir(), "engine": name})
	c := p.lspConn
	p.open(e.testGo)
	p.open(calcGo)
	calcURI := string(uri.File(calcGo))
	if _, err := p.Command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(e.testGo)), Target: "FuzzEval"}); err != nil {
		t.Fatalf("start: %v", err)
	}
	e.session = func(target, state string) func() bool {
		return func() bool {
			return slices.ContainsFunc(c.statuses(), func(st fproto.StatusParams) bool {
				return slices.ContainsFunc(st.Sessions, func(s fproto.SessionStatus) bool {
					return s.Name == target && s.State == state && s.Engine == name
				})
			})
		}
	}
	c.await(t, "FuzzEval fuzzing with "+name, 3*time.Minute, e.session("FuzzEval", fproto.StateFuzzing))
	c.await(t, "coverage for calc.go", 2*time.Minute, func() bool {
		return slices.ContainsFunc(c.coverage(), func(cp fproto.CoverageParams) bool {
			return slices.ContainsFunc(cp.Files, func(f fproto.FileCoverage) bool { return f.URI == calcURI && len(f.Covered) > 0 })
		})
	})
	var diag protocol.Diagnostic
	c.await(t, "crash diagnostic on the division", 3*time.Minute, func() bool {
		i := slices.IndexFunc(c.diags(calcURI), func(d protocol.Diagnostic) bool { return d.Range.Start.Line == uint32(divLine-1) })
		if i >= 0 {
			diag = c.diags(calcURI)[i]
		}
		return i >= 0
	})
	var data fproto.CrashData
	if err := json.Unmarshal(diag.Data, &data); err != nil || diag.Code != protocol.String(fproto.KindPanic) || !strings.Contains(diagMessage(diag), "divide by zero") {
		t.Errorf("crash diagnostic = %+v (%v)", diag, err)
	}
	raw, err := p.Command(fproto.CommandShowInput, fproto.CrashArgs{Crash: data.Crash})
	var si fproto.ShowInputResult
	if err != nil || json.Unmarshal(raw, &si) != nil || !strings.HasPrefix(si.Input, "go test fuzz v1\nstring(") {
		t.Errorf("showInput = %s, %v", raw, err)
	}
	return e
}
