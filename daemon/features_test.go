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

	"fuzzls.dev/fuzzls/engine"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// calcTargets is what engine.Discover finds in a copy of testdata/calc.
func calcTargets(dir string) []engine.Target {
	return []engine.Target{{
		Package: "example.com/calc", Name: "FuzzEval", Dir: dir,
		File: filepath.Join(dir, "calc_test.go"), Line: 5,
	}}
}

// The whole feature set on a fake engine: start by command, progress, code
// lens, coverage, a crash diagnostic with hover and code actions, a save that
// rebuilds, the fix, stop.
func TestFakeEngineFlow(t *testing.T) {
	fe := &fakeEngine{}
	opts := Options{BatchDelay: 100 * time.Millisecond}
	fe.hooks(&opts)
	dir := copyDir(t, "../testdata/calc")
	fe.targets = calcTargets(dir)
	calcGo := filepath.Join(dir, "calc.go")
	testGo := filepath.Join(dir, "calc_test.go")
	p := startInProcess(t, opts)
	p.initialize(dir, map[string]any{"parallel": 1, "timeout": "3s"})
	c := p.client

	testURI := protocol.TextDocumentIdentifier{URI: uri.File(testGo)}
	lenses, err := p.server.CodeLens(p.ctx, &protocol.CodeLensParams{TextDocument: testURI})
	if err != nil || len(lenses) != 1 || lenses[0].Command.Title != "▶ Fuzz" || lenses[0].Range.Start.Line != 4 {
		t.Fatalf("code lenses before start = %+v, %v", lenses, err)
	}

	// Start with the lens's own command and argument.
	var args []protocol.LSPAny = lenses[0].Command.Arguments
	var ta fproto.TargetArgs
	if err := json.Unmarshal(args[0], &ta); err != nil {
		t.Fatal(err)
	}
	if _, err := p.command(lenses[0].Command.Command, ta); err != nil {
		t.Fatalf("start: %v", err)
	}
	fs := fe.session("FuzzEval")
	if fs == nil {
		t.Fatal("no session started")
	}
	if fe.opts.Parallel != 1 || fe.opts.Timeout != 3*time.Second || !fe.opts.KeepFuzzing {
		t.Errorf("engine options = %+v", fe.opts)
	}
	c.await(t, "build progress begin", 5*time.Second, func() bool { return slices.Contains(c.progress, "begin:Building FuzzEval") })

	// Build done; fuzzing with coverage.
	divLine := lineOf(t, calcGo, "v /= w")
	fs.set(func(s *fakeSession) {
		s.state = fproto.StateFuzzing
		s.stats = engine.Stats{Execs: 5000, ExecsPerSec: 12345, Covered: 87, Blocks: 120, Crashes: 0}
		s.blocks = []engine.Block{
			{File: calcGo, StartLine: divLine, StartCol: 3, EndLine: divLine, EndCol: 9},
			{File: calcGo, StartLine: 7, StartCol: 1, EndLine: 8, EndCol: 2},
		}
		s.hit = []bool{true, false}
	})
	fe.emit(&engine.BuildEvent{Package: "example.com/calc", Targets: []string{"FuzzEval"}, Seconds: 0.4})
	c.await(t, "build progress end", 5*time.Second, func() bool { return slices.Contains(c.progress, "end:built in 0.4s") })
	fe.emit(&engine.CoverageEvent{Target: fs.target})
	c.await(t, "coverage for calc.go", 5*time.Second, func() bool {
		for _, cp := range c.coverage {
			for _, f := range cp.Files {
				if f.URI == string(uri.File(calcGo)) && len(f.Covered) == 1 && len(f.Uncovered) == 1 {
					return true
				}
			}
		}
		return false
	})
	c.mu.Lock()
	cov := c.coverage[len(c.coverage)-1].Files[0].Covered[0]
	c.mu.Unlock()
	if cov.Start.Line != uint32(divLine-1) || cov.Start.Character != 2 || cov.End.Character != 8 {
		t.Errorf("covered range = %+v, want line %d chars 2-8", cov, divLine-1)
	}
	lenses, _ = p.server.CodeLens(p.ctx, &protocol.CodeLensParams{TextDocument: testURI})
	if len(lenses) != 1 || lenses[0].Command.Title != "■ Stop · 12.3k execs/s · 87/120 blocks" || lenses[0].Command.Command != fproto.CommandStop {
		t.Errorf("code lens while fuzzing = %+v", lenses)
	}
	c.await(t, "a code lens refresh", 5*time.Second, func() bool { return c.refreshes > 0 })

	// A crash, first unminimized.
	evalLine := lineOf(t, calcGo, "v, err := p.expr()")
	crash := &engine.Crash{
		ID: "c1", Target: fs.target, Kind: engine.KindPanic,
		Message: "runtime error: integer divide by zero",
		File:    calcGo, Line: divLine,
		Frames: []engine.Frame{
			{Function: "runtime.panicdivide", File: "/usr/lib/go/src/runtime/panic.go", Line: 10},
			{Function: "example.com/calc.(*parser).term", File: calcGo, Line: divLine},
			{Function: "example.com/calc.Eval", File: calcGo, Line: evalLine},
			{Function: "testing.tRunner", File: "/usr/lib/go/src/testing/testing.go", Line: 1},
		},
		Input: "go test fuzz v1\nstring(\"10/(5-5)+1\")\n", Count: 1,
	}
	fe.emit(&engine.CrashEvent{Crash: crash})
	calcURI := string(uri.File(calcGo))
	c.await(t, "crash diagnostic", 5*time.Second, func() bool { return len(c.diags[calcURI]) == 1 })
	c.mu.Lock()
	d := c.diags[calcURI][0]
	c.mu.Unlock()
	msg, _ := d.Message.(protocol.String)
	src, _ := d.Source.Get()
	if d.Range.Start.Line != uint32(divLine-1) || d.Severity != protocol.DiagnosticSeverityError || src != "fuzzls" ||
		d.Code != protocol.String("panic") || !strings.Contains(string(msg), "integer divide by zero") ||
		!strings.Contains(string(msg), `FuzzEval("10/(5-5)+1")`) || !strings.Contains(string(msg), "minimizing…") {
		t.Errorf("crash diagnostic = %+v (message %q)", d, msg)
	}
	if len(d.RelatedInformation) != 2 || d.RelatedInformation[0].Location.Range.Start.Line != uint32(evalLine-1) ||
		d.RelatedInformation[1].Location.URI != uri.File(testGo) || d.RelatedInformation[1].Location.Range.Start.Line != 4 {
		t.Errorf("relatedInformation = %+v", d.RelatedInformation)
	}
	var data fproto.CrashData
	if err := json.Unmarshal(d.Data, &data); err != nil || data.Crash != "c1" || data.Kind != "panic" || data.Minimized {
		t.Errorf("data = %s (%v)", d.Data, err)
	}

	// Minimized.
	min := *crash
	min.Input, min.Minimized = "go test fuzz v1\nstring(\"0/0\")\n", true
	fe.emit(&engine.CrashEvent{Crash: &min})
	c.await(t, "minimized diagnostic", 5*time.Second, func() bool {
		ds := c.diags[calcURI]
		return len(ds) == 1 && strings.Contains(string(ds[0].Message.(protocol.String)), `FuzzEval("0/0")`) &&
			!strings.Contains(string(ds[0].Message.(protocol.String)), "minimizing")
	})
	c.mu.Lock()
	d = c.diags[calcURI][0]
	c.mu.Unlock()

	// Hover.
	h, err := p.server.Hover(p.ctx, &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(calcGo)}, Position: protocol.Position{Line: uint32(divLine - 1), Character: 5},
	}})
	if err != nil || h == nil {
		t.Fatalf("hover: %v, %v", h, err)
	}
	hv := h.Contents.(*protocol.MarkupContent).Value
	seed := corpusFile(min.Input)
	name := corpusName(seed)
	for _, want := range []string{"go test fuzz v1\nstring(\"0/0\")", "example.com/calc.(*parser).term", "go test -run='^FuzzEval$/^" + name + "$'"} {
		if !strings.Contains(hv, want) {
			t.Errorf("hover lacks %q:\n%s", want, hv)
		}
	}

	// Code actions on the diagnostic.
	actions, err := p.server.CodeAction(p.ctx, &protocol.CodeActionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(calcGo)}, Range: d.Range,
		Context: protocol.CodeActionContext{Diagnostics: []protocol.Diagnostic{d}},
	})
	if err != nil {
		t.Fatal(err)
	}
	byTitle := map[string]*protocol.CodeAction{}
	for _, a := range actions {
		if ca, ok := a.(*protocol.CodeAction); ok {
			byTitle[ca.Title] = ca
		}
	}
	add := byTitle["Add input to seed corpus"]
	if add == nil || add.Edit == nil || len(add.Edit.DocumentChanges) != 2 {
		t.Fatalf("code actions = %v", actions)
	}
	create := add.Edit.DocumentChanges[0].(*protocol.CreateFile)
	wantSeed := filepath.Join(dir, "testdata", "fuzz", "FuzzEval", name)
	if create.URI != uri.File(wantSeed) || len(name) != 16 {
		t.Errorf("creates %s, want %s", create.URI, wantSeed)
	}
	te := add.Edit.DocumentChanges[1].(*protocol.TextDocumentEdit)
	if got := te.Edits[0].(*protocol.TextEdit).NewText; got != string(seed) {
		t.Errorf("seed file text %q, want %q", got, seed)
	}
	// Apply it as a client would and check the file's name is go test's.
	if err := os.MkdirAll(filepath.Dir(wantSeed), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wantSeed, seed, 0o644); err != nil {
		t.Fatal(err)
	}

	fadd := byTitle["Add as f.Add(…) to FuzzEval"]
	if fadd == nil {
		t.Fatalf("no f.Add action in %v", actions)
	}
	edits := fadd.Edit.Changes[uri.File(testGo)]
	fuzzLine := lineOf(t, testGo, "f.Fuzz(")
	if len(edits) != 1 || edits[0].NewText != "\tf.Add(string(\"0/0\"))\n" || edits[0].Range.Start != (protocol.Position{Line: uint32(fuzzLine - 1)}) {
		t.Errorf("f.Add edit = %+v", edits)
	}

	// The command form of "add to corpus" writes the file itself (atomically).
	os.RemoveAll(filepath.Join(dir, "testdata"))
	res, err := p.command(fproto.CommandAddToCorpus, fproto.CrashArgs{Crash: "c1"})
	if err != nil {
		t.Fatalf("addToCorpus: %v", err)
	}
	if got, err := os.ReadFile(wantSeed); err != nil || string(got) != string(seed) {
		t.Errorf("addToCorpus wrote %q (%v); result %s", got, err, res)
	}
	if _, err := p.command(fproto.CommandAddSeed, fproto.CrashArgs{Crash: "c1"}); err != nil {
		t.Errorf("addSeed: %v", err)
	}
	c.await(t, "applyEdit from fuzzls.addSeed", 5*time.Second, func() bool { return len(c.applied) == 1 })
	raw, err := p.command(fproto.CommandShowInput, fproto.CrashArgs{Crash: "c1"})
	var si fproto.ShowInputResult
	if err != nil || json.Unmarshal(raw, &si) != nil || si.Input != string(seed) {
		t.Errorf("showInput = %s, %v", raw, err)
	}

	// "Seed corpus from the current corpus" on a line of the target.
	fs.set(func(s *fakeSession) {
		s.seeds = []string{"go test fuzz v1\nstring(\"1\")\n", "go test fuzz v1\nstring(\"(2)\")\n"}
	})
	actions, _ = p.server.CodeAction(p.ctx, &protocol.CodeActionParams{
		TextDocument: testURI, Range: protocol.Range{Start: protocol.Position{Line: 6}, End: protocol.Position{Line: 6}},
	})
	if len(actions) != 1 || !strings.HasPrefix(actions[0].(*protocol.CodeAction).Title, "Seed corpus from the current corpus") ||
		len(actions[0].(*protocol.CodeAction).Edit.DocumentChanges) != 4 {
		t.Errorf("seed actions = %+v", actions)
	}

	// A save of calc.go rebuilds the session (once, however many events).
	if err := os.WriteFile(calcGo, []byte(strings.Replace(mustRead(t, calcGo), "v /= w // BUG: division by zero panics", "if w == 0 {\n\t\t\t\treturn 0, fmt.Errorf(\"division by zero\")\n\t\t\t}\n\t\t\tv /= w", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = p.server.DidSave(p.ctx, &protocol.DidSaveTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(calcGo)}})
	deadline := time.Now().Add(5 * time.Second)
	for fs.rebuildCount() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	if n := fs.rebuildCount(); n != 1 {
		t.Errorf("rebuilds after one save = %d, want 1", n)
	}
	fe.emit(&engine.BuildEvent{Package: "example.com/calc", Seconds: 0.2})
	fe.emit(&engine.CrashFixedEvent{Crash: &min})
	c.await(t, "diagnostic removed and showMessage", 5*time.Second, func() bool {
		return len(c.diags[calcURI]) == 0 && slices.ContainsFunc(c.messages, func(m protocol.ShowMessageParams) bool {
			return m.Message == "FuzzEval: crash fixed"
		})
	})

	// A build error becomes a diagnostic on its line, and goes with the next build.
	fe.emit(&engine.BuildEvent{Package: "example.com/calc", Err: &engine.BuildError{
		Package:     "example.com/calc",
		Diagnostics: []engine.Diagnostic{{File: calcGo, Line: 4, Col: 9, Message: "undefined: fmtx"}},
		Output:      "calc.go:4:9: undefined: fmtx",
	}})
	c.await(t, "build error diagnostic", 5*time.Second, func() bool {
		ds := c.diags[calcURI]
		return len(ds) == 1 && ds[0].Code == protocol.String("build") && ds[0].Range == protocol.Range{Start: protocol.Position{Line: 3, Character: 8}, End: protocol.Position{Line: 3, Character: 12}}
	})
	fe.emit(&engine.BuildEvent{Package: "example.com/calc", Seconds: 0.2})
	c.await(t, "build error cleared", 5*time.Second, func() bool { return len(c.diags[calcURI]) == 0 })

	st := p.status()
	if len(st.Sessions) != 1 || st.Sessions[0].Name != "FuzzEval" || st.Sessions[0].State != fproto.StateFuzzing || st.Sessions[0].Blocks != 120 {
		t.Errorf("status = %+v", st)
	}
	if _, err := p.command(fproto.CommandStop, ta); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if !fs.isStopped() {
		t.Error("session not stopped")
	}
	if st := p.status(); len(st.Sessions) != 0 {
		t.Errorf("status after stop = %+v", st)
	}
}

