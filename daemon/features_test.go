package daemon

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
	"fuzzls.dev/fuzzls/internal/testws"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// The feature tests run the real engine in process (Serve over pipes, the real
// client side) on copies of testdata/calc, whose FuzzEval finds the division
// by zero within seconds.

// calcWorkspace is a copy of testdata/calc with a server on it.
type calcWorkspace struct {
	*inProcess
	dir, calcGo, testGo string
	calcURI, testURI    uri.URI
	divLine             int // 1-based line of the division by zero
}

// startCalc copies testdata/calc, starts an in-process server with the real
// engine (one worker, a cache of the test's own) and initializes it.
func startCalc(t *testing.T, opts Options, initOpts map[string]any) *calcWorkspace {
	t.Helper()
	return startCalcWith(t, opts, initOpts, nil)
}

// startCalcWith is startCalc with the client capabilities changed by caps.
func startCalcWith(t *testing.T, opts Options, initOpts map[string]any, caps func(*protocol.ClientCapabilities)) *calcWorkspace {
	t.Helper()
	requireEngine(t)
	dir := copyDir(t, "../testdata/calc")
	all := map[string]any{"parallel": 1, "cacheDir": t.TempDir()}
	for k, v := range initOpts {
		all[k] = v
	}
	if opts.BatchDelay == 0 {
		opts.BatchDelay = 100 * time.Millisecond
	}
	w := &calcWorkspace{
		dir: dir, calcGo: filepath.Join(dir, "calc.go"), testGo: filepath.Join(dir, "calc_test.go"),
	}
	w.calcURI, w.testURI = uri.File(w.calcGo), uri.File(w.testGo)
	w.divLine = lineOf(t, w.calcGo, "v /= w")
	w.inProcess = startInProcess(t, opts) // after the temporary directories: it stops first
	w.initializeWith(dir, all, caps)
	return w
}

func (w *calcWorkspace) start(t *testing.T) {
	t.Helper()
	if _, err := w.Command(fproto.CommandStart, fproto.TargetArgs{URI: string(w.testURI), Target: "FuzzEval"}); err != nil {
		t.Fatalf("start: %v", err)
	}
}

// awaitState waits for a fuzzls/status notification with FuzzEval in state,
// after the n-th notification.
func (w *calcWorkspace) awaitState(t *testing.T, n int, state string) fproto.SessionStatus {
	t.Helper()
	c := w.lspConn
	var got fproto.SessionStatus
	c.await(t, "FuzzEval "+state+" in fuzzls/status", 90*time.Second, func() bool {
		for _, st := range c.statuses()[min(n, len(c.Status)):] {
			for _, s := range st.Sessions {
				if s.Name == "FuzzEval" && s.State == state {
					got = s
					return true
				}
			}
		}
		return false
	})
	return got
}

// awaitDiag waits for a diagnostic of file (a URI) for which ok holds.
func (w *calcWorkspace) awaitDiag(t *testing.T, what string, file uri.URI, ok func(protocol.Diagnostic) bool) protocol.Diagnostic {
	t.Helper()
	var got protocol.Diagnostic
	w.lspConn.await(t, what, 90*time.Second, func() bool {
		for _, d := range w.lspConn.diags(string(file)) {
			if ok(d) {
				got = d
				return true
			}
		}
		return false
	})
	return got
}

func diagMessage(d protocol.Diagnostic) string { m, _ := d.Message.(protocol.String); return string(m) }

func (w *calcWorkspace) lenses(t *testing.T) []protocol.CodeLens {
	t.Helper()
	lenses, err := w.Server.CodeLens(w.Ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: w.testURI}})
	if err != nil {
		t.Fatalf("codeLens: %v", err)
	}
	return lenses
}

