package gentest

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ast/astutil"
)

// An Edit replaces Old[Start:End] with Text.
type Edit struct {
	Start, End int
	Text       string
}

// place puts the fuzz test of plan in the test file of file (testFile), its
// imports added, and says how: the edits of an existing file, or the text of a
// new one.
func (r *Result) place(plan *Plan, seeds [][]any, file string, files Files) error {
	dir := filepath.Dir(file)
	path, old, exists := testFile(file, plan.pkg.Name(), files)
	r.Path, r.Create = path, !exists
	taken := takenNames(dir, plan.pkg, files)
	if !exists {
		im := newImports(nil, taken)
		decl := plan.source(seeds, im)
		text, err := format.Source([]byte(fmt.Sprintf("package %s\n\n%s\n%s", plan.pkg.Name(), importDecl(im, plan), decl)))
		if err != nil {
			return fmt.Errorf("generated code does not format: %v", err)
		}
		r.New = string(text)
		return nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, old, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	im := newImports(fileImports(f, plan), taken)
	decl := plan.source(seeds, im)
	for _, p := range slices.Sorted(maps.Keys(im.added)) {
		name := im.names[p]
		if name == defaultName(p, plan) {
			name = ""
		}
		astutil.AddNamedImport(fset, f, name, p)
	}
	var buf bytes.Buffer
	if err := format.Node(&buf, fset, f); err != nil {
		return err
	}
	// The declaration's text is formatted alone (gofmt keeps declarations
	// apart), so that it can be found at the end of the file's.
	declText, err := format.Source([]byte(decl))
	if err != nil {
		return fmt.Errorf("generated code does not format: %v", err)
	}
	head := strings.TrimRight(buf.String(), "\n") + "\n"
	r.Old, r.New = old, head+"\n"+string(declText)
	text, err := format.Source([]byte(r.New))
	if err != nil {
		return fmt.Errorf("generated code does not format: %v", err)
	}
	r.New = string(text) // as it was unless the two parts format differently together
	r.Edits = edits(old, r.New, len(head))
	return nil
}

// testFile chooses where the fuzz test of a function in file goes: the file's
// own test file (config.go's config_test.go), appended to, or created when
// missing. That is where gopls's "Add test for function" puts a test and
// where a reader of config.go looks for its tests, and appending keeps the
// package from growing a file per generated test. When config_test.go cannot
// take it (an external test package, config_test, which cannot reach
// unexported names; a build constraint, which would hide the test; a syntax
// error) the test goes into config_fuzz_test.go, then config_fuzz2_test.go.
// It returns the path, its text and whether it exists.
func testFile(file, pkgName string, files Files) (string, string, bool) {
	base := strings.TrimSuffix(file, ".go")
	for i := 0; ; i++ {
		path := base + "_test.go"
		switch i {
		case 0:
		case 1:
			path = base + "_fuzz_test.go"
		default:
			path = fmt.Sprintf("%s_fuzz%d_test.go", base, i)
		}
		data, err := files.read(path)
		if err != nil {
			return path, "", false
		}
		if usable(path, data, pkgName) {
			return path, string(data), true
		}
	}
}

// usable reports whether a test file can take a fuzz test of package pkgName.
func usable(path string, data []byte, pkgName string) bool {
	f, err := parser.ParseFile(token.NewFileSet(), path, data, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil || f.Name.Name != pkgName {
		return false
	}
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:build") || strings.HasPrefix(c.Text, "// +build") {
				return false
			}
		}
	}
	return true
}

// fileImports are f's imports by path, under the name the file uses.
func fileImports(f *ast.File, plan *Plan) map[string]string {
	m := map[string]string{}
	for _, spec := range f.Imports {
		p, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		name := defaultName(p, plan)
		if spec.Name != nil {
			name = spec.Name.Name
		}
		if name != "_" && name != "." {
			m[p] = name
		}
	}
	return m
}

// defaultName is the name an import of path gets without one: the package's
// name when the package under test imports it or the standard library's the
// generated code uses, else the last element of its path.
func defaultName(path string, plan *Plan) string {
	for _, imp := range plan.pkg.Imports() {
		if imp.Path() == path {
			return imp.Name()
		}
	}
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// importDecl is the import declaration of a new file.
func importDecl(im *imports, plan *Plan) string {
	var b strings.Builder
	b.WriteString("import (\n")
	for _, p := range slices.Sorted(maps.Keys(im.added)) {
		if name := im.names[p]; name != defaultName(p, plan) {
			b.WriteString(name + " ")
		}
		fmt.Fprintf(&b, "%q\n", p)
	}
	b.WriteString(")\n")
	return b.String()
}

// edits turn old into new, whose text from tail on was appended: the lines
// between the first and the last that old and new[:tail] differ in (the import
// declaration) replaced, and the rest inserted at the end. A text whose
// edits would not give new (old was not gofmt-formatted, and formatting
// changed more) is replaced whole.
func edits(old, new string, tail int) []Edit {
	oldL, headL := lines(old), lines(new[:tail])
	p := 0 // lines of the common prefix
	for p < len(oldL) && p < len(headL) && oldL[p] == headL[p] {
		p++
	}
	s := 0 // lines of the common suffix, after the prefix
	for p+s < len(oldL) && p+s < len(headL) && oldL[len(oldL)-1-s] == headL[len(headL)-1-s] {
		s++
	}
	start := len(strings.Join(oldL[:p], ""))
	end := len(old) - len(strings.Join(oldL[len(oldL)-s:], ""))
	var out []Edit
	if mid := strings.Join(headL[p:len(headL)-s], ""); mid != "" || end > start {
		out = append(out, Edit{start, end, mid})
	}
	if n := len(out); n > 0 && out[n-1].End == len(old) {
		out[n-1].Text += new[tail:]
	} else {
		out = append(out, Edit{len(old), len(old), new[tail:]})
	}
	if applyEdits(old, out) != new {
		return []Edit{{0, len(old), new}}
	}
	return out
}

// lines splits text after each "\n".
func lines(text string) []string {
	l := strings.SplitAfter(text, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

// applyEdits applies edits, in order and not overlapping, to text.
func applyEdits(text string, edits []Edit) string {
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		text = text[:e.Start] + e.Text + text[e.End:]
	}
	return text
}
