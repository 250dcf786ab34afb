package daemon

import (
	"encoding/json"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"fuzzls.dev/fuzzls/internal/testws"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// generateAction asks for code actions with the cursor on the name of the
// function declared on the line holding decl, and returns the "Generate fuzz
// test" one. The first request may come before the package's types are
// loaded (an action is then offered by a later request), so it asks until
// settled says the answer is final.
func generateAction(t *testing.T, c *lspConn, file, decl string, settled bool) *protocol.CodeAction {
	t.Helper()
	line := lineOf(t, file, decl)
	col := strings.Index(strings.Split(mustRead(t, file), "\n")[line-1], decl) + len("func ")
	pos := protocol.Position{Line: uint32(line - 1), Character: uint32(col)}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		actions, err := c.Server.CodeAction(c.Ctx, &protocol.CodeActionParams{
			TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(file)},
			Range:        protocol.Range{Start: pos, End: pos},
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range actions {
			if ca, ok := a.(*protocol.CodeAction); ok && strings.HasPrefix(ca.Title, "Generate fuzz test ") {
				return ca
			}
		}
		if settled || time.Now().After(deadline) {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// runGenerate runs a generate action's command and applies the edit the
// daemon asks the client to apply.
func runGenerate(t *testing.T, c *lspConn, a *protocol.CodeAction) fproto.GeneratedTest {
	t.Helper()
	if a.Command.Command != fproto.CommandGenerateFuzzTest || len(a.Command.Arguments) != 1 {
		t.Fatalf("action %q runs %+v", a.Title, a.Command)
	}
	var n int
	c.Locked(func() { n = len(c.Applied) })
	raw, err := c.Command(a.Command.Command, a.Command.Arguments[0])
	if err != nil {
		t.Fatalf("%s: %v", a.Title, err)
	}
	var res fproto.GeneratedTest
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	var edit protocol.WorkspaceEdit
	c.Locked(func() {
		if len(c.Applied) != n+1 {
			t.Fatalf("%s: %d workspace edits, want 1", a.Title, len(c.Applied)-n)
		}
		edit = c.Applied[n]
	})
	applyEdit(t, &edit)
	return res
}

// TestGenerateFuzzTest: "Generate fuzz test" is offered on a function with
// primitive parameters, on one with a struct parameter, on a method, and not
// on a function taking a func; the tests it writes (appended to the existing
// config_test.go, in a new extra_test.go) are gofmt-formatted, take their
// seeds from the calls in the module, and pass go vet and go test, which runs
// their seeds; and fuzzls, started on the generated FuzzCheck, finds the bug
// behind two of the struct's fields.
func TestGenerateFuzzTest(t *testing.T) {
	root := testws.Txtar(t, "testdata/gentest.txtar")
	configGo := filepath.Join(root, "config", "config.go")
	testGo := filepath.Join(root, "config", "config_test.go")
	p := startProcess(t)
	p.initialize(root, map[string]any{"parallel": 1, "cacheDir": t.TempDir()})
	p.open(configGo)
	c := p.lspConn

	for _, tc := range []struct{ decl, title string }{
		{"func Sum(", "Generate fuzz test FuzzSum2"}, // FuzzSum exists
		{"func Check(", "Generate fuzz test FuzzCheck"},
		{"func (p *Parser) Parse(", "Generate fuzz test FuzzParserParse"},
	} {
		a := generateAction(t, c, configGo, tc.decl, false)
		if a == nil || a.Title != tc.title {
			t.Fatalf("on %s: action %+v, want %q", tc.decl, a, tc.title)
		}
		res := runGenerate(t, c, a)
		if want := strings.TrimPrefix(tc.title, "Generate fuzz test "); res.Name != want || res.URI != string(uri.File(testGo)) {
			t.Errorf("%s: %+v, want %s in config_test.go", tc.title, res, want)
		}
	}
	// The package's types are loaded by now: no action is a final answer.
	if a := generateAction(t, c, configGo, "func Apply(", true); a != nil {
		t.Errorf("offered %q on a function taking a func", a.Title)
	}
	extraGo := filepath.Join(root, "config", "extra.go")
	a := generateAction(t, c, extraGo, "func Clamp(", false)
	if a == nil {
		t.Fatal("no action on Clamp")
	}
	if res := runGenerate(t, c, a); res.URI != string(uri.File(filepath.Join(root, "config", "extra_test.go"))) {
		t.Errorf("Clamp's test went into %s, want a new extra_test.go", res.URI)
	}

	text := mustRead(t, testGo)
	t.Logf("config_test.go:\n%s", text)
	if formatted, err := format.Source([]byte(text)); err != nil || string(formatted) != text {
		t.Errorf("config_test.go is not gofmt-formatted (%v)", err)
	}
	for _, s := range []string{
		`f.Add(1, int64(2), "three", []byte("four"), true, 'r', float64(1.5))`, // TestSum's call
		// cmd/app's call: Ports' literal as FuzzCheck decodes it.
		`f.Add("prod", 2, 0, 10, []byte("P\x00\x00\x00\x00\x00\x00\x00\xbb\x01\x00\x00\x00\x00\x00\x00"), int64(0))`,
		"// Left zero, not built from fuzz arguments: OnError (a func).",
		`f.Add(false, "a b c")`, // the method's call: the receiver is not a literal
		"_ = p.Parse(t.Context(), s)",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("config_test.go lacks %s", s)
		}
	}
	for _, args := range [][]string{{"vet", "./..."}, {"test", "-v", "-run=^Fuzz", "./config/"}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		for _, name := range []string{"FuzzSum2", "FuzzCheck", "FuzzParserParse", "FuzzClamp"} {
			if args[0] == "test" && !strings.Contains(string(out), "--- PASS: "+name+"/seed#0") {
				t.Errorf("go test ran no seed of %s:\n%s", name, out)
			}
		}
	}

	requireEngine(t)
	bug := lineOf(t, configGo, "MARK:bug")
	if _, err := p.Command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(testGo)), Target: "FuzzCheck"}); err != nil {
		t.Fatalf("start FuzzCheck: %v", err)
	}
	start := time.Now()
	c.await(t, "the crash diagnostic at the bug behind Mode and Limits.Max", 3*time.Minute, func() bool {
		return slices.ContainsFunc(c.diags(string(uri.File(configGo))), func(d protocol.Diagnostic) bool {
			return d.Range.Start.Line == uint32(bug-1) && d.Code == protocol.String(fproto.KindPanic)
		})
	})
	t.Logf("FuzzCheck found the bug %v after its start", time.Since(start))
}