// The crash of calc's FuzzEval through every feature that shows it: the code
// lens starts it and shows the session, the crash diagnostic (content,
// relatedInformation, data; updated when minimized), hover, both code actions
// and the corpus code action, the commands, fuzzls/status, stop.
func TestCrashFeatures(t *testing.T) {
	w := startCalc(t, Options{}, map[string]any{"timeout": "3s"})
	c := w.lspConn

	lenses := w.lenses(t)
	if len(lenses) != 1 || lenses[0].Command.Title != "▶ Fuzz" || lenses[0].Range.Start.Line != 4 || lenses[0].Command.Command != fproto.CommandStart {
		t.Fatalf("code lenses before start = %+v", lenses)
	}
	// Start with the lens's own command and argument.
	var ta fproto.TargetArgs
	if err := json.Unmarshal(lenses[0].Command.Arguments[0], &ta); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Command(lenses[0].Command.Command, ta); err != nil {
		t.Fatalf("start: %v", err)
	}
	c.await(t, "build progress begin", 10*time.Second, func() bool { return slices.Contains(c.progress(), "begin:Building FuzzEval") })

	// The crash, first unminimized (the first report always is).
	d := w.awaitDiag(t, "the crash diagnostic on the division", w.calcURI, func(d protocol.Diagnostic) bool { return d.Range.Start.Line == uint32(w.divLine-1) })
	msg := diagMessage(d)
	src, _ := d.Source.Get()
	if d.Severity != protocol.DiagnosticSeverityError || src != "fuzzls" || d.Code != protocol.String(fproto.KindPanic) ||
		!strings.HasPrefix(msg, "runtime error: integer divide by zero\nFuzzEval(") || d.Range.Start.Character != 3 {
		t.Errorf("crash diagnostic = %+v (message %q)", d, msg)
	}
	var progress []string
	c.Locked(func() { progress = c.progress() })
	if !slices.ContainsFunc(progress, func(p string) bool { return strings.HasPrefix(p, "end:built in ") }) {
		t.Errorf("progress = %q, want an end \"built in …\"", progress)
	}

	// Minimized: the diagnostic is updated in place.
	d = w.awaitDiag(t, "the minimized crash diagnostic", w.calcURI, func(d protocol.Diagnostic) bool {
		return d.Range.Start.Line == uint32(w.divLine-1) && !strings.Contains(diagMessage(d), "minimizing")
	})
	var data fproto.CrashData
	if err := json.Unmarshal(d.Data, &data); err != nil || data.Crash == "" || data.Kind != fproto.KindPanic || !data.Minimized ||
		data.Target != (fproto.TargetID{Package: "example.com/calc", Name: "FuzzEval"}) || !strings.HasPrefix(data.Input, "go test fuzz v1\nstring(") {
		t.Errorf("data = %s (%v)", d.Data, err)
	}
	// relatedInformation: the other frames in the workspace (Eval's call of
	// p.expr() among them), then the target.
	evalLine := lineOf(t, w.calcGo, "v, err := p.expr()")
	ri := d.RelatedInformation
	if len(ri) < 2 || !slices.ContainsFunc(ri, func(r protocol.DiagnosticRelatedInformation) bool {
		return r.Location.URI == w.calcURI && r.Location.Range.Start.Line == uint32(evalLine-1) && r.Message == "called from calc.Eval"
	}) || ri[len(ri)-1].Location.URI != w.testURI || ri[len(ri)-1].Location.Range.Start.Line != 4 || ri[len(ri)-1].Message != "fuzz target FuzzEval" {
		t.Errorf("relatedInformation = %+v", ri)
	}
	input := data.Input
	seed := corpusFile(input)
	name := fuzzrt.FileName(seed)

	// Hover on the crash line.
	h, err := w.Server.Hover(w.Ctx, &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: w.calcURI}, Position: protocol.Position{Line: uint32(w.divLine - 1), Character: 5},
	}})
	if err != nil || h == nil {
		t.Fatalf("hover: %v, %v", h, err)
	}
	hv := h.Contents.(*protocol.MarkupContent).Value
	for _, want := range []string{"**FuzzEval: panic** (minimized", strings.TrimRight(input, "\n"), "example.com/calc.(*parser).term\n\t" + w.calcGo + ":" + fmt.Sprint(w.divLine),
		"go test -run=FuzzEval/" + name} {
		if !strings.Contains(hv, want) {
			t.Errorf("hover lacks %q:\n%s", want, hv)
		}
	}

	// Code actions on the diagnostic.
	actions, err := w.Server.CodeAction(w.Ctx, &protocol.CodeActionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: w.calcURI}, Range: d.Range,
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
	wantSeed := filepath.Join(w.dir, "testdata", "fuzz", "FuzzEval", name)
	add := byTitle["Add input to seed corpus"]
	if add == nil || add.Edit == nil || len(add.Edit.DocumentChanges) != 2 {
		t.Fatalf("code actions = %+v", actions)
	}
	if create, ok := add.Edit.DocumentChanges[0].(*protocol.CreateFile); !ok || create.URI != uri.File(wantSeed) || len(name) != 16 {
		t.Errorf("first change %+v, want creating %s", add.Edit.DocumentChanges[0], wantSeed)
	}
	if te, ok := add.Edit.DocumentChanges[1].(*protocol.TextDocumentEdit); !ok || te.Edits[0].(*protocol.TextEdit).NewText != string(seed) {
		t.Errorf("second change %+v, want the text %q", add.Edit.DocumentChanges[1], seed)
	}
	fadd := byTitle["Add as f.Add(…) to FuzzEval"]
	if fadd == nil || fadd.Edit == nil {
		t.Fatalf("no f.Add action in %+v", actions)
	}
	edits := fadd.Edit.Changes[w.testURI]
	fuzzLine := lineOf(t, w.testGo, "f.Fuzz(")
	if len(edits) != 1 || edits[0].NewText != "\tf.Add("+inputArgs(input)[0]+")\n" || edits[0].Range.Start != (protocol.Position{Line: uint32(fuzzLine - 1)}) {
		t.Errorf("f.Add edit = %+v", edits)
	}

	// On a line of the running target: seed the corpus from the current corpus.
	actions, err = w.Server.CodeAction(w.Ctx, &protocol.CodeActionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: w.testURI}, Range: protocol.Range{Start: protocol.Position{Line: 6}, End: protocol.Position{Line: 6}},
	})
	if err != nil || len(actions) != 1 || !strings.HasPrefix(actions[0].(*protocol.CodeAction).Title, "Seed corpus from the current corpus (") ||
		len(actions[0].(*protocol.CodeAction).Edit.DocumentChanges) < 2 {
		t.Errorf("seed corpus actions = %+v, %v", actions, err)
	}

	// The code lens and fuzzls/status while fuzzing.
	c.await(t, "a code lens refresh", 10*time.Second, func() bool { return c.Refreshes > 0 })
	lenses = w.lenses(t)
	if len(lenses) != 1 || lenses[0].Command.Command != fproto.CommandStop || !strings.HasPrefix(lenses[0].Command.Title, "■ Stop · ") ||
		!strings.Contains(lenses[0].Command.Title, " execs/s · ") || !strings.HasSuffix(lenses[0].Command.Title, " · 1 crash") {
		t.Errorf("code lens while fuzzing = %+v", lenses)
	}
	st := w.status()
	if len(st.Sessions) != 1 || st.Sessions[0].Name != "FuzzEval" || st.Sessions[0].Package != "example.com/calc" || st.Sessions[0].State != fproto.StateFuzzing ||
		st.Sessions[0].Blocks == 0 || st.Sessions[0].Covered == 0 || st.Sessions[0].Crashes != 1 || st.Sessions[0].URI != string(w.testURI) {
		t.Errorf("status = %+v", st)
	}

	// The commands.
	raw, err := w.Command(fproto.CommandShowInput, fproto.CrashArgs{Crash: data.Crash})
	var si fproto.ShowInputResult
	if err != nil || json.Unmarshal(raw, &si) != nil || si.Input != string(seed) {
		t.Errorf("showInput = %s, %v", raw, err)
	}
	if _, err := w.Command(fproto.CommandAddSeed, fproto.CrashArgs{Crash: data.Crash}); err != nil {
		t.Errorf("addSeed: %v", err)
	}
	c.await(t, "applyEdit from fuzzls.addSeed", 10*time.Second, func() bool { return len(c.Applied) == 1 })
	if _, err := w.Command(fproto.CommandAddToCorpus, fproto.CrashArgs{Crash: data.Crash}); err != nil {
		t.Fatalf("addToCorpus: %v", err)
	}
	if got, err := os.ReadFile(wantSeed); err != nil || string(got) != string(seed) {
		t.Errorf("addToCorpus wrote %q (%v), want %q in %s", got, err, seed, wantSeed)
	}

	// Stop with the lens's command.
	if err := json.Unmarshal(lenses[0].Command.Arguments[0], &ta); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Command(lenses[0].Command.Command, ta); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if st := w.status(); len(st.Sessions) != 0 {
		t.Errorf("status after stop = %+v", st)
	}
	if lenses := w.lenses(t); len(lenses) != 1 || lenses[0].Command.Title != "▶ Fuzz" {
		t.Errorf("code lens after stop = %+v", lenses)
	}
	// The crash stays known after the session stopped.
	if h, err := w.Server.Hover(w.Ctx, &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: w.calcURI}, Position: protocol.Position{Line: uint32(w.divLine - 1)},
	}}); err != nil || h == nil {
		t.Errorf("hover after stop = %v, %v", h, err)
	}
}

