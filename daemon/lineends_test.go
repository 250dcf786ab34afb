package daemon

import (
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
)

// Files saved with "\r\n" (Windows editors, git's autocrlf): an LSP column
// never counts the "\r", which belongs to the line break; the engine's byte
// columns (go/token's, which count from the line's start) map to the same
// characters as in the file saved with "\n".
func TestCRLFPositions(t *testing.T) {
	lf := "package x\n\nfunc F(s string) {\n\tif s == \"é\" {\n\t\tpanic(s)\n\t}\n}\n"
	crlf := strings.ReplaceAll(lf, "\n", "\r\n")
	ml, mc := newMapper(lf), newMapper(crlf)
	for line := 1; line <= 7; line++ {
		for col := 1; col <= 20; col++ { // past the line's end too: clamped before the "\r"
			if a, b := ml.enginePosition(line, col), mc.enginePosition(line, col); a != b {
				t.Errorf("enginePosition(%d, %d): %+v with \\n, %+v with \\r\\n", line, col, a, b)
			}
		}
		if a, b := ml.lineRange(line), mc.lineRange(line); a != b {
			t.Errorf("lineRange(%d): %+v with \\n, %+v with \\r\\n", line, a, b)
		}
	}
	// The end of line 4 (0-based 3), `\tif s == "é" {`: 14 UTF-16 units.
	if got := mc.lineRange(4).End; got != (protocol.Position{Line: 3, Character: 14}) {
		t.Errorf("end of line 4 = %+v", got)
	}
	// An edit at a line's end lands before its "\r".
	start := mc.offset(protocol.Position{Line: 2, Character: 99})
	if got := crlf[start:][:2]; got != "\r\n" {
		t.Errorf("offset past the end of line 3 is at %q, want before \\r\\n", got)
	}
}

// A seed corpus file is written as go test writes one, also from an input
// read from a file saved with "\r\n" (git's autocrlf on Windows), which go
// test accepts: one header, "\n" line ends, so the name (the SHA-256 of the
// contents) is go test's.
func TestCorpusFileLineEnds(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"go test fuzz v1\nstring(\"a\\r\\n\")\nint(1)\n", "go test fuzz v1\nstring(\"a\\r\\n\")\nint(1)\n"},
		{"go test fuzz v1\r\nstring(\"a\\r\\n\")\r\nint(1)\r\n", "go test fuzz v1\nstring(\"a\\r\\n\")\nint(1)\n"},
		{"go test fuzz v1\r\nint(1)", "go test fuzz v1\nint(1)\n"},
		{"int(1)\r\n", "go test fuzz v1\nint(1)\n"},
	} {
		if got := string(corpusFile(tc.in)); got != tc.want {
			t.Errorf("corpusFile(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A lone "\r" (in a comment, a raw string) ends an LSP line, not a Go line:
// the engine's lines (go/token's, the compiler's, stack traces') and the
// client's differ below it, and positions convert through byte offsets.
func TestLoneCR(t *testing.T) {
	text := "package x\n// a\rb\nfunc F() {\r\n\tpanic(1)\n}\n"
	m := newMapper(text)
	for _, tc := range []struct {
		line, col int
		want      protocol.Position
	}{
		{2, 1, protocol.Position{Line: 1, Character: 0}},   // "// a"
		{2, 6, protocol.Position{Line: 2, Character: 0}},   // "b"
		{3, 11, protocol.Position{Line: 3, Character: 10}}, // "func F() {", before its "\r\n"
		{4, 2, protocol.Position{Line: 4, Character: 1}},   // panic
	} {
		if got := m.enginePosition(tc.line, tc.col); got != tc.want {
			t.Errorf("enginePosition(%d, %d) = %+v, want %+v", tc.line, tc.col, got, tc.want)
		}
		if got := m.goLine(tc.want); got != tc.line {
			t.Errorf("goLine(%+v) = %d, want %d", tc.want, got, tc.line)
		}
	}
	if got, want := m.lineRange(4), (protocol.Range{Start: protocol.Position{Line: 4, Character: 1}, End: protocol.Position{Line: 4, Character: 9}}); got != want {
		t.Errorf("lineRange(4) = %+v, want %+v", got, want)
	}
	if got := m.offset(protocol.Position{Line: 2, Character: 0}); text[got:got+1] != "b" {
		t.Errorf("offset of line 2 is at %q, want b", text[got:])
	}
}

// Through the server: the code lens of a target below a lone "\r" is on the
// target's line as the client counts lines.
func TestLoneCRCodeLens(t *testing.T) {
	p := startInProcess(t, Options{})
	dir := t.TempDir()
	p.initialize(dir, nil)
	path := filepath.Join(dir, "x_test.go")
	p.openText(path, "package x\n\n// old Mac line end:\rstill Go's line 3\nimport \"testing\"\n\nfunc FuzzA(f *testing.F) {}\n")
	lenses, err := p.Server.CodeLens(p.Ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: fileURI(path)}})
	if err != nil || len(lenses) != 1 {
		t.Fatalf("lenses = %+v, %v", lenses, err)
	}
	if got := lenses[0].Range.Start.Line; got != 6 {
		t.Errorf("lens on LSP line %d, want 6 (Go's line 6, one lone \\r above)", got)
	}
}
