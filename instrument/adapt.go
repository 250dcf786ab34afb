package instrument

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
)

// Fuzz targets call testing's F.Fuzz and F.Add, which refuse a struct or an
// unmarshaler argument at run time. adaptCalls makes a target's f.Fuzz(ff)
// and f.Add(args) calls go through two variables of the file, which call
// testing's methods unless the harness sets them to the runtime's AdaptFuzz
// and AdaptAdd (engine/fuzzrt/structs.go), which flatten such arguments.
// Every replacement stays on its line, so lines keep their numbers.

// fuzzCallVar and addCallVar name the file's variables the harness sets.
func fuzzCallVar(id fileID) string { return "FuzzlsFuzz_" + string(id) }
func addCallVar(id fileID) string  { return "FuzzlsAdd_" + string(id) }

// adaptCalls rewrites the f.Fuzz and f.Add calls of src's fuzz targets (f
// their *testing.F parameter) and declares the variables; ok is false when
// the file has no such call (src is returned as it is).
func adaptCalls(name string, src []byte, id fileID) (out []byte, ok bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return src, false
	}
	type edit struct {
		at, end int // replace src[at:end]
		text    string
	}
	var edits []edit
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	for _, d := range f.Decls {
		fd, isFunc := d.(*ast.FuncDecl)
		if !isFunc || fd.Body == nil || !IsFuzzTarget(f, fd) || len(fd.Type.Params.List[0].Names) != 1 {
			continue
		}
		param := fd.Type.Params.List[0].Names[0].Name
		if param == "_" {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, isCall := n.(*ast.CallExpr)
			if !isCall {
				return true
			}
			sel, isSel := call.Fun.(*ast.SelectorExpr)
			if !isSel {
				return true
			}
			recv, isIdent := sel.X.(*ast.Ident)
			if !isIdent || recv.Name != param {
				return true
			}
			switch {
			case sel.Sel.Name == "Fuzz" && len(call.Args) == 1 && !call.Ellipsis.IsValid():
				edits = append(edits, edit{off(sel.Pos()), off(call.Lparen) + 1, fuzzCallVar(id) + "(" + param + ", "})
			case sel.Sel.Name == "Add" && call.Ellipsis.IsValid():
				edits = append(edits, edit{off(sel.Pos()), off(call.Lparen) + 1, addCallVar(id) + "(" + param + ", "},
					edit{off(call.Ellipsis), off(call.Ellipsis) + 3, ""})
			case sel.Sel.Name == "Add":
				edits = append(edits, edit{off(sel.Pos()), off(call.Lparen) + 1, addCallVar(id) + "(" + param + ", []interface{}{"},
					edit{off(call.Rparen), off(call.Rparen), "}"})
			}
			return true
		})
	}
	if len(edits) == 0 {
		return src, false
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].at < edits[j].at })
	var b bytes.Buffer
	last := 0
	for _, e := range edits {
		b.Write(src[last:e.at])
		b.WriteString(e.text)
		last = e.end
	}
	b.Write(src[last:])
	// interface{}, not any: the module's language version may predate any.
	b.WriteString("\nvar " + fuzzCallVar(id) + " = func(f, ff interface{}) { f.(interface{ Fuzz(interface{}) }).Fuzz(ff) }\n")
	b.WriteString("var " + addCallVar(id) + " = func(f interface{}, args []interface{}) { f.(interface{ Add(...interface{}) }).Add(args...) }\n")
	return b.Bytes(), true
}