// A save that does not compile gives build diagnostics (source fuzzls, code
// "build") on the offending line and the session waits; the next good save
// clears them, a fix of the bug removes the crash diagnostic with "FuzzEval:
// crash fixed", and fuzzing resumes.
func TestBuildErrorThenFix(t *testing.T) {
	w := startCalc(t, Options{}, nil)
	c := w.lspConn
	w.start(t)
	w.awaitDiag(t, "the crash diagnostic", w.calcURI, func(d protocol.Diagnostic) bool { return d.Code == protocol.String(fproto.KindPanic) })

	good := mustRead(t, w.calcGo)
	badLine := lineOf(t, w.calcGo, `return 0, fmt.Errorf("unexpected %q at %d"`)
	bad := strings.Replace(good, `return 0, fmt.Errorf("unexpected %q at %d"`, `return 0, fmtx.Errorf("unexpected %q at %d"`, 1)
	n := c.statusCount()
	w.save(t, w.calcGo, bad)
	bd := w.awaitDiag(t, "a build diagnostic", w.calcURI, func(d protocol.Diagnostic) bool { return d.Code == protocol.String("build") })
	col := strings.Index(strings.Split(bad, "\n")[badLine-1], "fmtx")
	if src, _ := bd.Source.Get(); src != "fuzzls" || bd.Severity != protocol.DiagnosticSeverityError || bd.Range.Start != (protocol.Position{Line: uint32(badLine - 1), Character: uint32(col)}) ||
		!strings.Contains(diagMessage(bd), "undefined: fmtx") {
		t.Errorf("build diagnostic = %+v (%q), want undefined: fmtx at %d:%d", bd, diagMessage(bd), badLine-1, col)
	}
	ss := w.awaitState(t, n, fproto.StateError)
	if want := fmt.Sprintf("calc.go:%d:%d: undefined: fmtx", badLine, col+1); ss.Message != want {
		t.Errorf("status message = %q, want %q", ss.Message, want)
	}
	if lenses := w.lenses(t); len(lenses) != 1 || lenses[0].Command.Title != "■ Stop · build failed" {
		t.Errorf("code lens after a build error = %+v", lenses)
	}
	c.Locked(func() {
		for _, m := range c.messages() {
			if m.Type == protocol.MessageTypeError {
				t.Errorf("showMessage on a build error with diagnostics: %+v", m)
			}
		}
	})

	// Fix the build and the bug in one save.
	fixed := strings.Replace(good, "v /= w // BUG: division by zero panics",
		"if w == 0 {\n\t\t\t\treturn 0, fmt.Errorf(\"division by zero\")\n\t\t\t}\n\t\t\tv /= w", 1)
	n = c.statusCount()
	w.save(t, w.calcGo, fixed)
	c.await(t, "no diagnostics and \"FuzzEval: crash fixed\"", 90*time.Second, func() bool {
		return len(c.diags(string(w.calcURI))) == 0 && slices.ContainsFunc(c.messages(), func(m protocol.ShowMessageParams) bool {
			return m.Message == "FuzzEval: crash fixed" && m.Type == protocol.MessageTypeInfo
		})
	})
	if ss := w.awaitState(t, n, fproto.StateFuzzing); ss.Message != "" {
		t.Errorf("status after the fix = %+v", ss)
	}
}

