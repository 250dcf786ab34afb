package gentest

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/tools/go/packages"
)

// Files are the texts the editor has (open documents, by absolute path);
// other files are read from disk.
type Files map[string][]byte

func (fs Files) read(path string) ([]byte, error) {
	if data, ok := fs[path]; ok {
		return data, nil
	}
	return os.ReadFile(path)
}

// A Package is one type-checked package, without its tests.
type Package struct {
	Dir   string
	Fset  *token.FileSet
	Files []*ast.File
	Types *types.Package
	Info  *types.Info
}

const loadMode = packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedImports |
	packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo | packages.NeedModule

// A Loader type-checks the package of a file for the code action's offer,
// which the editor asks for at every move of the cursor. The first time it
// loads the package with go/packages (its imports' types come from export
// data, which go list has built); after an edit of the package's own files it
// type-checks their new text against the imports it has, so an offer costs a
// parse and a type check of one package, not a go list. A new import, a file
// added or removed, a module file or a Go file of another directory changed
// (Changed) makes it load again.
type Loader struct {
	ctx   context.Context // the loads run under it: a request that stops waiting leaves the load to the next
	loads sync.WaitGroup
	mu    sync.Mutex
	done  bool // Wait was called: no more loads
	flags []string
	pkgs  map[string]*cached // by directory
}

// NewLoader makes a loader whose loads stop when ctx ends.
func NewLoader(ctx context.Context) *Loader {
	return &Loader{ctx: ctx, pkgs: map[string]*cached{}}
}

// SetFlags sets the go build flags (-tags) of the loads.
func (l *Loader) SetFlags(flags []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if strings.Join(flags, "\x00") != strings.Join(l.flags, "\x00") {
		l.flags = flags
		l.pkgs = map[string]*cached{}
	}
}

// Changed tells the loader which files changed on disk: a Go file of another
// directory may be an import, whose types the cached packages hold.
func (l *Loader) Changed(paths []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for dir, c := range l.pkgs {
		for _, p := range paths {
			base := filepath.Base(p)
			if strings.HasSuffix(base, ".go") && filepath.Dir(p) != dir || base == "go.mod" || base == "go.sum" || base == "go.work" {
				c.stale = true
				break
			}
		}
	}
}

// maxCached bounds the packages a loader keeps: those of the files the user
// has visited last.
const maxCached = 8

// cached is the loader's state of one package directory.
type cached struct {
	ready chan struct{} // closed when the load is done; the fields below are set then
	err   error
	stamp string    // dirStamp when loaded
	stale bool      // (under Loader.mu) an import may have changed
	used  time.Time // (under Loader.mu) when last asked for

	files   []string // the package's Go files, without tests
	imports map[string]*types.Package
	version string // the module's go version, for the type checker
	cgo     bool   // its files are not what the type checker sees: no check of new text

	mu   sync.Mutex // guards keys and pkg
	keys []string   // what each file's text was at the last check
	pkg  *Package
}

