package daemon

import (
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