// Coverage ranges of a file with unsaved edits are dropped until the next
// build; the build of the saved text brings them back, on the moved lines.
func TestCoverageDroppedWhileEdited(t *testing.T) {
	w := startCalc(t, Options{}, nil)
	c := w.lspConn
	text := mustRead(t, w.calcGo)
	w.openText(w.calcGo, text)
	w.start(t)
	// fileCov returns the block start lines of calc.go in the i-th notification
	// and whether it has any covered range.
	fileCov := func(i int) (lines []uint32, covered, ok bool) {
		for _, f := range c.Coverage[i].V.Files {
			if f.URI == string(w.calcURI) {
				for _, r := range append(slices.Clone(f.Covered), f.Uncovered...) {
					lines = append(lines, r.Start.Line)
				}
				slices.Sort(lines)
				return lines, len(f.Covered) > 0, true
			}
		}
		return nil, false, false
	}
	var before []uint32
	c.await(t, "coverage of calc.go", 90*time.Second, func() bool {
		for i := range c.Coverage {
			if ls, cov, ok := fileCov(i); ok && cov {
				before = ls
				return true
			}
		}
		return false
	})
	// Eval's body (its block starts at the brace) is reached by every input.
	if l := uint32(lineOf(t, w.calcGo, "func Eval(") - 1); !slices.Contains(before, l) {
		t.Errorf("block lines %v lack line %d", before, l)
	}

	var n int
	c.Locked(func() { n = len(c.Coverage) })
	edited := "// edited\n" + text
	if err := w.Server.DidChange(w.Ctx, &protocol.DidChangeTextDocumentParams{
		TextDocument: protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: w.calcURI}, Version: 2},
		ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangePartial{
			Range: protocol.Range{Start: protocol.Position{Line: 0}, End: protocol.Position{Line: 0}}, Text: "// edited\n",
		}},
	}); err != nil {
		t.Fatal(err)
	}
	c.await(t, "coverage of calc.go without ranges after the edit", 30*time.Second, func() bool {
		for i := n; i < len(c.Coverage); i++ {
			if ls, _, ok := fileCov(i); ok && len(ls) == 0 {
				n = i + 1
				return true
			}
		}
		return false
	})
	w.save(t, w.calcGo, edited)
	want := make([]uint32, len(before))
	for i, l := range before {
		want[i] = l + 1
	}
	c.await(t, "coverage of the saved text's build", 90*time.Second, func() bool {
		for i := n; i < len(c.Coverage); i++ {
			if ls, cov, ok := fileCov(i); ok && cov && slices.Equal(ls, want) {
				return true
			}
			if ls, _, ok := fileCov(i); ok && len(ls) > 0 && !slices.Equal(ls, want) {
				t.Errorf("coverage after the edit with lines %v, want none or %v", ls, want)
			}
		}
		return false
	})
}