// Coverage ranges of a file with unsaved edits are dropped until the next build.
func TestCoverageDroppedWhileEdited(t *testing.T) {
	fe := &fakeEngine{}
	opts := Options{}
	fe.hooks(&opts)
	dir := copyDir(t, "../testdata/calc")
	fe.targets = calcTargets(dir)
	calcGo := filepath.Join(dir, "calc.go")
	p := startInProcess(t, opts)
	p.initialize(dir, nil)
	if _, err := p.command(fproto.CommandStart, nil); err != nil {
		t.Fatal(err)
	}
	fs := fe.session("FuzzEval")
	fs.set(func(s *fakeSession) {
		s.state = fproto.StateFuzzing
		s.blocks = []engine.Block{{File: calcGo, StartLine: 7, StartCol: 1, EndLine: 8, EndCol: 2}}
		s.hit = []bool{true}
	})
	fe.emit(&engine.BuildEvent{Package: "example.com/calc"})
	p.open(calcGo) // opening sends the coverage
	c := p.client
	count := func(want int) func() bool {
		return func() bool {
			if len(c.coverage) == 0 {
				return false
			}
			last := c.coverage[len(c.coverage)-1]
			return len(last.Files) == 1 && len(last.Files[0].Covered) == want
		}
	}
	c.await(t, "coverage with ranges", 5*time.Second, count(1))
	_ = p.server.DidChange(p.ctx, &protocol.DidChangeTextDocumentParams{
		TextDocument: protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri.File(calcGo)}, Version: 2},
		ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangePartial{
			Range: protocol.Range{Start: protocol.Position{Line: 0}, End: protocol.Position{Line: 0}}, Text: "// edited\n",
		}},
	})
	c.await(t, "coverage without ranges after an edit", 5*time.Second, count(0))
	_ = p.server.DidSave(p.ctx, &protocol.DidSaveTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(calcGo)}})
	time.Sleep(10 * time.Millisecond)
	fe.emit(&engine.BuildEvent{Package: "example.com/calc"})
	c.await(t, "coverage with ranges after the rebuild", 5*time.Second, count(1))
}

func TestAutoStartOpenFiles(t *testing.T) {
	fe := &fakeEngine{}
	opts := Options{}
	fe.hooks(&opts)
	dir := copyDir(t, "../testdata/calc")
	fe.targets = calcTargets(dir)
	p := startInProcess(t, opts)
	p.initialize(dir, map[string]any{"fuzzls": map[string]any{"autoStart": "openFiles"}})
	p.open(filepath.Join(dir, "calc_test.go"))
	p.client.await(t, "a session in fuzzls/status", 5*time.Second, func() bool {
		return len(p.client.status) > 0 && len(p.client.status[len(p.client.status)-1].Sessions) == 1
	})
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