// Check returns the type-checked package in dir, the open files' texts as
// files has them. It waits for a load at most until ctx ends.
func (l *Loader) Check(ctx context.Context, dir string, files Files) (*Package, error) {
	for range 2 {
		c := l.entry(dir, files)
		select {
		case <-c.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if c.err != nil {
			return nil, c.err
		}
		pkg, err := c.check(files)
		if !errors.Is(err, errNewImport) {
			return pkg, err
		}
		l.mu.Lock()
		c.stale = true
		l.mu.Unlock()
	}
	return nil, fmt.Errorf("%s: its imports keep changing", dir)
}

// entry is dir's cached state, a load started when there is none or it is out
// of date.
func (l *Loader) entry(dir string, files Files) *cached {
	stamp := dirStamp(dir)
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.pkgs[dir]
	if c != nil {
		c.used = time.Now()
		select {
		case <-c.ready:
			if !c.stale && c.stamp == stamp && (c.err == nil || l.ctx.Err() != nil) {
				return c
			}
		default:
			if !c.stale && c.stamp == stamp {
				return c // still loading
			}
		}
	}
	if len(l.pkgs) >= maxCached && c == nil {
		oldest := ""
		for d, o := range l.pkgs {
			if oldest == "" || o.used.Before(l.pkgs[oldest].used) {
				oldest = d
			}
		}
		delete(l.pkgs, oldest)
	}
	c = &cached{ready: make(chan struct{}), stamp: stamp, used: time.Now()}
	if l.done {
		c.err = errors.New("the loader is closed")
		close(c.ready)
		return c
	}
	l.pkgs[dir] = c
	flags := l.flags
	l.loads.Add(1)
	go func() {
		defer l.loads.Done()
		defer close(c.ready)
		c.err = c.load(l.ctx, dir, flags, files)
	}()
	return c
}

// Wait waits for the loads in progress, which end soon once the loader's
// context has (go/packages interrupts the go command's process group), and
// starts no more.
func (l *Loader) Wait() {
	l.mu.Lock()
	l.done = true
	l.mu.Unlock()
	l.loads.Wait()
}

func (c *cached) load(ctx context.Context, dir string, flags []string, files Files) error {
	cfg := &packages.Config{Context: ctx, Dir: dir, Mode: loadMode, BuildFlags: flags, Overlay: files}
	pkgs, err := packages.Load(cfg, ".")
	if err != nil {
		return err
	}
	if len(pkgs) != 1 || pkgs[0].Types == nil || pkgs[0].TypesInfo == nil {
		return fmt.Errorf("%s: no Go package", dir)
	}
	p := pkgs[0]
	if len(p.GoFiles) == 0 {
		return fmt.Errorf("%s: no Go files", dir)
	}
	c.files = p.GoFiles
	c.cgo = strings.Join(p.GoFiles, "\x00") != strings.Join(p.CompiledGoFiles, "\x00")
	if p.Module != nil && p.Module.GoVersion != "" {
		c.version = "go" + p.Module.GoVersion
	}
	c.imports = map[string]*types.Package{}
	for _, imp := range p.Types.Imports() {
		c.imports[imp.Path()] = imp
	}
	c.keys = fileKeys(c.files, files)
	c.pkg = &Package{Dir: dir, Fset: p.Fset, Files: p.Syntax, Types: p.Types, Info: p.TypesInfo}
	return nil
}

// errNewImport: the package's text imports what the cached load has no types of.
var errNewImport = errors.New("a new import")

// check type-checks the package's files as they are now, against the imports
// of the load; the same texts are checked once.
func (c *cached) check(files Files) (*Package, error) {
	keys := fileKeys(c.files, files)
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.Join(keys, "\x00") == strings.Join(c.keys, "\x00") {
		return c.pkg, nil
	}
	if c.cgo {
		return nil, errNewImport // only a load processes cgo
	}
	fset := token.NewFileSet()
	var syntax []*ast.File
	for _, name := range c.files {
		data, err := files.read(name)
		if err != nil {
			return nil, errNewImport // a file gone: load again
		}
		f, _ := parser.ParseFile(fset, name, data, parser.ParseComments|parser.SkipObjectResolution)
		if f == nil {
			return nil, fmt.Errorf("%s: cannot parse", name)
		}
		syntax = append(syntax, f)
	}
	missing := false
	conf := types.Config{
		GoVersion: c.version,
		Sizes:     types.SizesFor("gc", runtime.GOARCH),
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if p, ok := c.imports[path]; ok {
				return p, nil
			}
			missing = true
			return nil, errNewImport
		}),
		Error: func(error) {}, // go on: a file being edited has errors, the rest is still typed
	}
	info := newInfo()
	pkg, _ := conf.Check(c.pkg.Types.Path(), fset, syntax, info)
	if missing {
		return nil, errNewImport
	}
	c.keys = keys
	c.pkg = &Package{Dir: c.pkg.Dir, Fset: fset, Files: syntax, Types: pkg, Info: info}
	return c.pkg, nil
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

func newInfo() *types.Info {
	return &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
		Instances:  map[*ast.Ident]types.Instance{},
	}
}

// fileKeys says what each file's text is: an open file's text, a closed
// one's size and time.
func fileKeys(names []string, files Files) []string {
	keys := make([]string, len(names))
	for i, name := range names {
		if data, ok := files[name]; ok {
			keys[i] = "open\x00" + string(data)
		} else if fi, err := os.Stat(name); err == nil {
			keys[i] = fmt.Sprintf("disk\x00%d\x00%d", fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return keys
}

// dirStamp sums up what the package's file list and module depend on: the
// names of the Go files in dir, and the size and time of the go.mod and
// go.work files from dir up.
func dirStamp(dir string) string {
	var b strings.Builder
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
			b.WriteString(e.Name() + "\x00")
		}
	}
	for d := dir; ; d = filepath.Dir(d) {
		for _, name := range []string{"go.mod", "go.work"} {
			if fi, err := os.Stat(filepath.Join(d, name)); err == nil {
				fmt.Fprintf(&b, "%s %d %d\x00", filepath.Join(d, name), fi.Size(), fi.ModTime().UnixNano())
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return b.String()
}
