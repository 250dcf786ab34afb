package instrument

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/tools/go/packages"
)

// Package is a package with test files, as loaded: what the build needs to know.
type Package struct {
	ImportPath string
	Name       string
	Dir        string
	ModulePath string
	ModuleDir  string
	GoVersion  string   // the module's go line ("1.22"; "1.16" when go.mod has none)
	GoFiles    []string // non-test files (absolute), in build order
	TestFiles  []string // internal _test.go files
	XTestFiles []string // external (package name_test) _test.go files
	// IgnoredFiles are the package directory's Go files that the build
	// constraints leave out with these build flags (a //go:build integration file
	// without -tags integration): an edit to one (its constraint may have
	// changed) makes a new load.
	IgnoredFiles []string
	// Constrained are the fuzz targets of test files among IgnoredFiles: what
	// -tags would bring in. Their Constraint says why they are out.
	Constrained []Target
	Deps        []*Dep // dependencies inside the workspace's modules, to instrument
	Targets     []Target
	// TestMain is "", "internal" or "external": where the user's TestMain is.
	TestMain string
	// Errors are problems found while loading (parse errors, bad target shapes).
	Errors []error
	// Std: a standard library package, of GOROOT/src (std.go).
	Std bool
	// StdGOROOT is set for a standard library package whose GOROOT lies in the
	// module cache, where the go command refuses overlays: see goCommand.
	StdGOROOT string
	// ImportNames gives the package name of each import path the package and
	// its tests import (pruneTests).
	ImportNames map[string]string
}

// Dep is a non-test dependency package to instrument.
type Dep struct {
	ImportPath string
	Name       string
	Dir        string
	GoFiles    []string
	GoVersion  string // its module's go line
	// Module of a dependency outside the workspace (from the module cache, which
	// overlays may not replace): Build instruments a copy and points a replace
	// directive at it. Empty for packages of the workspace's modules.
	ModulePath, ModuleVersion, ModuleDir string
	// Bridge: the import path of the generated package through which the harness
	// reaches the counters of an internal package it may not import itself (see
	// bridge.go); empty when the harness imports the package directly.
	Bridge string
	// CopyOnly: a package of such a module that is not instrumented but must be
	// in its module's copy, since the replace directive sends every import of
	// the module there: one the harness cannot reach even through a bridge
	// (nested internal directories), or one the test binary links that is no
	// dependency of the package's own test (the external test package's
	// imports, and theirs, as go-ethereum's core/types test reaches
	// golang.org/x/sys/unix). It makes no copy of its own.
	CopyOnly bool
	// Cgo: a package of such a module with a file that imports "C". The C
	// compiler reads what the module holds outside the package's directory
	// (blst's #cgo CFLAGS: -I${SRCDIR}/../../src), so its module's copy holds
	// every file of the module that is not Go source or test data.
	Cgo bool
}

// Target is one `func FuzzXxx(f *testing.F)`.
type Target struct {
	Name     string
	File     string
	Line     int
	External bool // declared in the external test package
	// Constraint: of a target in a file the build constraints leave out
	// (Package.Constrained), the file's //go:build line, if it has one.
	Constraint string
}

// Loader loads packages and caches the results, because a load with
// golang.org/x/tools/go/packages takes up to seconds. A cached load is used
// only while what it was read from is as it was: the Go files in the
// directories of its packages (and the directory it was asked about, which may
// have had none: a test file deleted, then restored, as git stash does), and the
// go.mod, go.sum and go.work that decide its dependencies.
type Loader struct {
	Flags BuildFlags // build flags of the load (-tags decides which files are in); set before the first Load

	mu    sync.Mutex
	cache map[string]cachedLoad
}

type cachedLoad struct {
	pkgs  []*Package
	stamp string // loadStamp when loaded
}

// Load returns the packages matching patterns (relative to dir) that have test files.
func (l *Loader) Load(ctx context.Context, dir string, patterns ...string) ([]*Package, error) {
	key := dir + "\x00" + strings.Join(patterns, "\x00")
	l.mu.Lock()
	c, ok := l.cache[key]
	l.mu.Unlock()
	if ok && loadStamp(dir, c.pkgs) == c.stamp {
		return c.pkgs, nil
	}
	pkgs, err := load(ctx, dir, l.Flags, patterns)
	if err != nil {
		return nil, err
	}
	stamp := loadStamp(dir, pkgs)
	l.mu.Lock()
	if l.cache == nil {
		l.cache = map[string]cachedLoad{}
	}
	l.cache[key] = cachedLoad{pkgs, stamp}
	l.mu.Unlock()
	return pkgs, nil
}

