package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"

	"go.lsp.dev/protocol"

	"fuzzls.dev/fuzzls/engine"
	fproto "fuzzls.dev/fuzzls/protocol"
)

// A fuzzFunc is a `func FuzzXxx(f *testing.F)` found in a test file's text
// (the client's, so unsaved functions get lenses too).
type fuzzFunc struct {
	name     string
	param    string // name of the *testing.F parameter ("f")
	line     int    // 1-based line of `func`
	endLine  int    // 1-based line of the closing brace
	fuzzStmt int    // byte offset of the start of the line with the f.Fuzz statement; -1 if none
	indent   string // that line's indentation
}

// fuzzFuncs parses path (open document or disk) for fuzz targets. Syntax
// errors leave the functions before them.
func (s *server) fuzzFuncs(path string) []fuzzFunc {
	if !strings.HasSuffix(path, "_test.go") || vendored(path) {
		return nil
	}
	m, _, err := s.fileText(path)
	if err != nil {
		return nil
	}
	return parseFuzzFuncs(path, m.text)
}

// vendored reports whether path lies in a module's vendor directory (one with
// modules.txt, as go mod vendor makes it): a dependency's copy, whose tests go
// test never runs, and which `go mod vendor` overwrites.
func vendored(path string) bool {
	for dir := filepath.Dir(path); ; {
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		if filepath.Base(dir) == "vendor" {
			if _, err := os.Stat(filepath.Join(dir, "modules.txt")); err == nil {
				return true
			}
		}
		dir = parent
	}
}

func parseFuzzFuncs(path, text string) []fuzzFunc {
	fset := token.NewFileSet()
	f, _ := parser.ParseFile(fset, path, text, parser.SkipObjectResolution)
	if f == nil {
		return nil
	}
	var out []fuzzFunc
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || !engine.IsFuzzTarget(f, fd) {
			continue
		}
		p := fd.Type.Params.List[0]
		ff := fuzzFunc{name: fd.Name.Name, line: fset.Position(fd.Pos()).Line, endLine: fset.Position(fd.End()).Line, fuzzStmt: -1}
		if len(p.Names) == 1 {
			ff.param = p.Names[0].Name
		}
		if fd.Body != nil && ff.param != "" && ff.param != "_" {
			for _, st := range fd.Body.List {
				if callsMethod(st, ff.param, "Fuzz") {
					off := fset.Position(st.Pos()).Offset
					start := strings.LastIndexByte(text[:off], '\n') + 1
					ff.fuzzStmt = start
					ff.indent = text[start:off]
					if strings.TrimLeft(ff.indent, " \t") != "" {
						ff.indent = "\t"
					}
					break
				}
			}
		}
		out = append(out, ff)
	}
	return out
}

// callsMethod reports whether st is the statement `recv.method(...)`.
func callsMethod(st ast.Stmt, recv, method string) bool {
	es, ok := st.(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != method {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == recv
}

// CodeLens puts "▶ Fuzz" or "■ Stop · …" above each fuzz target, and "⚙ Debug
// this crash" on the line of each crash (debug.go).
func (s *server) CodeLens(ctx context.Context, params *protocol.CodeLensParams) ([]protocol.CodeLens, error) {
	path, err := filePath(params.TextDocument.URI)
	if err != nil || !strings.HasSuffix(path, ".go") {
		return nil, nil
	}
	m, _, err := s.fileText(path)
	if err != nil {
		return nil, nil
	}
	lenses := s.debugLenses(path, m)
	for _, fn := range s.fuzzFuncs(path) {
		arg, _ := json.Marshal(fproto.TargetArgs{URI: string(params.TextDocument.URI), Target: fn.name})
		lens := protocol.CodeLens{Range: m.lineRange(fn.line)}
		if sess := s.sessionFor(filepath.Dir(path), fn.name); sess != nil {
			lens.Command = protocol.Command{Title: stopTitle(sess), Command: fproto.CommandStop, Arguments: []protocol.LSPAny{arg}}
			if layout := sess.fs.Layout(); layout != "" {
				// Known once its seeds ran: a label, no command.
				lenses = append(lenses, protocol.CodeLens{Range: m.lineRange(fn.line), Command: protocol.Command{
					Title: "⚠ " + engine.GoTestCannot(fn.name, layout) + " (“Generate fuzz test” on a function makes one go test runs)"}})
			}
		} else {
			lens.Command = protocol.Command{Title: "▶ Fuzz", Command: fproto.CommandStart, Arguments: []protocol.LSPAny{arg}}
		}
		lenses = append(lenses, lens)
	}
	return lenses, nil
}

// stopTitle is "■ Stop · 12.3k execs/s · 87/120 blocks · changed: 5/7 blocks reached · 2 crashes".
func stopTitle(sess *session) string {
	parts := []string{"■ Stop"}
	switch sess.fs.State() {
	case engine.StateBuilding:
		parts = append(parts, "building…")
	case engine.StateError:
		parts = append(parts, "build failed")
	case engine.StateSkipped:
		parts = append(parts, "skipped: "+firstLine(sess.fs.Skipped()))
	default:
		st := sess.fs.Stats()
		parts = append(parts, humanRate(st.ExecsPerSec)+" execs/s", fmt.Sprintf("%d/%d blocks", st.Covered, st.Blocks))
		if st.Changed > 0 {
			parts = append(parts, fmt.Sprintf("changed: %d/%d blocks reached", st.ChangedReached, st.Changed))
		}
		switch st.Crashes {
		case 0:
		case 1:
			parts = append(parts, "1 crash")
		default:
			parts = append(parts, fmt.Sprintf("%d crashes", st.Crashes))
		}
	}
	return strings.Join(parts, " · ")
}

// humanRate formats 12345.6 as "12.3k".
func humanRate(r float64) string {
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.1fM", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.1fk", r/1e3)
	default:
		return fmt.Sprintf("%.0f", r)
	}
}

// refreshCodeLens asks the client to re-request code lenses (throttled to
// once a second by s.lensRefresh).
func (s *server) refreshCodeLens() {
	s.mu.Lock()
	ok := s.caps.codeLensRefresh
	s.mu.Unlock()
	if !ok {
		return
	}
	if err := s.client.CodeLensRefresh(s.ctx); err != nil && s.ctx.Err() == nil {
		s.logf(protocol.MessageTypeLog, "workspace/codeLens/refresh: %v", err)
	}
}
