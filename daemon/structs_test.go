package daemon

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"fuzzls.dev/fuzzls/engine/fuzzrt"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// TestStructTargetLSP: the real daemon fuzzes testdata/structs's FuzzServe,
// whose arguments (a struct, a TextUnmarshaler) go test refuses: the crash
// diagnostic shows at the bug, the target's lens says go test cannot run it,
// "Add input to seed corpus" says so too and writes the seed with its layout
// line, and neither "Debug this crash" nor "Add as f.Add(…)" is offered (both
// run it as go test does): the debug command, asked all the same, says why.
func TestStructTargetLSP(t *testing.T) {
	requireEngine(t)
	dir := copyDir(t, "../testdata/structs")
	cfgGo := filepath.Join(dir, "config.go")
	testGo := filepath.Join(dir, "config_test.go")
	bugLine := lineOf(t, cfgGo, "MARK:bug")

	p := startProcess(t)
	p.initialize(dir, map[string]any{"parallel": 1, "cacheDir": t.TempDir()})
	c := p.lspConn
	p.open(testGo)
	p.open(cfgGo)
	cfgURI := string(uri.File(cfgGo))
	if _, err := p.Command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(testGo)), Target: "FuzzServe"}); err != nil {
		t.Fatalf("start: %v", err)
	}
	c.await(t, "crash diagnostic at the bug", 3*time.Minute, func() bool {
		return slices.ContainsFunc(c.diags(cfgURI), func(d protocol.Diagnostic) bool { return d.Range.Start.Line == uint32(bugLine-1) })
	})

	const says = "go test cannot run FuzzServe: argument structs.Config is a struct, argument structs.Level is an encoding.TextUnmarshaler; fuzzls fuzzes them field by field"
	lenses, err := p.Server.CodeLens(p.Ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(testGo)}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(lenses, func(l protocol.CodeLens) bool { return strings.Contains(l.Command.Title, says) }) {
		t.Errorf("no lens says %q: %+v", says, lenses)
	}

	var diag protocol.Diagnostic
	c.Locked(func() {
		for _, d := range c.diags(cfgURI) {
			if d.Range.Start.Line == uint32(bugLine-1) {
				diag = d
			}
		}
	})
	// The message shows the input's values, not its layout line.
	if msg := fmt.Sprint(diag.Message); !strings.Contains(msg, "FuzzServe(") || strings.Contains(msg, "// fuzzls:") || !strings.Contains(msg, "8443") {
		t.Errorf("diagnostic message %q: want FuzzServe(…) with the values (8443), not the layout line", msg)
	}
	if ls, err := p.Server.CodeLens(p.Ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(cfgGo)}}); err != nil || len(ls) != 0 {
		t.Errorf("lenses at the crash: %+v, %v; want none (Delve runs the target as go test does)", ls, err)
	}
	var data fproto.CrashData
	if err := json.Unmarshal(diag.Data, &data); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Command(fproto.CommandDebugCrash, fproto.DebugArgs{Crash: data.Crash}); err == nil || !strings.Contains(err.Error(), says+": Delve cannot debug it; replay it with fuzzls fuzz -run=FuzzServe/") {
		t.Errorf("debugging the crash: %v, want an error saying go test, so Delve, cannot run it and how to replay it", err)
	}
	actions, err := p.Server.CodeAction(p.Ctx, &protocol.CodeActionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(cfgGo)}, Range: diag.Range,
		Context: protocol.CodeActionContext{Diagnostics: []protocol.Diagnostic{diag}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var add *protocol.CodeAction
	for _, a := range actions {
		ca, ok := a.(*protocol.CodeAction)
		if !ok {
			continue
		}
		switch {
		case ca.Title == "Add input to seed corpus (fuzzls replays it; go test cannot run FuzzServe)":
			add = ca
		case strings.HasPrefix(ca.Title, "Add as") || strings.Contains(ca.Title, "Debug"):
			t.Errorf("offered %q, which runs the target as go test does", ca.Title)
		}
	}
	if add == nil || add.Edit == nil {
		t.Fatalf("no \"Add input to seed corpus\" edit saying go test cannot run it in %+v", actions)
	}
	applyEdit(t, add.Edit)
	files, _ := filepath.Glob(filepath.Join(dir, "testdata", "fuzz", "FuzzServe", "*"))
	if len(files) != 1 {
		t.Fatalf("seed files: %v", files)
	}
	seed, _ := os.ReadFile(files[0])
	if fuzzrt.LayoutOf(seed) != "structs.Config{Name, Port, Limits.Max, Limits.Strict, Tags}, structs.Level(text)" || !strings.Contains(string(seed), "uint16(8443)") {
		t.Errorf("the seed has no layout line or not the crash's values:\n%s", seed)
	}
	if filepath.Base(files[0]) != fuzzrt.FileName(seed) {
		t.Errorf("seed named %s, want go test's name for its contents %s", filepath.Base(files[0]), fuzzrt.FileName(seed))
	}
}