// loadStamp sums up what a load of dir that found pkgs depends on, other than
// the contents of Go files (a build reads those anew): the names of the Go files
// in dir, in the packages' directories and in their workspace dependencies'
// directories, and the size and time of the module files and of the Go files
// the build constraints leave out (an edit may have changed their constraint).
func loadStamp(dir string, pkgs []*Package) string {
	dirs := map[string]bool{dir: true}
	modFiles := map[string]bool{}
	var ignored []string
	for _, p := range pkgs {
		dirs[p.Dir] = true
		ignored = append(ignored, p.IgnoredFiles...)
		if p.ModuleDir != "" {
			modFiles[filepath.Join(p.ModuleDir, "go.mod")] = true
			modFiles[filepath.Join(p.ModuleDir, "go.sum")] = true
		}
		for _, d := range p.Deps {
			if d.ModulePath == "" { // the workspace's: its files can change
				dirs[d.Dir] = true
			}
		}
	}
	for d := dir; ; d = filepath.Dir(d) { // a go.work above, or a module's files
		modFiles[filepath.Join(d, "go.work")] = true
		modFiles[filepath.Join(d, "go.mod")] = true
		if filepath.Dir(d) == d {
			break
		}
	}
	var b strings.Builder
	for _, d := range sortedKeys(dirs) {
		ents, _ := os.ReadDir(d)
		b.WriteString(d + "\x00")
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".go") {
				b.WriteString(e.Name() + "\x00")
			}
		}
	}
	for _, f := range append(sortedKeys(modFiles), ignored...) {
		if fi, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "%s %d %d\x00", f, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return b.String()
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func load(ctx context.Context, dir string, flags BuildFlags, patterns []string) ([]*Package, error) {
	cfg := &packages.Config{
		Context:    ctx,
		Dir:        dir,
		Mode:       packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps | packages.NeedModule,
		Tests:      true,
		BuildFlags: flags.Args(),
	}
	if err := flags.checkRace(ctx, dir); err != nil {
		return nil, err
	}
	roots, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %v", strings.Join(patterns, " "), err)
	}
	var listErrs []string
	var std stdRoot
	byID := map[string]*packages.Package{}
	packages.Visit(roots, nil, func(p *packages.Package) {
		byID[p.ID] = p
	})
	var out []*Package
	for _, p := range roots {
		if p.ID != p.PkgPath { // test variants and test mains are read through the plain package
			continue
		}
		for _, e := range p.Errors {
			listErrs = append(listErrs, e.Error())
		}
		mod, stdGOROOT, isStd := p.Module, "", false
		if mod == nil {
			mod, stdGOROOT = std.module(ctx, dir, p)
			isStd = mod != nil
		}
		if mod == nil || len(p.GoFiles) == 0 && len(p.OtherFiles) == 0 && p.Name == "" {
			continue
		}
		pkg := &Package{
			ImportPath: p.PkgPath,
			Name:       p.Name,
			ModulePath: mod.Path,
			ModuleDir:  mod.Dir,
			GoVersion:  moduleGoVersion(mod),
			Std:        isStd,
			StdGOROOT:  stdGOROOT,
			GoFiles:    p.GoFiles,
		}
		for _, f := range p.IgnoredFiles {
			if strings.HasSuffix(f, ".go") {
				pkg.IgnoredFiles = append(pkg.IgnoredFiles, f)
			}
		}
		if len(p.GoFiles) > 0 {
			pkg.Dir = filepath.Dir(p.GoFiles[0])
		}
		inPkg := map[string]bool{}
		for _, f := range p.GoFiles {
			inPkg[f] = true
		}
		tv := byID[p.PkgPath+" ["+p.PkgPath+".test]"]
		if tv != nil {
			for _, f := range tv.GoFiles {
				if !inPkg[f] {
					pkg.TestFiles = append(pkg.TestFiles, f)
				}
			}
			if pkg.Dir == "" && len(tv.GoFiles) > 0 {
				pkg.Dir = filepath.Dir(tv.GoFiles[0])
			}
			pkg.Deps = workspaceDeps(p.PkgPath, tv)
		} else {
			pkg.Deps = workspaceDeps(p.PkgPath, p)
		}
		xv := byID[p.PkgPath+"_test ["+p.PkgPath+".test]"]
		pkg.Deps = append(pkg.Deps, linkedAlong(pkg.Deps, tv, p, xv, byID[p.PkgPath+".test"])...)
		if xv != nil {
			pkg.XTestFiles = xv.GoFiles
			if pkg.Dir == "" && len(xv.GoFiles) > 0 { // a directory of external test files only
				pkg.Dir = filepath.Dir(xv.GoFiles[0])
			}
		}
		pkg.ImportNames = importNames(tv, xv, p)
		pkg.Constrained = constrainedTargets(pkg.IgnoredFiles)
		if len(pkg.TestFiles)+len(pkg.XTestFiles) == 0 {
			if len(pkg.Constrained) > 0 { // for saying why there is no target
				out = append(out, pkg)
			}
			continue
		}
		findTargets(pkg)
		out = append(out, pkg)
	}
	if len(out) == 0 && len(listErrs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(listErrs, "\n"))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ImportPath < out[j].ImportPath })
	return out, nil
}

