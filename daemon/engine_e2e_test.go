package daemon

import (
	"os"
	"os/exec"
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

// requireEngine skips the tests that fuzz for real under -short.
func requireEngine(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("fuzzes for real")
	}
}

// The end-to-end scenario on the real binary and the real engine:
// start FuzzEval, get coverage for calc.go, get the crash diagnostic on the
// division, apply "Add input to seed corpus" and see `go test` fail on it, fix
// the bug, save, see the diagnostic go and coverage resume; then exit and
// leave no worker processes.
func TestEngineEndToEnd(t *testing.T) {
	requireEngine(t)
	dir := copyDir(t, "../testdata/calc")
	calcGo := filepath.Join(dir, "calc.go")
	testGo := filepath.Join(dir, "calc_test.go")
	divLine := lineOf(t, calcGo, "v /= w")

	p := startProcess(t)
	p.initialize(dir, map[string]any{"parallel": 1, "cacheDir": t.TempDir()})
	c := p.lspConn
	p.open(testGo)
	p.open(calcGo)
	calcURI := string(uri.File(calcGo))

	start := time.Now()
	if _, err := p.Command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(testGo)), Target: "FuzzEval"}); err != nil {
		t.Fatalf("start: %v", err)
	}
	c.await(t, "coverage for calc.go", 2*time.Minute, func() bool {
		return slices.ContainsFunc(c.coverage(), func(cp fproto.CoverageParams) bool {
			return slices.ContainsFunc(cp.Files, func(f fproto.FileCoverage) bool { return f.URI == calcURI && len(f.Covered) > 0 })
		})
	})
	t.Logf("first coverage after %v", time.Since(start))

	// Workers run now; remember them.
	workers := proc.Descendants(p.Cmd.Process.Pid)
	t.Logf("server %d has descendants %v", p.Cmd.Process.Pid, workers)

	c.await(t, "crash diagnostic on the division", 3*time.Minute, func() bool {
		return slices.ContainsFunc(c.diags(calcURI), func(d protocol.Diagnostic) bool { return d.Range.Start.Line == uint32(divLine-1) })
	})
	t.Logf("crash diagnostic after %v", time.Since(start))
	var diag protocol.Diagnostic
	c.Locked(func() {
		for _, d := range c.diags(calcURI) {
			if d.Range.Start.Line == uint32(divLine-1) {
				diag = d
			}
		}
	})
	if src, _ := diag.Source.Get(); src != "fuzzls" || diag.Severity != protocol.DiagnosticSeverityError || diag.Code != protocol.String(fproto.KindPanic) {
		t.Errorf("crash diagnostic = %+v", diag)
	}

	actions, err := p.Server.CodeAction(p.Ctx, &protocol.CodeActionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(calcGo)}, Range: diag.Range,
		Context: protocol.CodeActionContext{Diagnostics: []protocol.Diagnostic{diag}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var add *protocol.CodeAction
	for _, a := range actions {
		if ca, ok := a.(*protocol.CodeAction); ok && ca.Title == "Add input to seed corpus" {
			add = ca
		}
	}
	if add == nil || add.Edit == nil {
		t.Fatalf("no \"Add input to seed corpus\" edit in %+v", actions)
	}
	applyEdit(t, add.Edit)
	out, err := goTest(dir)
	if err == nil || !strings.Contains(out, "divide by zero") {
		t.Fatalf("go test with the seeded input: err = %v, want a failure on divide by zero:\n%s", err, out)
	}

	// Fix the bug on disk and save.
	fixed := strings.Replace(mustRead(t, calcGo), "v /= w // BUG: division by zero panics",
		"if w == 0 {\n\t\t\t\treturn 0, fmt.Errorf(\"division by zero\")\n\t\t\t}\n\t\t\tv /= w", 1)
	if err := os.WriteFile(calcGo, []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	var nCov int
	c.Locked(func() { nCov = len(c.Coverage) })
	_ = p.Server.DidChange(p.Ctx, &protocol.DidChangeTextDocumentParams{
		TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri.File(calcGo)}, Version: 2},
		ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangeWholeDocument{Text: fixed}},
	})
	saved := time.Now()
	_ = p.Server.DidSave(p.Ctx, &protocol.DidSaveTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(calcGo)}})
	c.await(t, "the crash diagnostic removed and \"FuzzEval: crash fixed\"", 2*time.Minute, func() bool {
		return !slices.ContainsFunc(c.diags(calcURI), func(d protocol.Diagnostic) bool { return d.Code == protocol.String(fproto.KindPanic) }) &&
			slices.ContainsFunc(c.messages(), func(m protocol.ShowMessageParams) bool { return m.Message == "FuzzEval: crash fixed" })
	})
	c.await(t, "coverage again after the fix", 2*time.Minute, func() bool {
		return slices.ContainsFunc(c.coverage()[nCov:], func(cp fproto.CoverageParams) bool {
			return slices.ContainsFunc(cp.Files, func(f fproto.FileCoverage) bool { return f.URI == calcURI && len(f.Covered) > 0 })
		})
	})
	t.Logf("save → coverage again: %v", time.Since(saved))
	if out, err := goTest(dir); err != nil {
		t.Errorf("go test after the fix: %v\n%s", err, out)
	}

	workers = append(workers, proc.Descendants(p.Cmd.Process.Pid)...)
	_ = p.Server.Shutdown(p.Ctx)
	_ = p.Server.Exit(p.Ctx)
	if code := p.wait(t, 30*time.Second); code != 0 {
		t.Errorf("exit code %d", code)
	}
	for _, pid := range workers {
		if proc.Alive(pid) {
			t.Errorf("worker process %d still running after the daemon exited", pid)
		}
	}
}

