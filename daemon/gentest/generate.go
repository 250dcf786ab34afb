package gentest

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/tools/go/packages"
)

// InSignature reports whether offset in a Go file's text is in the
// signature of a function declaration (from `func` to the opening brace),
// where the action is offered: a parse, so that a code action request
// elsewhere never waits for types.
func InSignature(text []byte, offset int) bool {
	fset := token.NewFileSet()
	f, _ := parser.ParseFile(fset, "", text, parser.SkipObjectResolution)
	if f == nil {
		return false
	}
	return funcAt(fset.File(f.Pos()), f, offset) != nil
}

// funcAt is the declaration of f whose signature holds offset, or nil.
func funcAt(tf *token.File, f *ast.File, offset int) *ast.FuncDecl {
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil && tf.Offset(fd.Pos()) <= offset && offset <= tf.Offset(fd.Body.Lbrace) {
			return fd
		}
	}
	return nil
}

// FuncAt plans the fuzz test of the function declared in file whose
// signature holds offset. It returns nil and no error when there is no such
// function, and an error saying why when it cannot be fuzzed.
func FuncAt(pkg *Package, file string, offset int, files Files) (*Plan, error) {
	for _, f := range pkg.Files {
		tf := pkg.Fset.File(f.Pos())
		if tf == nil || filepath.Base(tf.Name()) != filepath.Base(file) {
			continue
		}
		if fd := funcAt(tf, f, offset); fd != nil {
			fn, ok := pkg.Info.Defs[fd.Name].(*types.Func)
			if !ok {
				return nil, nil
			}
			return NewPlan(fn, pkg.Types, takenNames(pkg.Dir, pkg.Types, files))
		}
	}
	return nil, nil
}

// takenNames are the names a new fuzz test cannot have: the package's and
// those its test files declare, in either test package (two FuzzParse would
// make `go test -fuzz=FuzzParse` match both).
func takenNames(dir string, pkg *types.Package, files Files) map[string]bool {
	taken := map[string]bool{}
	for _, name := range pkg.Scope().Names() {
		taken[name] = true
	}
	ents, _ := os.ReadDir(dir)
	fset := token.NewFileSet()
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		data, err := files.read(p)
		if err != nil {
			continue
		}
		f, _ := parser.ParseFile(fset, p, data, parser.SkipObjectResolution)
		if f == nil {
			continue
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				taken[fd.Name.Name] = true
			}
		}
	}
	return taken
}

// A Result is a generated fuzz test and where it goes.
type Result struct {
	Name   string // FuzzXxx
	Func   string // the function, as FuncName spells it
	Path   string // the test file
	Create bool   // Path does not exist: New is its text
	Old    string // the text Edits apply to ("" when created)
	New    string // the text after
	Edits  []Edit // insertions into Old, in order
	Seeds  int    // f.Add seeds from calls in the module (else one of zero values)
	Note   string // why the search for calls stopped short, if it did
}

// Generate writes the fuzz test of function name (as FuncName spells it) of
// the package of file, with the seeds of its calls in the module.
func Generate(ctx context.Context, flags []string, files Files, file, name string) (*Result, error) {
	dir := filepath.Dir(file)
	modDir, modPath, err := findModule(dir)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(modDir, dir)
	if err != nil {
		return nil, err
	}
	path := modPath
	if rel != "." {
		path += "/" + filepath.ToSlash(rel)
	}
	short, method := name, false
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		short, method = name[i+1:], true
	}
	dirs, cut := callerDirs(ctx, modDir, dir, path, short, method, files.read)
	patterns := make([]string, len(dirs))
	for i, d := range dirs {
		r, _ := filepath.Rel(modDir, d)
		patterns[i] = "./" + filepath.ToSlash(r)
	}
	cfg := &packages.Config{Context: ctx, Dir: modDir, Mode: loadMode, BuildFlags: flags, Overlay: files, Tests: true}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, err
	}
	var target *packages.Package
	for _, p := range pkgs {
		if p.ID == p.PkgPath && p.Types != nil && len(p.GoFiles) > 0 && samePath(filepath.Dir(p.GoFiles[0]), dir) {
			target = p
		}
	}
	if target == nil {
		return nil, fmt.Errorf("%s: no Go package", dir)
	}
	fn := lookupFunc(target.Types, name)
	if fn == nil {
		return nil, fmt.Errorf("no function %s in %s", name, target.PkgPath)
	}
	plan, err := NewPlan(fn, target.Types, takenNames(dir, target.Types, files))
	if err != nil {
		return nil, err
	}
	seeds := plan.callSeeds(pkgs)
	res := &Result{Name: plan.Name, Func: plan.Func, Seeds: len(seeds)}
	if cut {
		res.Note = fmt.Sprintf("the search for calls of %s stopped at %d directories or %d files", name, maxCallerDirs, maxScanFiles)
	}
	if len(seeds) == 0 {
		seeds = [][]any{nil}
	}
	if err := res.place(plan, seeds, file, files); err != nil {
		return nil, err
	}
	return res, nil
}

// lookupFunc finds "F" or "T.M" in pkg.
func lookupFunc(pkg *types.Package, name string) *types.Func {
	typ, fname, ok := strings.Cut(name, ".")
	if !ok {
		fn, _ := pkg.Scope().Lookup(name).(*types.Func)
		return fn
	}
	tn, _ := pkg.Scope().Lookup(typ).(*types.TypeName)
	if tn == nil {
		return nil
	}
	named, _ := types.Unalias(tn.Type()).(*types.Named)
	if named == nil {
		return nil
	}
	for m := range named.Methods() {
		if m.Name() == fname {
			return m
		}
	}
	return nil
}

// findModule is the directory and path of the module dir is in.
func findModule(dir string) (string, string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			if p := modfile.ModulePath(data); p != "" {
				return d, p, nil
			}
			return "", "", fmt.Errorf("%s: no module line", filepath.Join(d, "go.mod"))
		}
		if filepath.Dir(d) == d {
			return "", "", fmt.Errorf("%s is in no module", dir)
		}
	}
}

func samePath(a, b string) bool {
	if a == b {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}