// importNames maps the import paths of the given packages' imports (nil ones
// skipped) to their package names.
func importNames(ps ...*packages.Package) map[string]string {
	names := map[string]string{}
	for _, p := range ps {
		if p == nil {
			continue
		}
		for path, imp := range p.Imports {
			if imp.Name != "" {
				names[path] = imp.Name
			}
		}
	}
	return names
}

// workspaceDeps lists the transitive non-test imports of p that belong to a module
// (the standard library is not instrumented), can be imported from p's test, and are
// not main packages: the workspace's packages, and those of its dependencies (parsers
// wrapped in fuzz targets usually live in another module).
func workspaceDeps(self string, p *packages.Package) []*Dep {
	var deps []*Dep
	seen := map[string]bool{}
	var visit func(q *packages.Package)
	visit = func(q *packages.Package) {
		for _, imp := range q.Imports {
			if seen[imp.ID] {
				continue
			}
			seen[imp.ID] = true
			if imp.Module == nil || imp.PkgPath == self || imp.Name == "main" {
				continue
			}
			visit(imp)
			if len(imp.GoFiles) == 0 {
				continue
			}
			d := &Dep{ImportPath: imp.PkgPath, Name: imp.Name, Dir: filepath.Dir(imp.GoFiles[0]), GoFiles: imp.GoFiles, GoVersion: moduleGoVersion(imp.Module)}
			if !importable(self, imp.PkgPath) {
				d.Bridge = bridgePath(imp.PkgPath)
				if d.Bridge == "" || !importable(self, d.Bridge) {
					if imp.Module.Main {
						continue
					}
					d.Bridge, d.CopyOnly = "", true
				}
			}
			if !imp.Module.Main && !setModule(d, imp.Module) {
				continue
			}
			deps = append(deps, d)
		}
	}
	visit(p)
	sort.Slice(deps, func(i, j int) bool { return deps[i].ImportPath < deps[j].ImportPath })
	return deps
}

// setModule records in d, a package of m, a module that is not the workspace's,
// where m is; false if d is not in m's directory (vendored, or not where the
// module is), which is then left alone.
func setModule(d *Dep, m *packages.Module) bool {
	dir := m
	if dir.Replace != nil {
		dir = dir.Replace
	}
	if dir.Dir == "" || !strings.HasPrefix(d.Dir, dir.Dir) {
		return false
	}
	d.ModulePath, d.ModuleVersion, d.ModuleDir = m.Path, m.Version, dir.Dir
	d.Cgo = usesCgo(d.GoFiles)
	return true
}

// usesCgo says whether one of files imports "C".
func usesCgo(files []string) bool {
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil || !bytes.Contains(data, []byte(`"C"`)) {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, data, parser.ImportsOnly)
		if err != nil {
			continue
		}
		for _, imp := range f.Imports {
			if imp.Path.Value == `"C"` {
				return true
			}
		}
	}
	return false
}

