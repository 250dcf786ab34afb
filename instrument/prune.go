package instrument

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"strconv"
	"strings"
)

// pruneTests blanks out, in the test files of one package (srcs[i] is the
// content of names[i]), the functions the fuzz binary cannot reach: tests,
// benchmarks, examples and the helpers only they call. The binary runs fuzz
// targets only (-test.run=^$), yet go test -c compiles every test of the
// package, and on a package with many tests that is most of a save's rebuild
// (go-ethereum's trie: 7,300 lines of tests beside 6,800 of code).
//
// Kept, as roots: every declaration of a non-test file, every declaration of a
// test file that is not a plain function (types, methods, variables and
// constants, whose initializers run), and the functions init, TestMain and
// Fuzz*; then every function named by what is kept, to a fixed point. Names
// are matched as words, not resolved: a local variable that shares a
// function's name keeps the function, never the reverse. A dropped function's
// bytes become spaces, its newlines stay, so every kept line keeps its line and
// column. An import the file's remaining code no longer names (importNames
// gives each import path's package name) becomes a blank import, which keeps
// its initialization.
//
// alsoUsed holds names used from elsewhere: the external test package's, which
// may call what an internal test file declares for it (export_test.go).
//
// It returns the new contents (nil where a file is unchanged). A file that does
// not parse, or a package whose test files import with a dot, is left as it is.
func pruneTests(names []string, srcs [][]byte, importNames map[string]string, alsoUsed map[string]bool) [][]byte {
	fset := token.NewFileSet()
	files := make([]*ast.File, len(names))
	for i, name := range names {
		f, err := parser.ParseFile(fset, name, srcs[i], parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return nil
		}
		files[i] = f
	}
	type candidate struct {
		file int
		decl *ast.FuncDecl
		uses map[string]bool
	}
	used := maps.Clone(alsoUsed)
	if used == nil {
		used = map[string]bool{}
	}
	cands := map[string][]*candidate{}
	for i, f := range files {
		test := strings.HasSuffix(names[i], "_test.go")
		for _, imp := range f.Imports {
			if test && imp.Name != nil && imp.Name.Name == "." {
				return nil // names from it look like the package's own
			}
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !test || !ok || fd.Recv != nil || fd.Body == nil || rootFunc(fd.Name.Name) {
				addIdents(used, d)
				continue
			}
			c := &candidate{file: i, decl: fd, uses: map[string]bool{}}
			addIdents(c.uses, fd)
			cands[fd.Name.Name] = append(cands[fd.Name.Name], c)
		}
	}
	// Keep what the kept code names, to a fixed point.
	for changed := true; changed; {
		changed = false
		for name, cs := range cands {
			if !used[name] {
				continue
			}
			for _, c := range cs {
				for u := range c.uses {
					used[u] = true
				}
			}
			delete(cands, name)
			changed = true
		}
	}
	if len(cands) == 0 {
		return nil
	}
	dropped := map[int][]*ast.FuncDecl{}
	for _, cs := range cands {
		for _, c := range cs {
			dropped[c.file] = append(dropped[c.file], c.decl)
		}
	}
	out := make([][]byte, len(names))
	for i, decls := range dropped {
		f, src := files[i], bytes.Clone(srcs[i])
		tf := fset.File(f.Pos())
		gone := map[ast.Decl]bool{}
		for _, fd := range decls {
			from := fd.Pos()
			if fd.Doc != nil {
				from = fd.Doc.Pos()
			}
			blank(src[tf.Offset(from):tf.Offset(fd.End())])
			gone[fd] = true
		}
		// The package names the remaining code of this file selects from.
		selected := map[string]bool{}
		for _, d := range f.Decls {
			if !gone[d] {
				ast.Inspect(d, func(n ast.Node) bool {
					if se, ok := n.(*ast.SelectorExpr); ok {
						if id, ok := se.X.(*ast.Ident); ok {
							selected[id.Name] = true
						}
					}
					return true
				})
			}
		}
		// Blank the imports nothing selects from any more, from the last one so
		// that the offsets before it hold.
		for j := len(f.Imports) - 1; j >= 0; j-- {
			imp := f.Imports[j]
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				continue
			}
			name := importNames[path]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			if name == "" || name == "_" || selected[name] || path == "C" {
				continue
			}
			if imp.Name != nil {
				at := tf.Offset(imp.Name.Pos())
				blank(src[at : at+len(imp.Name.Name)])
				src[at] = '_'
			} else {
				at := tf.Offset(imp.Path.Pos())
				src = append(src[:at], append([]byte("_ "), src[at:]...)...)
			}
		}
		out[i] = src
	}
	return out
}

// identsOf returns every identifier of the files, or nil if one does not
// parse (or cannot be read).
func identsOf(files []string) map[string]bool {
	set := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil
		}
		addIdents(set, f)
	}
	return set
}

// rootFunc: a plain function of a test file that the binary may run without
// any kept code naming it.
func rootFunc(name string) bool {
	return name == "init" || name == "TestMain" || strings.HasPrefix(name, "Fuzz") || name == "_"
}

// addIdents adds every identifier in n to set.
func addIdents(set map[string]bool, n ast.Node) {
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			set[id.Name] = true
		}
		return true
	})
}

// blank turns b into spaces, keeping its line breaks.
func blank(b []byte) {
	for i, c := range b {
		if c != '\n' && c != '\r' {
			b[i] = ' '
		}
	}
}