func TestAutoStartOpenFiles(t *testing.T) {
	w := startCalc(t, Options{}, map[string]any{"fuzzls": map[string]any{"autoStart": "openFiles"}})
	w.open(w.calcGo) // not a test file: nothing starts
	w.open(w.testGo)
	ss := w.awaitState(t, 0, fproto.StateFuzzing)
	if ss.Package != "example.com/calc" || ss.URI != string(w.testURI) {
		t.Errorf("session = %+v", ss)
	}
	if st := w.status(); len(st.Sessions) != 1 {
		t.Errorf("status = %+v, want one session", st)
	}
}

// When fsnotify cannot watch (here: its constructor fails as it does at the
// inotify instance limit, a fault the test cannot cause without starving
// everything else on the machine), the user is told and the daemon registers
// for the client's workspace/didChangeWatchedFiles; a file event from the
// client then rebuilds the session, and nothing else does.
func TestClientFileEventsWhenWatcherFails(t *testing.T) {
	limit := fmt.Errorf("inotify_init1: %w", syscall.EMFILE)
	w := startCalcWith(t, Options{newFSWatcher: func() (*fsnotify.Watcher, error) { return nil, limit }}, nil,
		func(caps *protocol.ClientCapabilities) {
			yes := true
			caps.Workspace.DidChangeWatchedFiles = &protocol.DidChangeWatchedFilesClientCapabilities{DynamicRegistration: &yes}
		})
	c := w.lspConn
	c.await(t, "registration for workspace/didChangeWatchedFiles", 10*time.Second, func() bool {
		return slices.ContainsFunc(c.Registered, func(r protocol.Registration) bool { return r.Method == "workspace/didChangeWatchedFiles" })
	})
	var reg protocol.Registration
	var warned bool
	var messages []protocol.ShowMessageParams
	c.Locked(func() {
		for _, r := range c.Registered {
			if r.Method == "workspace/didChangeWatchedFiles" {
				reg = r
			}
		}
		messages = c.messages()
		warned = slices.ContainsFunc(messages, func(m protocol.ShowMessageParams) bool {
			return m.Type == protocol.MessageTypeWarning && strings.Contains(m.Message, "inotify limits") && strings.Contains(m.Message, "using the editor's file events instead")
		})
	})
	raw, _ := json.Marshal(reg.RegisterOptions)
	if !strings.Contains(string(raw), `**/*.{go,mod,sum,work}`) || !strings.Contains(string(raw), `**/testdata/fuzz/**`) {
		t.Errorf("registration options = %s", raw)
	}
	if !warned {
		t.Errorf("no warning about the watcher in %+v", messages)
	}

	w.start(t)
	w.awaitState(t, 0, fproto.StateFuzzing)
	rebuilds := func() (n int) {
		c.Locked(func() {
			for _, p := range c.progress() {
				if p == "begin:Rebuilding FuzzEval" {
					n++
				}
			}
		})
		return n
	}
	// Written on disk without didSave: with no watcher nothing notices.
	edited := "// edited\n" + mustRead(t, w.calcGo)
	if err := os.WriteFile(w.calcGo, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if n := rebuilds(); n != 0 {
		t.Fatalf("%d rebuilds without a file event: is fsnotify still watching?", n)
	}
	n := c.statusCount()
	if err := w.Server.DidChangeWatchedFiles(w.Ctx, &protocol.DidChangeWatchedFilesParams{Changes: []protocol.FileEvent{
		{URI: w.calcURI, Type: protocol.FileChangeTypeChanged},
	}}); err != nil {
		t.Fatal(err)
	}
	c.await(t, "a rebuild", 30*time.Second, func() bool { return slices.Contains(c.progress(), "begin:Rebuilding FuzzEval") })
	c.await(t, "the rebuild's end", 90*time.Second, func() bool {
		return slices.ContainsFunc(c.progress(), func(p string) bool { return strings.HasPrefix(p, "end:built in ") })
	})
	w.awaitState(t, n, fproto.StateFuzzing)
	if n := rebuilds(); n != 1 {
		t.Errorf("%d rebuilds after one file event, want 1", n)
	}
}

// TestCoverageOfOpenDependency: a dependency outside the workspace (a replace
// directory beside it; the module cache is the same case) or another package
// of the workspace is instrumented, and its file gets highlights once the
// client opens it ("go to definition"), not before: a big repository's build
// has thousands of such files. fuzzls.coverage answers them all at any time.
func TestCoverageOfOpenDependency(t *testing.T) {
	requireEngine(t)
	for _, inside := range []bool{false, true} {
		t.Run(fmt.Sprintf("inWorkspace=%v", inside), func(t *testing.T) {
			root := testws.Txtar(t, "testdata/opendep.txtar")
			app, depGo := filepath.Join(root, "app"), filepath.Join(root, "dep", "dep.go")
			depURI := string(uri.File(depGo))
			ws := app
			if inside {
				ws = root
			}
			p := startInProcess(t, Options{BatchDelay: 100 * time.Millisecond})
			p.initialize(ws, map[string]any{"parallel": 1, "cacheDir": t.TempDir()})
			if _, err := p.Command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(filepath.Join(app, "app_test.go"))), Target: "FuzzParse"}); err != nil {
				t.Fatalf("start: %v", err)
			}
			c := p.lspConn
			depCovered := func(files []fproto.FileCoverage) (named, covered bool) {
				for _, f := range files {
					if f.URI == depURI {
						named, covered = true, covered || len(f.Covered) > 0
					}
				}
				return named, covered
			}
			var n int
			c.await(t, "a coverage notification with app's file", 90*time.Second, func() bool {
				n = len(c.Coverage)
				return n > 0 && len(c.coverage()[n-1].Files) > 0
			})
			c.Locked(func() {
				for _, cp := range c.coverage() {
					if named, _ := depCovered(cp.Files); named {
						t.Errorf("dep.go, in another package and not open, was sent")
					}
				}
			})
			raw, err := p.Command(fproto.CommandCoverage, fproto.TargetID{Package: "example.com/app", Name: "FuzzParse"})
			if err != nil {
				t.Fatalf("fuzzls.coverage: %v", err)
			}
			var all fproto.CoverageParams
			if err := json.Unmarshal(raw, &all); err != nil {
				t.Fatal(err)
			}
			if named, covered := depCovered(all.Files); named != inside || named && !covered {
				t.Errorf("fuzzls.coverage: dep.go named %v, covered %v; want named (and covered) only inside the workspace", named, covered)
			}
			p.open(depGo)
			c.await(t, "coverage of dep.go once open", 30*time.Second, func() bool {
				for _, cp := range c.coverage()[n:] {
					if _, covered := depCovered(cp.Files); covered {
						return true
					}
				}
				return false
			})
		})
	}
}

