package daemon

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// TestDebugCrash: on calc's division by zero, the code lens on the crash's
// line and the code action on its diagnostic run fuzzls.debugCrash with the
// crash's id; the command asks the client to save the input as a seed (the
// edit of "Add input to seed corpus"), shows the dlv command line, and answers
// it; run for real (dlv test with an init script: the answer's breakpoint,
// continue, stack) Delve stops at the division, in the seed's run alone.
// Asked again once the seed is on disk, it asks for no edit.
func TestDebugCrash(t *testing.T) {
	w := startCalc(t, Options{}, nil)
	c := w.lspConn
	w.start(t)
	d := w.awaitDiag(t, "the minimized crash diagnostic", w.calcURI, func(d protocol.Diagnostic) bool {
		return d.Range.Start.Line == uint32(w.divLine-1) && !strings.Contains(diagMessage(d), "minimizing")
	})
	var data fproto.CrashData
	if err := json.Unmarshal(d.Data, &data); err != nil {
		t.Fatal(err)
	}
	want := fproto.DebugArgs{Crash: data.Crash}

	lenses, err := w.Server.CodeLens(w.Ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: w.calcURI}})
	if err != nil || len(lenses) != 1 || lenses[0].Range.Start.Line != uint32(w.divLine-1) || lenses[0].Command.Command != fproto.CommandDebugCrash ||
		lenses[0].Command.Title != "⚙ Debug this crash (FuzzEval: panic)" || !sameArgs(t, lenses[0].Command.Arguments, want) {
		t.Errorf("code lenses of calc.go = %+v, %v; want one debugging crash %s on line %d", lenses, err, data.Crash, w.divLine)
	}
	actions, err := w.Server.CodeAction(w.Ctx, &protocol.CodeActionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: w.calcURI}, Range: d.Range,
		Context: protocol.CodeActionContext{Diagnostics: []protocol.Diagnostic{d}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var debug *protocol.CodeAction
	for _, a := range actions {
		if ca, ok := a.(*protocol.CodeAction); ok && ca.Title == "Debug this crash" {
			debug = ca
		}
	}
	if debug == nil || debug.Command.Command != fproto.CommandDebugCrash || !sameArgs(t, debug.Command.Arguments, want) || len(debug.Diagnostics) != 1 {
		t.Fatalf("code actions = %+v, want \"Debug this crash\" running %s %+v", actions, fproto.CommandDebugCrash, want)
	}

	seedFile := corpusFile(data.Input)
	seedPath := filepath.Join(w.dir, "testdata", "fuzz", "FuzzEval", fuzzrt.FileName(seedFile))
	raw, err := w.Command(fproto.CommandDebugCrash, want)
	if err != nil {
		t.Fatal(err)
	}
	var res fproto.DebugResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	var applied []protocol.WorkspaceEdit
	c.Locked(func() { applied = append(applied, c.Applied...) })
	if len(applied) != 1 || len(applied[0].DocumentChanges) != 2 {
		t.Fatalf("edits asked for: %+v, want the seed's creation", applied)
	}
	te, ok := applied[0].DocumentChanges[1].(*protocol.TextDocumentEdit)
	if create, ok2 := applied[0].DocumentChanges[0].(*protocol.CreateFile); !ok || !ok2 || create.URI != fileURI(seedPath) || te.Edits[0].(*protocol.TextEdit).NewText != string(seedFile) {
		t.Fatalf("edit = %+v, want %s created with %q", applied[0], seedPath, seedFile)
	}
	if res.Dir != w.dir || res.Seed != fuzzrt.FileName(seedFile) || res.SeedURI != string(fileURI(seedPath)) || res.Run != "^FuzzEval$/^"+res.Seed+"$" ||
		res.URI != string(w.calcURI) || res.Line != uint32(w.divLine-1) || res.Target != (fproto.TargetID{Package: "example.com/calc", Name: "FuzzEval"}) ||
		strings.Join(res.Args, " ") != "test . -- -test.run="+res.Run {
		t.Errorf("result = %+v", res)
	}
	msgs := c.messages()
	if len(msgs) == 0 || !strings.Contains(msgs[len(msgs)-1].Message, "dlv' test . -- '-test.run=^FuzzEval$/^"+res.Seed+"$'") && !strings.Contains(msgs[len(msgs)-1].Message, "dlv test . -- '-test.run=^FuzzEval$/^"+res.Seed+"$'") {
		t.Errorf("messages = %+v, want the dlv command line", msgs)
	}

	// The client applies the edit: the seed is on disk. Asked again, the
	// command finds it and asks for no edit.
	if err := os.MkdirAll(filepath.Dir(seedPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(seedPath, seedFile, 0o644); err != nil {
		t.Fatal(err)
	}
	if raw, err := w.Command(fproto.CommandDebugCrash, fproto.DebugArgs{Crash: data.Crash, Launch: true}); err != nil || !strings.Contains(string(raw), res.Seed) {
		t.Errorf("again: %s, %v", raw, err)
	}
	c.Locked(func() {
		if len(c.Applied) != 1 {
			t.Errorf("asked again with the seed on disk, the command asked for %d edits more", len(c.Applied)-1)
		}
	})

	dlv := res.Dlv
	if dlv == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no dlv: scripts/test.sh installs it (go install github.com/go-delve/delve/cmd/dlv)")
		}
		t.Skip("no dlv on PATH or in GOPATH/bin")
	}
	init := filepath.Join(t.TempDir(), "init")
	bp := strings.TrimPrefix(res.Command[strings.Index(res.Command, "(dlv) break "):], "(dlv) ")
	bp = bp[:strings.IndexByte(bp, '\n')]
	if bp != "break "+w.calcGo+":"+strconv.Itoa(w.divLine) {
		t.Errorf("the command's breakpoint is %q, want the division's line", bp)
	}
	os.WriteFile(init, []byte(bp+"\ncontinue\nstack\nexit\n"), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append([]string{res.Args[0], "--allow-non-terminal-interactive", "--init", init}, res.Args[1:]...)
	cmd := exec.CommandContext(ctx, dlv, args...)
	cmd.Dir = res.Dir
	cmd.Env = append(os.Environ(), "TERM=dumb")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("dlv %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	// The stop, then the stack's innermost frame: the division, in the seed's run.
	stop := "[Breakpoint 1] example.com/calc.(*parser).term() ./calc.go:" + strconv.Itoa(w.divLine)
	frame := "0  0x"
	i := strings.Index(string(out), stop)
	j := strings.Index(string(out), frame)
	if i < 0 || j < i || !strings.Contains(string(out)[j:], "example.com/calc.(*parser).term\n    at ./calc.go:"+strconv.Itoa(w.divLine)) ||
		!strings.Contains(string(out), "testing.(*F).Fuzz") {
		t.Errorf("dlv did not stop at calc.go:%d:\n%s", w.divLine, out)
	}
}

// sameArgs reports whether a command's arguments are the one argument want.
func sameArgs(t *testing.T, args []protocol.LSPAny, want fproto.DebugArgs) bool {
	t.Helper()
	var got fproto.DebugArgs
	return len(args) == 1 && json.Unmarshal(args[0], &got) == nil && got == want
}