// The client goes away without shutdown: the daemon exits and kills its workers.
func TestEngineWorkersGoWhenClientGoes(t *testing.T) {
	requireEngine(t)
	dir := copyDir(t, "../testdata/calc")
	p := startProcess(t)
	p.initialize(dir, map[string]any{"parallel": 1, "cacheDir": t.TempDir()})
	if _, err := p.Command(fproto.CommandStart, nil); err != nil {
		t.Fatalf("start: %v", err)
	}
	c := p.lspConn
	c.await(t, "a fuzzing session", 2*time.Minute, func() bool {
		return slices.ContainsFunc(c.statuses(), func(st fproto.StatusParams) bool {
			return slices.ContainsFunc(st.Sessions, func(s fproto.SessionStatus) bool { return s.State == fproto.StateFuzzing })
		})
	})
	workers := proc.Descendants(p.Cmd.Process.Pid)
	if len(workers) == 0 {
		t.Fatal("no worker processes while fuzzing")
	}
	p.closeStdin(t, 30*time.Second)
	time.Sleep(100 * time.Millisecond)
	for _, pid := range workers {
		if proc.Alive(pid) {
			t.Errorf("process %d still running after the client went away", pid)
		}
	}
}

// TestBuildGoesWithKilledDaemon: the daemon is killed with SIGKILL in the middle
// of a build (a cold go cache: the standard library compiles for seconds); the go
// command and its compilers go with it instead of running on.
func TestBuildGoesWithKilledDaemon(t *testing.T) {
	requireEngine(t)
	dir := copyDir(t, "../testdata/calc")
	p := startProcess(t, "GOCACHE="+t.TempDir())
	p.initialize(dir, map[string]any{"parallel": 1, "cacheDir": t.TempDir()})
	if _, err := p.Command(fproto.CommandStart, nil); err != nil {
		t.Fatalf("start: %v", err)
	}
	var build []int
	compiling := func() bool {
		build = proc.Descendants(p.Cmd.Process.Pid)
		for _, pid := range build {
			if proc.Name(pid) == "compile" {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(time.Minute); !compiling(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no compiler ran")
		}
	}
	p.Cmd.Process.Kill()
	p.wait(t, 10*time.Second)
	// The guard sees its pipe close and kills the group at once; a loaded
	// machine may take a while to run it, but not ten seconds.
	alive := func() bool { return slices.ContainsFunc(build, proc.Alive) }
	for deadline := time.Now().Add(10 * time.Second); alive() && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	for _, pid := range build {
		if proc.Alive(pid) {
			t.Errorf("process %d (%s) still running 10 s after the daemon was killed", pid, proc.Name(pid))
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
		}
	}
}

func goTest(dir string) (string, error) {
	cmd := exec.Command("go", "test", "-run=FuzzEval", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// applyEdit applies the edits a fuzzls code action makes: file creations and
// text edits on new files or at explicit positions.
func applyEdit(t *testing.T, e *protocol.WorkspaceEdit) {
	t.Helper()
	for _, ch := range e.DocumentChanges {
		switch ch := ch.(type) {
		case *protocol.CreateFile:
			p := ch.URI.FsPath()
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(p); err != nil {
				if err := os.WriteFile(p, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		case *protocol.TextDocumentEdit:
			p := ch.TextDocument.URI.FsPath()
			m := newMapper(mustRead(t, p))
			text := m.text
			for i := len(ch.Edits) - 1; i >= 0; i-- {
				te := ch.Edits[i].(*protocol.TextEdit)
				s, e := m.offset(te.Range.Start), m.offset(te.Range.End)
				text = text[:s] + te.NewText + text[e:]
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The buildFlags setting reaches the package load and the build: a target
// behind //go:build integration is found, fuzzed, and its bug's diagnostic
// lands in the tagged file. Without the setting the daemon finds no such target.
func TestBuildFlagsSetting(t *testing.T) {
	requireEngine(t)
	dir := copyDir(t, "../testdata/flags")
	testGo := filepath.Join(dir, "tagged", "decode_integration_test.go")
	decodeGo := filepath.Join(dir, "tagged", "decode_integration.go")
	bugLine := lineOf(t, decodeGo, "MARK:tags")
	start := fproto.TargetArgs{URI: string(uri.File(testGo)), Target: "FuzzTagged"}

	plain := startProcess(t)
	plain.initialize(dir, map[string]any{"parallel": 1, "cacheDir": t.TempDir()})
	if _, err := plain.Command(fproto.CommandStart, start); err == nil || !strings.Contains(err.Error(), "FuzzTagged (decode_integration_test.go:7, left out by //go:build integration)") {
		t.Errorf("start without buildFlags: %v, want FuzzTagged left out by its constraint", err)
	}

	p := startProcess(t)
	p.initialize(dir, map[string]any{"parallel": 1, "cacheDir": t.TempDir(), "buildFlags": []string{"-tags=integration"}})
	p.open(decodeGo)
	if _, err := p.Command(fproto.CommandStart, start); err != nil {
		t.Fatalf("start with buildFlags: %v", err)
	}
	c := p.lspConn
	decodeURI := string(uri.File(decodeGo))
	c.await(t, "the crash diagnostic in the tagged file", 3*time.Minute, func() bool {
		return slices.ContainsFunc(c.diags(decodeURI), func(d protocol.Diagnostic) bool {
			return d.Range.Start.Line == uint32(bugLine-1) && d.Code == protocol.String(fproto.KindPanic)
		})
	})
}