// TestProcessExitReachesEditor: a failure that ends the worker through the exit
// hook (os.Exit, log.Fatal), whose innermost frame is fuzzls's generated harness,
// is a diagnostic at the user's call, as any other failure.
func TestProcessExitReachesEditor(t *testing.T) {
	requireEngine(t)
	dir := copyDir(t, "../testdata/crashers")
	srcGo, testGo := filepath.Join(dir, "crashers.go"), filepath.Join(dir, "crashers_test.go")
	p := startInProcess(t, Options{BatchDelay: 100 * time.Millisecond})
	p.initializeWith(dir, map[string]any{"parallel": 1, "cacheDir": t.TempDir(), "keepFuzzing": true}, nil)
	p.open(testGo)
	for _, tc := range []struct{ target, mark string }{
		{"FuzzExit", "MARK:exit"},
		{"FuzzLogFatal", "MARK:logfatal"},
	} {
		if _, err := p.Command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(testGo)), Target: tc.target}); err != nil {
			t.Fatalf("start %s: %v", tc.target, err)
		}
		line := uint32(lineOf(t, srcGo, tc.mark) - 1)
		p.lspConn.await(t, tc.target+"'s exit as a diagnostic at "+tc.mark, 90*time.Second, func() bool {
			return slices.ContainsFunc(p.lspConn.diags(string(uri.File(srcGo))), func(d protocol.Diagnostic) bool {
				return d.Range.Start.Line == line && d.Code == protocol.String(fproto.KindExit)
			})
		})
	}
}
