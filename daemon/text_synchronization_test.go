package daemon

import (
	"path/filepath"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

func TestMapperUTF16(t *testing.T) {
	// é is 2 bytes/1 unit, 🙂 is 4 bytes/2 units, 日 is 3 bytes/1 unit.
	text := "héllo 🙂 x\n日本語\r\n\tend"
	m := newMapper(text)
	for _, tc := range []struct {
		desc string
		off  int
		pos  protocol.Position
	}{
		{"start", 0, protocol.Position{Line: 0, Character: 0}},
		{"after é", 3, protocol.Position{Line: 0, Character: 2}},
		{"before 🙂", 7, protocol.Position{Line: 0, Character: 6}},
		{"after 🙂", 11, protocol.Position{Line: 0, Character: 8}},
		{"x", 12, protocol.Position{Line: 0, Character: 9}},
		{"line 1", 14, protocol.Position{Line: 1, Character: 0}},
		{"after 本", 20, protocol.Position{Line: 1, Character: 2}},
		{"end of line 1 (before \\r)", 23, protocol.Position{Line: 1, Character: 3}},
		{"tab", 26, protocol.Position{Line: 2, Character: 1}},
		{"end", len(text), protocol.Position{Line: 2, Character: 4}},
	} {
		if got := m.position(tc.off); got != tc.pos {
			t.Errorf("%s: position(%d) = %+v, want %+v", tc.desc, tc.off, got, tc.pos)
		}
		if got := m.offset(tc.pos); got != tc.off {
			t.Errorf("%s: offset(%+v) = %d, want %d", tc.desc, tc.pos, got, tc.off)
		}
	}
	// Clamping: inside a surrogate pair, past a line's end, past the last line.
	for _, tc := range []struct {
		pos  protocol.Position
		want int
	}{
		{protocol.Position{Line: 0, Character: 7}, 7},
		{protocol.Position{Line: 1, Character: 99}, 23},
		{protocol.Position{Line: 9, Character: 0}, len(text)},
	} {
		if got := m.offset(tc.pos); got != tc.want {
			t.Errorf("offset(%+v) = %d, want %d", tc.pos, got, tc.want)
		}
	}
	// The engine's 1-based line and byte column.
	if got := m.enginePosition(1, 12); got != (protocol.Position{Line: 0, Character: 8}) {
		t.Errorf("enginePosition(1, 12) = %+v", got)
	}
	if got := m.enginePosition(2, 7); got != (protocol.Position{Line: 1, Character: 2}) {
		t.Errorf("enginePosition(2, 7) = %+v", got)
	}
	if got := m.lineRange(3); got != (protocol.Range{Start: protocol.Position{Line: 2, Character: 1}, End: protocol.Position{Line: 2, Character: 4}}) {
		t.Errorf("lineRange(3) = %+v", got)
	}
	if n := utf16Count("a\xffb"); n != 3 {
		t.Errorf("utf16Count with an invalid byte = %d, want 3", n)
	}
}

// Incremental edits in UTF-16 columns on non-ASCII text, checked through the
// code lens that follows the function they move.
func TestIncrementalChangesNonASCII(t *testing.T) {
	p := startInProcess(t, Options{})
	dir := t.TempDir()
	p.initialize(dir, nil)
	path := filepath.Join(dir, "x_test.go")
	text := "package x\n\n// Ünïcödé 🙂 comment\nimport \"testing\"\n\nfunc FuzzA(f *testing.F) {}\n"
	p.openText(path, text)
	id := protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri.File(path)}, Version: 2}
	// Split the comment after "🙂 " (UTF-16 column 14, byte column 20), rename
	// FuzzA to FuzzB on the line it moved to, then replace 日 by 🙂.
	err := p.Server.DidChange(p.Ctx, &protocol.DidChangeTextDocumentParams{TextDocument: id, ContentChanges: []protocol.TextDocumentContentChangeEvent{
		&protocol.TextDocumentContentChangePartial{Range: protocol.Range{Start: protocol.Position{Line: 2, Character: 14}, End: protocol.Position{Line: 2, Character: 14}}, Text: "\n// 日本\n"},
		&protocol.TextDocumentContentChangePartial{Range: protocol.Range{Start: protocol.Position{Line: 7, Character: 9}, End: protocol.Position{Line: 7, Character: 10}}, Text: "B"},
		&protocol.TextDocumentContentChangePartial{Range: protocol.Range{Start: protocol.Position{Line: 3, Character: 3}, End: protocol.Position{Line: 3, Character: 4}}, Text: "🙂"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	lenses, err := p.Server.CodeLens(p.Ctx, &protocol.CodeLensParams{TextDocument: id.TextDocumentIdentifier})
	if err != nil || len(lenses) != 1 || lenses[0].Range.Start.Line != 7 {
		t.Fatalf("lenses = %+v, %v", lenses, err)
	}
	var ta struct{ Target string }
	if err := jsonUnmarshal(lenses[0].Command.Arguments[0], &ta); err != nil || ta.Target != "FuzzB" {
		t.Fatalf("lens target = %q (%v); text edits misapplied", ta.Target, err)
	}
}
