package daemon

import (
	"encoding/json"
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
// (the Fuzzing view's) lists it too, at the comparison's line.
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
