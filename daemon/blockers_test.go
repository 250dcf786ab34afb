package daemon

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	fproto "fuzzls.dev/fuzzls/protocol"
)

// TestBlockerHover: with the real daemon fuzzing testdata/blockers, whose branch
// needs a sha256 equal to a constant, an Information diagnostic at the
// comparison and the hover on the uncovered block behind it name the
// comparison, the constant and a nearest value fuzzing fed it; with the
// blockers setting off the diagnostic goes, the hover stays. fuzzls.blockers
// (the Fuzzing view's) lists it too, at the comparison's line; no code action
// offers an input for its branch.
func TestBlockerHover(t *testing.T) {
	requireEngine(t)
	ws := copyDir(t, "../testdata/blockers")
	magic, testGo := ws+"/magic.go", ws+"/magic_test.go"
	gate, behind := lineOf(t, magic, "MARK:gate"), lineOf(t, magic, "MARK:behind")
	p := startProcess(t)
	p.initialize(ws, map[string]any{"parallel": 1, "cacheDir": t.TempDir(), "blockers": true})
	p.open(magic)
	if _, err := p.Command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(testGo)), Target: "FuzzCheck"}); err != nil {
		t.Fatalf("start: %v", err)
	}
	c := p.lspConn
	magicURI := string(uri.File(magic))
	isBlocker := func(d protocol.Diagnostic) bool {
		return d.Range.Start.Line == uint32(gate-1) && d.Severity == protocol.DiagnosticSeverityInformation &&
			strings.Contains(diagMessage(d), "compared `binary.BigEndian.Uint32(h[:4]) == 0x89504e47`: nearest 0x")
	}
	c.await(t, "the blocker's diagnostic at the comparison", 2*time.Minute, func() bool {
		return slices.ContainsFunc(c.diags(magicURI), isBlocker)
	})

	h, err := c.Server.Hover(c.Ctx, &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: uri.URI(magicURI)}, Position: protocol.Position{Line: uint32(behind - 1), Character: 4},
	}})
	if err != nil || h == nil {
		t.Fatalf("hover on the uncovered block: %v, %v", h, err)
	}
	hv := h.Contents.(*protocol.MarkupContent).Value
	t.Logf("hover:\n%s", hv)
	for _, want := range []string{"Not covered", "Compared `binary.BigEndian.Uint32(h[:4]) == 0x89504e47`", "- nearest: `0x", "- wanted: `0x89504e47`"} {
		if !strings.Contains(hv, want) {
			t.Errorf("hover lacks %q:\n%s", want, hv)
		}
	}
	if strings.Contains(hv, "- nearest: `0x89504e47`") {
		t.Errorf("the nearest value is the constant, which no input reached:\n%s", hv)
	}

	// No input takes a hash's branch: no "Add as seed".
	actions, err := c.Server.CodeAction(c.Ctx, &protocol.CodeActionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: uri.URI(magicURI)},
		Range:        protocol.Range{Start: protocol.Position{Line: uint32(gate - 1)}, End: protocol.Position{Line: uint32(gate - 1)}},
	})
	for _, a := range actions {
		if ca, ok := a.(*protocol.CodeAction); ok && strings.HasPrefix(ca.Title, "Add as seed") {
			t.Errorf("an input for a sha256's branch: %s", ca.Title)
		}
	}
	if err != nil {
		t.Fatal(err)
	}

	raw, err := p.Command(fproto.CommandBlockers, fproto.TargetID{Package: "example.com/blockers", Name: "FuzzCheck"})
	if err != nil {
		t.Fatalf("fuzzls.blockers: %v", err)
	}
	var res fproto.BlockersResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(res.Blockers, func(b fproto.Blocker) bool { return b.URI == magicURI && b.Range.Start.Line == uint32(gate-1) })
	if i < 0 {
		t.Fatalf("fuzzls.blockers lacks the gate at line %d: %s", gate, raw)
	}
	if b := res.Blockers[i]; b.Want != "0x89504e47" || !strings.HasPrefix(b.Nearest, "0x") || b.Nearest == b.Want || b.Behind < 4 ||
		!strings.HasPrefix(b.Message, "compared `binary.BigEndian.Uint32(h[:4]) == 0x89504e47`: nearest 0x") {
		t.Errorf("fuzzls.blockers' gate: %+v", b)
	}

	if err := c.Conn.Notify(c.Ctx, protocol.MethodWorkspaceDidChangeConfiguration, map[string]any{"settings": map[string]any{"blockers": false}}); err != nil {
		t.Fatal(err)
	}
	c.await(t, "the blocker's diagnostic gone with the setting off", time.Minute, func() bool {
		return !slices.ContainsFunc(c.diags(magicURI), isBlocker)
	})
}

