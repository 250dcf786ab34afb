package instrument

import (
	"context"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/mod/modfile"
	"golang.org/x/tools/go/packages"
)

// The standard library's own fuzz targets (archive/tar's FuzzReader, run in
// GOROOT/src/archive/tar as a Go contributor would) belong to no module. Such a
// package is taken as its own module: the runtime's overlay package goes in a
// directory below it, so it is a standard package too (those may import only
// standard ones), only the package's own frames are the user's, and its standard
// dependencies are not instrumented, as for any other target.

// stdRoot recognizes standard library packages among those one load returns.
type stdRoot struct {
	asked      bool
	goroot     string
	inModCache bool   // GOROOT lies in the module cache
	goLine     string // GOROOT/src/go.mod's go line
}

// module is the module a standard library package p stands in, and the GOROOT to
// build it with when that GOROOT is in the module cache; nil if p is not one.
func (s *stdRoot) module(ctx context.Context, dir string, p *packages.Package) (*packages.Module, string) {
	if !s.asked {
		s.asked = true
		cmd := exec.CommandContext(ctx, "go", "env", "GOROOT", "GOMODCACHE")
		cmd.Dir = dir
		out, err := cmd.Output()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err != nil || len(lines) != 2 || lines[0] == "" {
			return nil, ""
		}
		s.goroot = strings.TrimSpace(lines[0])
		mc := strings.TrimSpace(lines[1])
		s.inModCache = mc != "" && strings.HasPrefix(s.goroot, filepath.Clean(mc)+string(filepath.Separator))
		if data, err := os.ReadFile(filepath.Join(s.goroot, "src", "go.mod")); err == nil {
			if f, err := modfile.ParseLax("go.mod", data, nil); err == nil && f.Go != nil {
				s.goLine = f.Go.Version
			}
		}
	}
	if s.goroot == "" || len(p.GoFiles) == 0 {
		return nil, ""
	}
	pdir := filepath.Dir(p.GoFiles[0])
	if rel, err := filepath.Rel(filepath.Join(s.goroot, "src"), pdir); err != nil || rel != filepath.FromSlash(p.PkgPath) {
		return nil, ""
	}
	goroot := ""
	if s.inModCache {
		goroot = s.goroot
	}
	return &packages.Module{Path: p.PkgPath, Dir: pdir, GoVersion: s.goLine}, goroot
}

// goCommand points cmd, a go command building pkg, at the toolchain that can. A
// GOROOT in the module cache is a toolchain GOTOOLCHAIN fetched; the go command
// refuses overlays of files beneath the module cache, so that GOROOT's own go runs
// with a module cache of its own under cacheDir (the standard library needs no
// module) and GOTOOLCHAIN=local (the user's go line chose it already).
func (pkg *Package) goCommand(cmd *exec.Cmd, cacheDir string) {
	if pkg.StdGOROOT == "" {
		return
	}
	cmd.Path = filepath.Join(pkg.StdGOROOT, "bin", "go")
	cmd.Env = append(cmd.Environ(), "GOTOOLCHAIN=local", "GOMODCACHE="+filepath.Join(cacheDir, "gomodcache"))
}

// stdRole is what a standard library package under test is to the process
// that fuzzes it.
type stdRole int

const (
	// stdPlain: instrumented as any package.
	stdPlain stdRole = iota
	// stdMachinery: testing or the fuzzing runtime (what the runtime's sources
	// import) link it, and their own code, the comparison hooks' recorder
	// among it, calls it, on other goroutines too: its counters stay (what
	// testing runs after each input is the same every time), its comparison
	// hooks go (the recorder would run inside itself, and races).
	stdMachinery
	// stdRuntime: the Go runtime is built from it (go list -deps runtime). Its
	// code runs for the runtime itself, the garbage collector and the scheduler,
	// before any package is initialized: counters there would say what the
	// runtime did, not the input, and hooks would allocate where the runtime may
	// not. Only its test files are instrumented, without hooks; go test -fuzz
	// leaves it uninstrumented too (the compiler does for every package
	// compiled as the runtime).
	stdRuntime
)

// stdRoles caches, per go command and runtime sources, the standard library
// packages of each role: the packages the Go runtime is built from, and those
// testing and the fuzzing runtime link.
var stdRoles sync.Map // string → *stdRoleSets

type stdRoleSets struct {
	once               sync.Once
	runtime, machinery map[string]bool
	err                error
}

// roleOf says what pkg, a standard library package, is to the process fuzzing
// it; runtime holds the fuzzing runtime's sources (BuildOptions.Runtime).
func roleOf(ctx context.Context, pkg *Package, runtime fs.FS, cacheDir string) (stdRole, error) {
	if !pkg.Std {
		return stdPlain, nil
	}
	imports, err := runtimeImports(runtime)
	if err != nil {
		return stdPlain, err
	}
	// GOROOT/src/<import path>, the toolchain's own
	key := strings.TrimSuffix(pkg.Dir, filepath.FromSlash(pkg.ImportPath)) + "\x00" + strings.Join(imports, " ")
	v, _ := stdRoles.LoadOrStore(key, &stdRoleSets{})
	sets := v.(*stdRoleSets)
	sets.once.Do(func() {
		if sets.runtime, sets.err = goListDeps(ctx, pkg, cacheDir, "runtime"); sets.err == nil {
			sets.machinery, sets.err = goListDeps(ctx, pkg, cacheDir, append([]string{"testing"}, imports...)...)
		}
	})
	switch {
	case sets.err != nil:
		stdRoles.Delete(key) // a cancelled build is no answer for the next
		return stdPlain, sets.err
	case sets.runtime[pkg.ImportPath]:
		return stdRuntime, nil
	case sets.machinery[pkg.ImportPath]:
		return stdMachinery, nil
	}
	return stdPlain, nil
}

// runtimeImports lists the packages the runtime's sources import, as the
// build copies them (overlayRuntime).
func runtimeImports(runtime fs.FS) ([]string, error) {
	set := map[string]bool{}
	entries, err := fs.ReadDir(runtime, ".")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !runtimeSource(e.Name()) {
			continue
		}
		data, err := fs.ReadFile(runtime, e.Name())
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(token.NewFileSet(), e.Name(), data, parser.ImportsOnly)
		if err != nil {
			return nil, err
		}
		for _, imp := range f.Imports {
			if p, err := strconv.Unquote(imp.Path.Value); err == nil && p != "unsafe" {
				set[p] = true
			}
		}
	}
	imports := make([]string, 0, len(set))
	for p := range set {
		imports = append(imports, p)
	}
	sort.Strings(imports)
	return imports, nil
}

// goListDeps is the set of packages patterns depend on (themselves included),
// as pkg's go command lists them.
func goListDeps(ctx context.Context, pkg *Package, cacheDir string, patterns ...string) (map[string]bool, error) {
	cmd := exec.CommandContext(ctx, "go", append([]string{"list", "-deps"}, patterns...)...)
	cmd.Dir = pkg.Dir
	pkg.goCommand(cmd, cacheDir)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return nil, fmt.Errorf("go list -deps %s: %w", strings.Join(patterns, " "), err)
	}
	set := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		set[p] = true
	}
	return set, nil
}