// linkedAlong lists, as CopyOnly, the packages of modules other than the
// workspace's that the test binary built from roots (the package or its test
// variant, the external test package, the test main; nil ones skipped) links
// and deps does not hold: should a dependency module be copied to be
// instrumented, its copy must hold them too.
func linkedAlong(deps []*Dep, roots ...*packages.Package) []*Dep {
	seen := map[string]bool{}
	for _, d := range deps {
		seen[d.ImportPath] = true
	}
	var out []*Dep
	visited := map[string]bool{}
	var visit func(q *packages.Package)
	visit = func(q *packages.Package) {
		for _, imp := range q.Imports {
			if visited[imp.ID] {
				continue
			}
			visited[imp.ID] = true
			visit(imp)
			if imp.Module == nil || imp.Module.Main || len(imp.GoFiles) == 0 || seen[imp.PkgPath] {
				continue
			}
			seen[imp.PkgPath] = true
			d := &Dep{ImportPath: imp.PkgPath, Name: imp.Name, Dir: filepath.Dir(imp.GoFiles[0]), GoFiles: imp.GoFiles, GoVersion: moduleGoVersion(imp.Module), CopyOnly: true}
			if setModule(d, imp.Module) {
				out = append(out, d)
			}
		}
	}
	for _, r := range roots {
		if r != nil && !visited[r.ID] {
			visited[r.ID] = true
			visit(r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ImportPath < out[j].ImportPath })
	return out
}

// importable applies Go's internal-package rule for an import of path from importer.
func importable(importer, path string) bool {
	i := strings.LastIndex(path, "/internal/")
	switch {
	case i >= 0:
	case strings.HasSuffix(path, "/internal"):
		i = len(path) - len("/internal")
	case strings.HasPrefix(path, "internal/") || path == "internal":
		return false
	default:
		return true
	}
	parent := path[:i]
	return importer == parent || strings.HasPrefix(importer, parent+"/")
}

// findTargets parses the test files and records the fuzz targets and TestMain.
func findTargets(pkg *Package) {
	fset := token.NewFileSet()
	scan := func(files []string, external bool) {
		for _, name := range files {
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			if err != nil {
				pkg.Errors = append(pkg.Errors, err)
				continue
			}
			testingName := fileImportName(f, "testing")
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Recv != nil {
					continue
				}
				name := fd.Name.Name
				if name == "TestMain" {
					pkg.TestMain = map[bool]string{false: "internal", true: "external"}[external]
					continue
				}
				if !isFuzzName(name) {
					continue
				}
				line := fset.Position(fd.Pos()).Line
				if !takesTestingF(fd, testingName) {
					pkg.Errors = append(pkg.Errors, fmt.Errorf("%s:%d: %s has the wrong signature: a fuzz target must be func %s(f *testing.F)", fset.Position(fd.Pos()).Filename, line, name, name))
					continue
				}
				pkg.Targets = append(pkg.Targets, Target{Name: name, File: fset.Position(fd.Pos()).Filename, Line: line, External: external})
			}
		}
	}
	scan(pkg.TestFiles, false)
	scan(pkg.XTestFiles, true)
}

// constrainedTargets lists the fuzz targets of the test files among ignored
// (files the build constraints leave out), with each file's //go:build line.
func constrainedTargets(ignored []string) []Target {
	var out []Target
	fset := token.NewFileSet()
	for _, name := range ignored {
		if !strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			continue
		}
		goBuild := ""
		for _, g := range f.Comments {
			if g.Pos() >= f.Package {
				break
			}
			for _, c := range g.List {
				if constraint.IsGoBuild(c.Text) {
					goBuild = c.Text
				}
			}
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && IsFuzzTarget(f, fd) {
				out = append(out, Target{Name: fd.Name.Name, File: name, Line: fset.Position(fd.Pos()).Line, Constraint: goBuild})
			}
		}
	}
	return out
}

// IsFuzzTarget reports whether fd, a function declared in f, is a fuzz target
// as go test takes one: func FuzzXxx(f *testing.F), with go test's rule for the
// name (isFuzzName) and its shape (takesTestingF: testing imported under any
// name). It is the one definition: the loader and the daemon's code lenses
// (through the engine) use it.
func IsFuzzTarget(f *ast.File, fd *ast.FuncDecl) bool {
	return fd.Recv == nil && isFuzzName(fd.Name.Name) && takesTestingF(fd, fileImportName(f, "testing"))
}

// isFuzzName is go test's rule for a fuzz target's name: "Fuzz" alone or
// followed by a rune that is not lower case.
func isFuzzName(name string) bool {
	if !strings.HasPrefix(name, "Fuzz") {
		return false
	}
	if len(name) == 4 {
		return true
	}
	r, _ := utf8.DecodeRuneInString(name[4:])
	return !unicode.IsLower(r)
}

func takesTestingF(fd *ast.FuncDecl, testingName string) bool {
	ps := fd.Type.Params.List
	if len(ps) != 1 || len(ps[0].Names) > 1 || fd.Type.Results != nil || fd.Type.TypeParams != nil {
		return false
	}
	star, ok := ps[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == testingName && sel.Sel.Name == "F"
}

// fileImportName is the name under which f imports path ("" if it does not).
func fileImportName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		if strings.Trim(imp.Path.Value, `"`) != path {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return path[strings.LastIndex(path, "/")+1:]
	}
	return ""
}