// TestGenerateFuzzTestNewFileWithoutCreate: for a client that cannot create
// files, the command writes the new test file itself and asks for no edit.
func TestGenerateFuzzTestNewFileWithoutCreate(t *testing.T) {
	root := testws.Txtar(t, "testdata/gentest.txtar")
	extraGo := filepath.Join(root, "config", "extra.go")
	p := startInProcess(t, Options{})
	p.initializeWith(root, map[string]any{"cacheDir": t.TempDir()}, func(caps *protocol.ClientCapabilities) {
		caps.Workspace.WorkspaceEdit.ResourceOperations = nil
	})
	a := generateAction(t, p.lspConn, extraGo, "func Clamp(", false)
	if a == nil {
		t.Fatal("no action on Clamp")
	}
	if _, err := p.Command(a.Command.Command, a.Command.Arguments[0]); err != nil {
		t.Fatal(err)
	}
	p.Locked(func() {
		if len(p.Applied) != 0 {
			t.Errorf("asked the client to apply %+v", p.Applied)
		}
	})
	if text, err := os.ReadFile(filepath.Join(root, "config", "extra_test.go")); err != nil || !strings.Contains(string(text), "func FuzzClamp(f *testing.F) {") {
		t.Errorf("extra_test.go: %v\n%s", err, text)
	}
}