// TestAddBlockerSeed: with the real daemon fuzzing testdata/seedable, whose
// branch needs a 73-byte signature at offset 8192 of an image of zeros (longer
// than the dictionary keeps, past the places a comparison round tries), the
// blocker's code action "Add as seed" carries an input that takes the branch,
// as a `go test fuzz v1` file in testdata/fuzz/FuzzVolume; written there, go
// test of that seed alone reaches the panic behind the branch.
func TestAddBlockerSeed(t *testing.T) {
	requireEngine(t)
	ws := copyDir(t, "../testdata/seedable")
	image, testGo := ws+"/image.go", ws+"/image_test.go"
	gate := lineOf(t, image, "MARK:gate")
	p := startProcess(t)
	p.initialize(ws, map[string]any{"parallel": 1, "cacheDir": t.TempDir(), "blockers": true})
	p.open(image)
	if _, err := p.Command(fproto.CommandStart, fproto.TargetArgs{URI: string(uri.File(testGo)), Target: "FuzzVolume"}); err != nil {
		t.Fatalf("start: %v", err)
	}
	c := p.lspConn
	imageURI := string(uri.File(image))
	var diag protocol.Diagnostic
	c.await(t, "the blocker's diagnostic at the comparison", 2*time.Minute, func() bool {
		i := slices.IndexFunc(c.diags(imageURI), func(d protocol.Diagnostic) bool {
			return d.Range.Start.Line == uint32(gate-1) && strings.Contains(diagMessage(d), "not covered past here")
		})
		if i >= 0 {
			diag = c.diags(imageURI)[i]
		}
		return i >= 0
	})

	actions, err := c.Server.CodeAction(c.Ctx, &protocol.CodeActionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: uri.URI(imageURI)}, Range: diag.Range,
		Context: protocol.CodeActionContext{Diagnostics: []protocol.Diagnostic{diag}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var add *protocol.CodeAction
	for _, a := range actions {
		if ca, ok := a.(*protocol.CodeAction); ok && strings.HasPrefix(ca.Title, "Add as seed of FuzzVolume") {
			add = ca
		}
	}
	if add == nil || add.Edit == nil || len(add.Edit.DocumentChanges) != 2 || len(add.Diagnostics) != 1 {
		t.Fatalf("no \"Add as seed\" action with an edit at the blocker: %+v", actions)
	}
	t.Logf("%s", add.Title)
	create, ok1 := add.Edit.DocumentChanges[0].(*protocol.CreateFile)
	te, ok2 := add.Edit.DocumentChanges[1].(*protocol.TextDocumentEdit)
	if !ok1 || !ok2 {
		t.Fatalf("changes %+v", add.Edit.DocumentChanges)
	}
	seedPath, err := filePath(create.URI)
	if err != nil || filepath.Dir(seedPath) != filepath.Join(ws, "testdata", "fuzz", "FuzzVolume") {
		t.Fatalf("seed at %s, want testdata/fuzz/FuzzVolume/", create.URI)
	}
	text := te.Edits[0].(*protocol.TextEdit).NewText
	if !strings.HasPrefix(text, "go test fuzz v1\n[]byte(") {
		t.Fatalf("seed file:\n%.200s", text)
	}
	if err := os.MkdirAll(filepath.Dir(seedPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(seedPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "test", "-count=1", "-run", "FuzzVolume/"+filepath.Base(seedPath), ".")
	cmd.Dir = ws
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "volume descriptor reached") {
		t.Errorf("go test of the seed: %v, want the panic behind the branch:\n%s", err, out)
	}
}
